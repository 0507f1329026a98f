/**
 * The filter of every denial query (the page, the API, the CLI, the exports, the summary and the histogram share it),
 * the sort orders the explorer offers, and their keyset cursors.
 */
import { and, eq, gt, gte, isNotNull, isNull, lt, lte, or, sql, type SQL } from 'drizzle-orm';
import type { AnySQLiteColumn } from 'drizzle-orm/sqlite-core';
import { permissionDenials } from '@/db/schema';
import type { DenialSortKey, SortOrder } from './denial-vocabulary';

export { DENIAL_SORT_KEYS, SORT_ORDERS, type DenialSortKey, type SortOrder } from './denial-vocabulary';

export const nowSeconds = (): number => Date.now() / 1000;

export interface DenialFilter {
  /** seconds back from now */
  since?: number;
  /** absolute window, seconds since the epoch */
  from?: number;
  to?: number;
  agent?: string;
  tool?: string;
  role?: string;
  /** exact value, or a family: `policy` matches `policy` and every `policy:*` */
  ruleSource?: string;
  /** free text, case-insensitive (ASCII), anywhere in the reason or the stored (redacted) arguments */
  q?: string;
  /** default `id` (newest first): the order in which denials were recorded */
  sort?: DenialSortKey;
  /** default `desc` */
  order?: SortOrder;
  /** the next cursor of the previous page: an id for the `id` sort, an opaque keyset token for the others */
  cursor?: string;
  limit?: number;
}

/** The filter without its paging: what counts, summaries, histograms and exports take. */
export type DenialMatch = Omit<DenialFilter, 'limit' | 'cursor' | 'sort' | 'order'>;

/**
 * `since` turned into an absolute `from`, once. A long export or the several queries of one page must agree on the
 * window: re-reading the clock for every page would let the lower bound creep forward and drop the oldest rows.
 */
export function resolveWindow<F extends DenialMatch>(filter: F, now = nowSeconds()): F {
  if (filter.since === undefined) return filter;
  const { since, ...rest } = filter;
  const from = Math.max(now - since, filter.from ?? Number.NEGATIVE_INFINITY);
  return { ...rest, from } as F;
}

/** The rule-source filter: exact when it names a rule (has a colon), else the family by an index-friendly range. */
export function ruleSourceCondition(value: string, column: AnySQLiteColumn | SQL = permissionDenials.ruleSource): SQL {
  if (value.includes(':')) return sql`${column} = ${value}`;
  // ';' is the character after ':' so [value:, value;) is exactly the values starting with "value:".
  return sql`(${column} = ${value} OR (${column} >= ${`${value}:`} AND ${column} < ${`${value};`}))`;
}

/** The columns the attribute filters apply to: the audit table's, or the daily counts' (same names, same meaning). */
export interface AttributeColumns {
  agentName: AnySQLiteColumn;
  toolName: AnySQLiteColumn;
  userRole: AnySQLiteColumn;
  ruleSource: AnySQLiteColumn;
}

/** The filters on a denial's attributes (agent, tool, role, rule source): everything but the window and the text. */
export function attributeConditions(f: DenialMatch, cols: AttributeColumns = permissionDenials): SQL[] {
  const c: SQL[] = [];
  if (f.agent !== undefined) c.push(eq(cols.agentName, f.agent));
  if (f.tool !== undefined) c.push(eq(cols.toolName, f.tool));
  if (f.role !== undefined) c.push(eq(cols.userRole, f.role));
  if (f.ruleSource !== undefined) c.push(ruleSourceCondition(f.ruleSource, cols.ruleSource));
  return c;
}

