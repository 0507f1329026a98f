/**
 * The filter of every denial query (the page, the API, the CLI, the exports, the summary and the histogram share it),
 * the sort orders the explorer offers, and their keyset cursors. Written once for both databases: what differs (a
 * prefix, byte order, the free text) is asked of the dialect port (db/dialect.ts).
 */
import { and, or, sql, type SQL } from 'drizzle-orm';
import type { SqlDatabase } from '@/db/dialect';
import { AppError } from '@/lib/errors';
import { D, hasText, textCondition } from './search';
import type { DenialSortKey, SortOrder } from './vocabulary';

export { DENIAL_SORT_KEYS, SORT_ORDERS, type DenialSortKey, type SortOrder } from './vocabulary';
export { likeContains } from '@/db/dialect';

export const nowSeconds = (): number => Date.now() / 1000;

export interface DenialFilter {
  /** seconds back from now */
  since?: number;
  /** absolute window, seconds since the epoch */
  from?: number;
  to?: number;
  /**
   * The newest denial id a view showed when it was loaded: rows recorded after it are left out, so a link, an export or
   * a count taken later reproduces exactly the rows that view showed (the explorer sends it with a pinned `to`).
   */
  untilId?: number;
  agent?: string;
  tool?: string;
  role?: string;
  /** exact value, or a family: `policy` matches `policy` and every `policy:*` */
  ruleSource?: string;
  /**
   * The exact values an agent, tool or rule-source filter stands for, once resolved against the values that exist
   * (lib/audit/denials/facets.ts: a case difference or a prefix). When given, they replace the raw value; empty matches nothing.
   */
  agentIn?: string[];
  toolIn?: string[];
  ruleSourceIn?: string[];
  /** free text, case-insensitive, anywhere in the reason, tool, agent, HTTP path or the stored (redacted) arguments */
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

/**
 * The rule-source filter: exact when it names a rule (has a colon), else the family (`policy`: `policy` and every
 * `policy:*`), as a prefix the database reads from the column's index where it can.
 */
export function ruleSourceCondition(db: SqlDatabase, value: string, column: SQL = D.ruleSource): SQL {
  if (value.includes(':')) return sql`${column} = ${value}`;
  return sql`(${column} = ${value} OR ${db.startsWith(column, `${value}:`)})`;
}

/**
 * The columns the attribute filters apply to: the audit table's, or the daily counts' (same names, same meaning),
 * qualified by their table.
 */
export interface AttributeColumns {
  agentName: SQL;
  toolName: SQL;
  userRole: SQL;
  ruleSource: SQL;
}

/** `column IN (values)`, where an empty list matches nothing. */
export function anyOf(column: SQL, values: readonly string[]): SQL {
  if (values.length === 0) return sql`0 = 1`;
  return sql`${column} IN (${sql.join(
    values.map((v) => sql`${v}`),
    sql`, `,
  )})`;
}

/** One attribute's condition: the resolved values when there are (agentIn...), else the raw value exactly. */
function attributeCondition(column: SQL, exact: string | undefined, resolved: string[] | undefined): SQL | undefined {
  if (resolved !== undefined) return anyOf(column, resolved);
  if (exact !== undefined) return sql`${column} = ${exact}`;
  return undefined;
}

/**
 * The filters on a denial's attributes (agent, tool, role, rule source): everything but the window and the text.
 * `unindexed`: the columns kept off their indexes (db.unindexed), where a time or id range must drive the query.
 */
export function attributeConditions(db: SqlDatabase, f: DenialMatch, cols: AttributeColumns = D, unindexed = false): SQL[] {
  const col = (c: SQL): SQL => (unindexed ? db.unindexed(c) : c);
  const rule = col(cols.ruleSource);
  const c: (SQL | undefined)[] = [
    attributeCondition(col(cols.agentName), f.agent, f.agentIn),
    attributeCondition(col(cols.toolName), f.tool, f.toolIn),
    f.role !== undefined ? sql`${col(cols.userRole)} = ${f.role}` : undefined,
    f.ruleSourceIn !== undefined ? anyOf(rule, f.ruleSourceIn) : f.ruleSource !== undefined ? ruleSourceCondition(db, f.ruleSource, rule) : undefined,
  ];
  return c.filter((x): x is SQL => x !== undefined);
}

/** The WHERE of a filter. A numeric cursor (the `id` sort, the API's historical cursor) is applied here too. */
export function denialWhere(db: SqlDatabase, f: Omit<DenialFilter, 'limit'>): SQL | undefined {
  const c: SQL[] = [];
  if (f.since !== undefined) c.push(sql`${D.timestamp} >= ${nowSeconds() - f.since}`);
  if (f.from !== undefined) c.push(sql`${D.timestamp} >= ${f.from}`);
  if (f.to !== undefined) c.push(sql`${D.timestamp} <= ${f.to}`);
  if (f.untilId !== undefined) c.push(sql`${D.id} <= ${f.untilId}`);
  c.push(...attributeConditions(db, f));
  if (hasText(f.q)) c.push(textCondition(db, f.q));
  if (f.cursor !== undefined && (f.sort ?? 'id') === 'id' && /^\d{1,18}$/.test(f.cursor)) {
    c.push(f.order === 'asc' ? sql`${D.id} > ${Number(f.cursor)}` : sql`${D.id} < ${Number(f.cursor)}`);
  }
  return c.length ? and(...c) : undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Keyset cursors for the non-id sorts
// ---------------------------------------------------------------------------------------------------------------

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
 * The keyset position of a page's cursor for a non-id sort; undefined for the id sort (denialWhere applies that one)
 * and when there is no cursor. A cursor that is not the next_cursor of this sort and order is a bad request.
 */
export function pagePosition(cursor: string | undefined, sort: DenialSortKey, order: SortOrder): KeysetPosition | undefined {
  if (cursor === undefined) return undefined;
  const position = decodeCursor(cursor, sort, order);
  if (typeof position === 'string') throw new AppError('BAD_REQUEST', position);
  return sort === 'id' ? undefined : position;
}

/** The sortable values of a denial row (both databases' rows have them under these names). */
export interface SortableRow {
  id: number;
  timestamp: number;
  agentName: string | null;
  toolName: string;
  ruleSource: string;
}

/**
 * A page from the `limit + 1` rows a query read: the extra row only says that there is a next page, whose cursor names
 * the page's last row. Mutates and returns `rows`.
 */
export function pageOf<R extends SortableRow>(rows: R[], limit: number, sort: DenialSortKey, order: SortOrder): { rows: R[]; nextCursor: string | null } {
  const more = rows.length > limit;
  if (more) rows.pop();
  const last = rows[rows.length - 1];
  if (!more || !last) return { rows, nextCursor: null };
  const value = sort === 'id' ? last.id : sort === 'timestamp' ? last.timestamp : sort === 'agent_name' ? last.agentName : sort === 'tool_name' ? last.toolName : last.ruleSource;
  return { rows, nextCursor: encodeCursor(sort, order, { value, id: last.id }) };
}

/** A sort key's value as both databases compare it: text in byte order. */
export function sortValue(db: SqlDatabase, sort: Exclude<DenialSortKey, 'id'>): SQL {
  if (sort === 'timestamp') return D.timestamp;
  return db.bytewise(sort === 'agent_name' ? D.agentName : sort === 'tool_name' ? D.toolName : D.ruleSource);
}

/** ORDER BY of a page: NULL first when ascending and last when descending (SQLite's own order), then the id. */
export function pageOrder(db: SqlDatabase, sort: DenialSortKey, order: SortOrder): SQL {
  const dir = order === 'asc' ? sql`ASC` : sql`DESC`;
  if (sort === 'id') return sql`${D.id} ${dir}`;
  return sql`${sortValue(db, sort)} ${order === 'asc' ? sql`ASC NULLS FIRST` : sql`DESC NULLS LAST`}, ${D.id} ${dir}`;
}

/**
 * Rows strictly after `p` in the order (sort order, id order): NULL sorts before every value, so ascending puts NULLs
 * first and descending puts them last; only agent_name of the sortable columns can be NULL.
 */
export function afterPosition(db: SqlDatabase, sort: Exclude<DenialSortKey, 'id'>, order: SortOrder, p: KeysetPosition): SQL {
  const col = sortValue(db, sort);
  const id = D.id;
  if (order === 'desc') {
    if (p.value === null) return sql`(${col} IS NULL AND ${id} < ${p.id})`;
    const after = sql`(${col} < ${p.value} OR (${col} = ${p.value} AND ${id} < ${p.id}))`;
    return sort === 'agent_name' ? or(after, sql`${col} IS NULL`)! : after;
  }
  if (p.value === null) return sql`((${col} IS NULL AND ${id} > ${p.id}) OR ${col} IS NOT NULL)`;
  return sql`(${col} > ${p.value} OR (${col} = ${p.value} AND ${id} > ${p.id}))`;
}
