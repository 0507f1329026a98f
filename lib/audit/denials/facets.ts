/**
 * The values of the agent, tool and rule-source filters: what a typed value stands for (a case difference or a prefix)
 * and what the explorer suggests, with counts (facets).
 *
 * A filter value is resolved against the values that exist, read from the field's index one distinct value at a time
 * (a loose index scan: an index probe per value, whatever the size of the audit table); the query then keeps its
 * indexes (`IN` of exact values). The rule is the same for the list, the exports, the summary and the histogram, so
 * they agree:
 *
 * - `agent`, `tool`: the values equal to it ignoring case; when there is none, the values starting with it (ignoring
 *   case). A trailing `*` asks for the prefix whatever exists (`agent=trainer*`).
 * - `rule_source` with a colon: the same, on exact rule sources (`policy:no-` finds every `policy:no-*`).
 * - `rule_source` without a colon: the family ignoring case (`POLICY` is `policy` and every `policy:*`); when there is no
 *   such family, the rule sources starting with it (`pol`, `hitl:d`).
 *
 * Anyone with a token can add names to the trail (every denial of an unknown agent is one), so the values are read as a
 * stream, never held: the memory of a resolution is the values it keeps, at most MAX_RESOLVED_VALUES; a typed value
 * that stands for more is refused (400), not turned into an IN list of any length.
 */
import { sql } from 'drizzle-orm';
import type { TxRunner, TxSteps } from '@/db/dialect';
import { AppError } from '@/lib/errors';
import type { DenialMatch } from './filter';
import { ruleSourceFamily } from './vocabulary';

export const FACET_FIELDS = ['agent', 'tool', 'rule_source'] as const;
export type FacetField = (typeof FACET_FIELDS)[number];

/** The column of each field (the same name in the audit table and the daily counts). */
const COLUMNS: Record<FacetField, string> = { agent: 'agent_name', tool: 'tool_name', rule_source: 'rule_source' };

/** Distinct values read per statement when a filter value is resolved (a page is all it holds at once). */
const VALUES_PAGE = 5_000;

/**
 * The most exact values one typed filter value may stand for (a prefix of a thousand agents is a search, not a filter):
 * what a resolution keeps in memory, and the longest IN list a query gets (SQLite takes 32,766 parameters at most).
 */
export const MAX_RESOLVED_VALUES = 1_000;

const NOUNS: Record<FacetField, string> = { agent: 'agents', tool: 'tools', rule_source: 'rule sources' };

const lower = (s: string) => s.toLowerCase();

/**
 * What a typed filter value stands for (see the rules above), from the values of its field read one at a time, each as
 * often as it comes: only the matching ones are kept, at most `max` of each kind.
 */
export class FilterResolution {
  private readonly text: string;
  private readonly forcedPrefix: boolean;
  private readonly byFamily: boolean;
  /** the values the rule prefers: equal ignoring case, or of the family */
  private readonly preferred = new Set<string>();
  /** the values starting with the text, used when none is preferred */
  private readonly prefixed = new Set<string>();
  private preferredOverflow = false;
  private prefixedOverflow = false;

  constructor(
    readonly field: FacetField,
    readonly input: string,
    private readonly max = MAX_RESOLVED_VALUES,
  ) {
    this.forcedPrefix = input.length > 1 && input.endsWith('*');
    this.text = lower(this.forcedPrefix ? input.slice(0, -1) : input);
    this.byFamily = field === 'rule_source' && !this.text.includes(':');
  }

  add(value: string | null): void {
    // an agent without a name never matches
    if (!value) return;
    const v = lower(value);
    if (!v.startsWith(this.text)) return;
    if (!this.forcedPrefix && (v === this.text || (this.byFamily && v.startsWith(`${this.text}:`)))) {
      if (!this.preferred.has(value)) {
        if (this.preferred.size < this.max) this.preferred.add(value);
        else this.preferredOverflow = true;
      }
      return;
    }
    if (this.preferred.size > 0 || this.prefixed.has(value)) return;
    if (this.prefixed.size < this.max) this.prefixed.add(value);
    else this.prefixedOverflow = true;
  }

