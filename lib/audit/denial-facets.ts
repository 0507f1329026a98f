/**
 * The values of the agent, tool and rule-source filters: what a typed value stands for (a case difference or a prefix)
 * and what the explorer suggests, with counts (facets).
 *
 * A filter value is resolved against the values that exist, read from the daily counts (a few thousand rows, whatever
 * the size of the audit table) and the denials recorded after them; the query then keeps its indexes (`IN` of exact
 * values). The rule is the same for the list, the exports, the summary and the histogram, so they agree:
 *
 * - `agent`, `tool`: the values equal to it ignoring case; when there is none, the values starting with it (ignoring
 *   case). A trailing `*` asks for the prefix whatever exists (`agent=trainer*`).
 * - `rule_source` with a colon: the same, on exact rule sources (`policy:no-` finds every `policy:no-*`).
 * - `rule_source` without a colon: the family ignoring case (`POLICY` is `policy` and every `policy:*`); when there is no
 *   such family, the rule sources starting with it (`pol`, `hitl:d`).
 */
import { gt, sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { denialDailyCounts, permissionDenials } from '@/db/schema';
import { catchUpIfBehind, rollupPosition } from './denial-rollup';
import type { DenialMatch } from './denial-filter';
import { summarizeDenials, type DenialSummary } from './denial-stats';
import { ruleSourceFamily } from './denial-vocabulary';

export const FACET_FIELDS = ['agent', 'tool', 'rule_source'] as const;
export type FacetField = (typeof FACET_FIELDS)[number];

const COLUMNS = {
  agent: { rollup: denialDailyCounts.agentName, table: permissionDenials.agentName },
  tool: { rollup: denialDailyCounts.toolName, table: permissionDenials.toolName },
  rule_source: { rollup: denialDailyCounts.ruleSource, table: permissionDenials.ruleSource },
} as const;

/** Every value of a field that occurs in the trail (agents without a name left out). */
export function knownValues(db: Db, field: FacetField): string[] {
  catchUpIfBehind(db);
  const { highWater } = rollupPosition(db);
  const c = COLUMNS[field];
  const counted = db.all<{ v: string }>(sql`SELECT DISTINCT ${c.rollup} AS v FROM ${denialDailyCounts}`);
  const recent = db.all<{ v: string | null }>(sql`SELECT DISTINCT ${c.table} AS v FROM ${permissionDenials} WHERE ${gt(permissionDenials.id, highWater)}`);
  return distinctValues([...counted, ...recent].map((r) => r.v));
}

/** The values a field takes, once each, in code-unit order: no missing or empty one (an agent without a name). */
export function distinctValues(values: Iterable<string | null>): string[] {
  const out = new Set<string>();
  for (const v of values) if (v) out.add(v);
  return [...out].sort();
}

const lower = (s: string) => s.toLowerCase();

/** The exact values a typed filter value stands for, among `values` (see the rules above). */
export function resolveValue(field: FacetField, input: string, values: readonly string[]): string[] {
  const forcedPrefix = input.length > 1 && input.endsWith('*');
  const text = lower(forcedPrefix ? input.slice(0, -1) : input);
  const prefixed = () => values.filter((v) => lower(v).startsWith(text));
  if (forcedPrefix) return prefixed();
  if (field === 'rule_source' && !text.includes(':')) {
    const family = values.filter((v) => lower(v) === text || lower(v).startsWith(`${text}:`));
    return family.length ? family : prefixed();
  }
  const exact = values.filter((v) => lower(v) === text);
  return exact.length ? exact : prefixed();
}

/** A filter with its agent, tool and rule-source values resolved to exact values (agentIn, toolIn, ruleSourceIn). */
export function resolveFilter<F extends DenialMatch>(db: Db, filter: F): F {
  return resolveFilterWith(filter, (field) => knownValues(db, field));
}

/** The fields whose typed value a filter still has to resolve (what resolveFilterWith will ask `valuesOf` for). */
export function fieldsToResolve(filter: DenialMatch): FacetField[] {
  const out: FacetField[] = [];
  if (filter.agent !== undefined && filter.agentIn === undefined) out.push('agent');
  if (filter.tool !== undefined && filter.toolIn === undefined) out.push('tool');
  if (filter.ruleSource !== undefined && filter.ruleSourceIn === undefined) out.push('rule_source');
  return out;
}

/**
 * resolveFilter against the values `valuesOf` gives for a field (every value in the trail, as knownValues): the rule
 * without the database, so that a store that reads the values asynchronously (PostgreSQL) resolves alike.
 */
export function resolveFilterWith<F extends DenialMatch>(filter: F, valuesOf: (field: FacetField) => readonly string[]): F {
  const out: F = { ...filter };
  if (filter.agent !== undefined && filter.agentIn === undefined) {
    out.agentIn = resolveValue('agent', filter.agent, valuesOf('agent'));
    delete out.agent;
  }
  if (filter.tool !== undefined && filter.toolIn === undefined) {
    out.toolIn = resolveValue('tool', filter.tool, valuesOf('tool'));
    delete out.tool;
  }
  if (filter.ruleSource !== undefined && filter.ruleSourceIn === undefined) {
    out.ruleSourceIn = resolveValue('rule_source', filter.ruleSource, valuesOf('rule_source'));
    delete out.ruleSource;
  }
  return out;
}

export interface FacetValue {
  value: string;
  count: number;
  /** a rule-source family (`policy`: every `policy:*`), beside the exact rule sources */
  family?: boolean;
}

export interface Facet {
  field: FacetField;
  prefix: string;
  /** matching values in the window, most denials first */
  values: FacetValue[];
  /** how many values matched before the limit */
  total: number;
}

/**
 * The values of `field` in the denials of `filter` (the field's own filter left out, so the alternatives show), those
 * starting with `prefix` ignoring case, each with its count. Exact and fast with the daily counts, like the summary.
 */
export function denialFacet(db: Db, field: FacetField, filter: DenialMatch, options: FacetOptions = {}): Facet {
  const s = summarizeDenials(db, resolveFilter(db, facetFilter(field, filter)), { top: Number.POSITIVE_INFINITY, now: options.now });
  return facetOf(field, s, options);
}

export interface FacetOptions {
  prefix?: string;
  limit?: number;
  now?: number;
}

/** The filter a facet counts: `filter` without the field's own filter, so that the alternatives show. */
export function facetFilter(field: FacetField, filter: DenialMatch): DenialMatch {
  const rest: DenialMatch = { ...filter };
  if (field === 'agent') delete rest.agent, delete rest.agentIn;
  if (field === 'tool') delete rest.tool, delete rest.toolIn;
  if (field === 'rule_source') delete rest.ruleSource, delete rest.ruleSourceIn;
  return rest;
}

/** A facet from the full summary (every value, `top` unlimited) of its facetFilter. */
export function facetOf(field: FacetField, s: DenialSummary, options: Pick<FacetOptions, 'prefix' | 'limit'> = {}): Facet {
  const prefix = options.prefix ?? '';
  const p = lower(prefix);
  let values: FacetValue[];
  if (field === 'agent') values = s.topAgents.filter((x): x is { value: string; count: number } => x.value !== null && x.value !== '');
  else if (field === 'tool') values = s.topTools;
  else {
    const rules = s.topRuleSources;
    // A family is offered beside its rules when it gathers more than one value or is not itself a value.
    const families = s.families.filter((f) => rules.some((r) => r.value !== f.value && ruleSourceFamily(r.value) === f.value)).map((f) => ({ ...f, family: true }));
    values = [...families, ...rules];
  }
  const matching = values
    .filter((v) => lower(v.value).startsWith(p))
    .sort((a, b) => b.count - a.count || Number(b.family ?? false) - Number(a.family ?? false) || a.value.localeCompare(b.value));
  return { field, prefix, values: matching.slice(0, options.limit ?? 20), total: matching.length };
}
