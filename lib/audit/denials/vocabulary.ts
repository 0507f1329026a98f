import type { BuiltInSource } from '@/lib/permissions/types';

/**
 * The denial explorer's vocabulary, shared by the server and the browser: pure data, no database, no Node APIs, so a
 * client component can import it without pulling the store into the bundle.
 */

/**
 * The columns a denial list can be sorted by: each has an index whose implicit rowid suffix makes the sort and its
 * keyset cursor an index walk (bench/denial-queries.ts measures them).
 */
export const DENIAL_SORT_KEYS = ['id', 'timestamp', 'agent_name', 'tool_name', 'rule_source'] as const;
export type DenialSortKey = (typeof DENIAL_SORT_KEYS)[number];
export const SORT_ORDERS = ['asc', 'desc'] as const;
export type SortOrder = (typeof SORT_ORDERS)[number];

/** The family of a rule source: the part before the first ':' (`policy:no-pii-export` -> `policy`). */
export function ruleSourceFamily(ruleSource: string): string {
  const i = ruleSource.indexOf(':');
  return i < 0 ? ruleSource : ruleSource.slice(0, i);
}

export interface FamilyInfo {
  /** the chart's fill (the hue of the family's badge, app/globals.css) */
  fill: string;
  meaning: string;
}

/**
 * Rule-source families: the order the charts stack them in (the explorer's, the report's), the colour they fill them
 * with, and a sentence that says what each one means. Every built-in source has one (the type says so); `auth` is the
 * refused sign-in. Colour is never the only sign: every place that uses one also writes the family's name.
 */
export const FAMILIES: Readonly<Record<BuiltInSource | 'auth', FamilyInfo>> = {
  rbac: { fill: '#c2564e', meaning: 'the role is below what the endpoint requires, or an agent token acted as another agent' },
  agent_allowlist: { fill: '#4a70c2', meaning: 'the agent is unknown, or the tool is not in its allowlist' },
  flag: { fill: '#cf9530', meaning: 'a feature flag that guards the tool or path is off' },
  policy: { fill: '#8560c0', meaning: 'an operator rule in the YAML policy' },
  hitl: { fill: '#3c8c69', meaning: 'a person rejected the call, or its approval expired' },
  hook: { fill: '#6d7f3a', meaning: 'a before_tool_call hook blocked the call' },
  default: { fill: '#8b95a3', meaning: 'no rule matched the tool call, so it was denied (fail closed)' },
  csrf: { fill: '#5f6b7b', meaning: 'a state-changing request came from another origin' },
  mcp_pin: { fill: '#b0603a', meaning: 'the MCP tool\'s definition changed since it was reviewed (or it is new and held), and no operator accepted it yet' },
  auth: { fill: '#b0b8c4', meaning: 'a sign-in was refused' },
};

const PLUGIN_FAMILY: FamilyInfo = { fill: '#a8957a', meaning: 'a rule source added by a plugin' };

export const FAMILY_ORDER = Object.keys(FAMILIES);

export function familyInfo(family: string): FamilyInfo {
  return Object.hasOwn(FAMILIES, family) ? FAMILIES[family as keyof typeof FAMILIES] : PLUGIN_FAMILY;
}

/** Families in stacking order: the known ones first in a fixed order, then any others by name. */
export function orderFamilies(families: readonly string[]): string[] {
  const known = FAMILY_ORDER.filter((f) => families.includes(f));
  const others = families.filter((f) => !Object.hasOwn(FAMILIES, f)).sort();
  return [...known, ...others];
}
