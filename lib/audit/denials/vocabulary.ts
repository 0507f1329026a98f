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