/** `text` as a LIKE pattern that matches it literally anywhere (%, _ and the escape character itself escaped). */
export function likeContains(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * Free text over the reason and the arguments. A substring LIKE cannot use an index, so it is a scan of the rows the
 * other filters leave; the time window bounds it (measured in bench/denial-queries.ts). LIKE is case-insensitive for
 * ASCII, which is what an auditor typing "PROD" or "prod" expects.
 */
export function textCondition(q: string): SQL {
  const pattern = likeContains(q);
  return sql`(${permissionDenials.reason} LIKE ${pattern} ESCAPE '\\' OR ${permissionDenials.argumentsJson} LIKE ${pattern} ESCAPE '\\')`;
}

/** The WHERE of a filter. A numeric cursor (the `id` sort, the API's historical cursor) is applied here too. */
export function denialWhere(f: Omit<DenialFilter, 'limit'>): SQL | undefined {
  const c: SQL[] = [];
  if (f.since !== undefined) c.push(gte(permissionDenials.timestamp, nowSeconds() - f.since));
  if (f.from !== undefined) c.push(gte(permissionDenials.timestamp, f.from));
  if (f.to !== undefined) c.push(lte(permissionDenials.timestamp, f.to));
  c.push(...attributeConditions(f));
  if (f.q !== undefined && f.q !== '') c.push(textCondition(f.q));
  if (f.cursor !== undefined && (f.sort ?? 'id') === 'id' && /^\d{1,18}$/.test(f.cursor)) {
    c.push(f.order === 'asc' ? gt(permissionDenials.id, Number(f.cursor)) : lt(permissionDenials.id, Number(f.cursor)));
  }
  return c.length ? and(...c) : undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Keyset cursors for the non-id sorts
// ---------------------------------------------------------------------------------------------------------------

export const SORT_COLUMNS = {
  id: permissionDenials.id,
  timestamp: permissionDenials.timestamp,
  agent_name: permissionDenials.agentName,
  tool_name: permissionDenials.toolName,
  rule_source: permissionDenials.ruleSource,
} as const;

export type KeyValue = string | number | null;

export interface KeysetPosition {
  value: KeyValue;
  id: number;
}

/**
 * A keyset cursor names the last row of a page by its sort value and id, so the next page starts right after it even
 * while new denials arrive (an offset would shift and repeat rows). It also names its sort, so a cursor cannot be
 * replayed against another order.
 */
export function encodeCursor(sort: DenialSortKey, order: SortOrder, position: KeysetPosition): string {
  if (sort === 'id') return String(position.id);
  return Buffer.from(JSON.stringify([sort, order, position.value, position.id]), 'utf8').toString('base64url');
}

/** The position a cursor names, or a message saying why it is not a cursor of this sort. */
export function decodeCursor(cursor: string, sort: DenialSortKey, order: SortOrder): KeysetPosition | string {
  if (sort === 'id') {
    return /^\d{1,18}$/.test(cursor) ? { value: Number(cursor), id: Number(cursor) } : 'cursor is the next_cursor of the previous page';
  }
  if (!/^[A-Za-z0-9_-]{8,1400}$/.test(cursor)) return 'cursor is the next_cursor of the previous page';
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return 'cursor is the next_cursor of the previous page';
  }
  if (!Array.isArray(parsed) || parsed.length !== 4) return 'cursor is the next_cursor of the previous page';
  const [s, o, value, id] = parsed as unknown[];
  if (s !== sort || o !== order) return `this cursor belongs to another sort order (${String(s)} ${String(o)})`;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) return 'cursor is the next_cursor of the previous page';
  const expected = sort === 'timestamp' ? 'number' : 'string';
  if (!(typeof value === expected || (value === null && sort === 'agent_name'))) return 'cursor is the next_cursor of the previous page';
  return { value: value as KeyValue, id };
}

/**
 * Rows strictly after `p` in the order (sort order, id order). SQLite sorts NULL before every value, so ascending puts
 * NULLs first and descending puts them last; only agent_name of the sortable columns can be NULL.
 */
export function afterPosition(sort: Exclude<DenialSortKey, 'id'>, order: SortOrder, p: KeysetPosition): SQL {
  const col = SORT_COLUMNS[sort];
  const id = permissionDenials.id;
  if (order === 'desc') {
    if (p.value === null) return and(isNull(col), lt(id, p.id))!;
    const after = or(lt(col, p.value), and(eq(col, p.value), lt(id, p.id)))!;
    return sort === 'agent_name' ? or(after, isNull(col))! : after;
  }
  if (p.value === null) return or(and(isNull(col), gt(id, p.id)), isNotNull(col))!;
  return or(gt(col, p.value), and(eq(col, p.value), gt(id, p.id)))!;
}