  /** The exact values, in code-unit order; 400 when the typed value stands for more than `max`. */
  result(): string[] {
    const [values, overflow] = this.preferred.size > 0 || this.preferredOverflow ? [this.preferred, this.preferredOverflow] : [this.prefixed, this.prefixedOverflow];
    if (overflow) {
      throw new AppError(
        'BAD_REQUEST',
        `The ${this.field} filter "${this.input}" stands for more than ${this.max.toLocaleString('en-US')} ${NOUNS[this.field]} in the audit trail; type more of the name, or the whole name.`,
      );
    }
    return [...values].sort();
  }
}

/**
 * What a typed value of a field stands for, among every distinct value of the field in the trail, read from its index
 * in pages of VALUES_PAGE: one index probe per distinct value (a loose index scan), not a read of every row, and never
 * every value at once (anyone with a token can add names).
 */
function* resolveIn(tx: TxRunner, field: FacetField, input: string): TxSteps<string[]> {
  const column = sql.identifier(COLUMNS[field]);
  const resolution = new FilterResolution(field, input);
  let after: string | undefined;
  for (;;) {
    const first = after === undefined ? sql`SELECT min(${column}) FROM permission_denials` : sql`SELECT min(${column}) FROM permission_denials WHERE ${column} > ${after}`;
    const rows = yield* tx.all<{ v: string }>(
      sql`WITH RECURSIVE v(x) AS (
            SELECT (${first})
            UNION ALL
            SELECT (SELECT min(${column}) FROM permission_denials WHERE ${column} > v.x) FROM v WHERE v.x IS NOT NULL
          ) SELECT x AS v FROM v WHERE x IS NOT NULL LIMIT ${VALUES_PAGE}`,
    );
    for (const r of rows) resolution.add(r.v);
    if (rows.length < VALUES_PAGE) return resolution.result();
    after = rows[rows.length - 1]!.v;
  }
}

/** The exact values a typed filter value stands for, among `values` (see the rules above); 400 beyond `max`. */
export function resolveValue(field: FacetField, input: string, values: Iterable<string | null>, max = MAX_RESOLVED_VALUES): string[] {
  const resolution = new FilterResolution(field, input, max);
  for (const v of values) resolution.add(v);
  return resolution.result();
}

/** The keys of a field in a filter: its value as typed, and the exact values that replace it once resolved. */
const KEYS = { agent: ['agent', 'agentIn'], tool: ['tool', 'toolIn'], rule_source: ['ruleSource', 'ruleSourceIn'] } as const;

/** A filter with its agent, tool and rule-source values resolved to exact values (agentIn, toolIn, ruleSourceIn). */
export function* resolveFilter<F extends DenialMatch>(tx: TxRunner, filter: F): TxSteps<F> {
  const out: F = { ...filter };
  for (const field of FACET_FIELDS) {
    const [typed, exact] = KEYS[field];
    const input = filter[typed];
    if (input === undefined || filter[exact] !== undefined) continue;
    out[exact] = yield* resolveIn(tx, field, input);
    delete out[typed];
  }
  return out;
}

export interface FacetValue {
  value: string;
  count: number;
  /** a rule-source family (`policy`: every `policy:*`), beside the exact rule sources */
  family?: boolean;
}

export type Facet = ReturnType<typeof facetOf>;

export interface FacetOptions {
  prefix?: string;
  limit?: number;
  now?: number;
}

/** The filter a facet counts: `filter` without the field's own filter, so that the alternatives show. */
export function facetFilter(field: FacetField, filter: DenialMatch): DenialMatch {
  const rest: DenialMatch = { ...filter };
  for (const key of KEYS[field]) delete rest[key];
  return rest;
}

/** What a facet reads of a summary (DenialSummary, lib/audit/denials/stats.ts): its ranked values. */
export interface RankedValues {
  readonly topAgents: readonly { value: string | null; count: number }[];
  readonly topTools: readonly FacetValue[];
  readonly topRuleSources: readonly FacetValue[];
  readonly families: readonly FacetValue[];
}

/** A facet from the full summary (every value, `top` unlimited) of its facetFilter. */
export function facetOf(field: FacetField, s: RankedValues, options: Pick<FacetOptions, 'prefix' | 'limit'> = {}) {
  const prefix = options.prefix ?? '';
  const p = lower(prefix);
  let values: readonly FacetValue[];
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
  // the matching values in the window, most denials first; `total`: how many matched before the limit
  return { field, prefix, values: matching.slice(0, options.limit ?? 20), total: matching.length };
}
