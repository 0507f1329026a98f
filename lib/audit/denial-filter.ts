/**
 * The filter of every denial query (the page, the API, the CLI, the exports, the summary and the histogram share it),
 * the sort orders the explorer offers, and their keyset cursors.
 */
import { unindexedMatch } from './denial-search';
import { and, eq, gt, gte, inArray, isNotNull, isNull, lt, lte, or, sql, type AnyColumn, type SQL, type SQLWrapper } from 'drizzle-orm';
import type { AnySQLiteColumn } from 'drizzle-orm/sqlite-core';
import { permissionDenials } from '@/db/schema';
import { AppError } from '@/lib/errors';
import type { DenialSortKey, SortOrder } from './denial-vocabulary';

export { DENIAL_SORT_KEYS, SORT_ORDERS, type DenialSortKey, type SortOrder } from './denial-vocabulary';

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
   * (lib/audit/denial-facets.ts: a case difference or a prefix). When given, they replace the raw value; empty matches nothing.
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

/** The rule-source filter: exact when it names a rule (has a colon), else the family by an index-friendly range. */
export function ruleSourceCondition(value: string, column: SQLWrapper = permissionDenials.ruleSource): SQL {
  if (value.includes(':')) return sql`${column} = ${value}`;
  // ';' is the character after ':' so [value:, value;) is exactly the values starting with "value:".
  return sql`(${column} = ${value} OR (${column} >= ${`${value}:`} AND ${column} < ${`${value};`}))`;
}

/**
 * How a database writes a rule-source family (`policy`: `policy` and every `policy:*`). SQLite's is the byte range
 * above; PostgreSQL compares text in the database's collation, where that range is not the prefix (lib/audit/pg-denials.ts).
 */
export type FamilyCondition = (value: string, column: SQLWrapper) => SQL;

/**
 * The columns the attribute filters apply to: the audit table's, or the daily counts' (same names, same meaning), on
 * SQLite (db/schema.ts) or PostgreSQL (db/pg/schema.ts): the conditions below are plain SQL both databases read alike.
 */
export interface AttributeColumns {
  agentName: AnyColumn;
  toolName: AnyColumn;
  userRole: AnyColumn;
  ruleSource: AnyColumn;
}

/** The columns of permission_denials a filter reads. */
export interface DenialColumns extends AttributeColumns {
  id: AnyColumn;
  timestamp: AnyColumn;
}

/** What differs between the databases in a filter's WHERE: the table, the free text and the rule-source family. */
export interface FilterDialect {
  cols: DenialColumns;
  text(q: string): SQL;
  family: FamilyCondition;
}

/** `column IN (values)`, where an empty list matches nothing. */
export function anyOf(column: SQLWrapper, values: string[]): SQL {
  return values.length ? inArray(column as AnySQLiteColumn, values) : sql`0 = 1`;
}

/**
 * One attribute's condition: the resolved values when there are (agentIn...), else the raw value exactly. `wrap` puts
 * a unary + on the column where the caller keeps SQLite off its index.
 */
export function attributeCondition(column: AnyColumn, exact: string | undefined, resolved: string[] | undefined, wrap = false): SQL | undefined {
  const col: SQLWrapper = wrap ? sql`+${column}` : column;
  if (resolved !== undefined) return anyOf(col, resolved);
  if (exact !== undefined) return sql`${col} = ${exact}`;
  return undefined;
}

/** The rule-source condition: the resolved exact values, else the raw value (exact or family). */
export function ruleCondition(column: AnyColumn, f: DenialMatch, wrap = false, family: FamilyCondition = ruleSourceCondition): SQL | undefined {
  const col: SQLWrapper = wrap ? sql`+${column}` : column;
  if (f.ruleSourceIn !== undefined) return anyOf(col, f.ruleSourceIn);
  if (f.ruleSource !== undefined) return family(f.ruleSource, wrap ? sql`+${column}` : column);
  return undefined;
}

/** The filters on a denial's attributes (agent, tool, role, rule source): everything but the window and the text. */
export function attributeConditions(f: DenialMatch, cols: AttributeColumns = permissionDenials, wrap = false, family: FamilyCondition = ruleSourceCondition): SQL[] {
  const c: (SQL | undefined)[] = [
    attributeCondition(cols.agentName, f.agent, f.agentIn, wrap),
    attributeCondition(cols.toolName, f.tool, f.toolIn, wrap),
    f.role !== undefined ? (wrap ? sql`+${cols.userRole} = ${f.role}` : eq(cols.userRole, f.role)) : undefined,
    ruleCondition(cols.ruleSource, f, wrap, family),
  ];
  return c.filter((x): x is SQL => x !== undefined);
}

/** `text` as a LIKE pattern that matches it literally anywhere (%, _ and the escape character itself escaped). */
export function likeContains(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * The free text as the index holds it. The arguments are indexed as the detail panel shows them (one `"key": value`
 * per line, see db/migrations/0006_denial_search.sql), so a line or several copied from the panel are found: the
 * surrounding blanks, the trailing comma and the indentation of the following lines are the panel's layout, not text.
 */
export function normaliseSearchText(q: string): string {
  return q
    .replace(/\r\n?/g, '\n')
    .replace(/,?[ \t]*\n\s*/g, '\n')
    .trim()
    .replace(/,+$/, '')
    .trim();
}

/** The trigram index needs three characters; shorter text is a LIKE over the same columns, bounded by the other filters. */
export const MIN_INDEXED_TEXT = 3;

/** An FTS5 query matching `text` literally (one quoted string: with the trigram tokenizer, a case-insensitive substring). */
export function ftsPhrase(text: string): string {
  return `"${text.replace(/"/g, '""')}"`;
}

/**
 * Free text over the reason, the tool, the agent, the HTTP path and the arguments' keys and values, case-insensitive,
 * anywhere in any one of them. Three characters or more are looked up in the FTS5 trigram index (under 50 ms for the
 * first page of 1,000,000 rows, bench/denial-queries.ts); one or two characters scan with LIKE the rows the other
 * filters leave.
 */
/** The text the index is asked for, or undefined when there is none or it is too short for the index. */
export function indexedText(q: string | undefined): string | undefined {
  if (q === undefined) return undefined;
  const text = normaliseSearchText(q);
  return [...text].length >= MIN_INDEXED_TEXT ? text : undefined;
}

export function textCondition(q: string): SQL {
  const text = normaliseSearchText(q);
  const t = permissionDenials;
  if ([...text].length >= MIN_INDEXED_TEXT) {
    // The index up to where it goes, and the few rows written since (lib/audit/denial-search.ts): always exact.
    return sql`(${t.id} IN (SELECT rowid FROM permission_denials_search WHERE permission_denials_search MATCH ${ftsPhrase(text)}) OR ${unindexedMatch(likeContains(text))})`;
  }
  const pattern = likeContains(text);
  return sql`(${t.reason} LIKE ${pattern} ESCAPE '\\' OR ${t.toolName} LIKE ${pattern} ESCAPE '\\' OR ${t.agentName} LIKE ${pattern} ESCAPE '\\'
    OR ${t.httpPath} LIKE ${pattern} ESCAPE '\\' OR ${t.argumentsJson} LIKE ${pattern} ESCAPE '\\')`;
}

/** The free text as it was before the index: LIKE over the reason and the stored arguments (the bench's "before"). */
export function textConditionLike(q: string): SQL {
  const pattern = likeContains(q);
  return sql`(${permissionDenials.reason} LIKE ${pattern} ESCAPE '\\' OR ${permissionDenials.argumentsJson} LIKE ${pattern} ESCAPE '\\')`;
}

/** A blank or whitespace-only text filters nothing. */
export function hasText(q: string | undefined): q is string {
  return q !== undefined && normaliseSearchText(q) !== '';
}

/** SQLite's filter: the audit table of db/schema.ts, the FTS5 index for the text, the byte range for a family. */
export const SQLITE_FILTER: FilterDialect = { cols: permissionDenials, text: textCondition, family: ruleSourceCondition };

/**
 * The WHERE of a filter. A numeric cursor (the `id` sort, the API's historical cursor) is applied here too. `dialect`:
 * the database's table and text search (SQLite's by default; PostgreSQL's in lib/audit/pg-denials.ts).
 */
export function denialWhere(f: Omit<DenialFilter, 'limit'>, dialect: FilterDialect = SQLITE_FILTER): SQL | undefined {
  const t = dialect.cols;
  const c: SQL[] = [];
  if (f.since !== undefined) c.push(gte(t.timestamp, nowSeconds() - f.since));
  if (f.from !== undefined) c.push(gte(t.timestamp, f.from));
  if (f.to !== undefined) c.push(lte(t.timestamp, f.to));
  if (f.untilId !== undefined) c.push(lte(t.id, f.untilId));
  c.push(...attributeConditions(f, t, false, dialect.family));
  if (hasText(f.q)) c.push(dialect.text(f.q));
  if (f.cursor !== undefined && (f.sort ?? 'id') === 'id' && /^\d{1,18}$/.test(f.cursor)) {
    c.push(f.order === 'asc' ? gt(t.id, Number(f.cursor)) : lt(t.id, Number(f.cursor)));
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

/**
 * Rows strictly after `p` in the order (sort order, id order). SQLite sorts NULL before every value, so ascending puts
 * NULLs first and descending puts them last; only agent_name of the sortable columns can be NULL. `cols`: the sort
 * value and the id as the database compares them (PostgreSQL's in lib/audit/pg-denials.ts, in byte order).
 */
export function afterPosition(
  sort: Exclude<DenialSortKey, 'id'>,
  order: SortOrder,
  p: KeysetPosition,
  cols: { value: SQLWrapper; id: SQLWrapper } = { value: SORT_COLUMNS[sort], id: permissionDenials.id },
): SQL {
  const col = cols.value;
  const id = cols.id;
  if (order === 'desc') {
    if (p.value === null) return and(isNull(col), lt(id, p.id))!;
    const after = or(lt(col, p.value), and(eq(col, p.value), lt(id, p.id)))!;
    return sort === 'agent_name' ? or(after, isNull(col))! : after;
  }
  if (p.value === null) return or(and(isNull(col), gt(id, p.id)), isNotNull(col))!;
  return or(gt(col, p.value), and(eq(col, p.value), gt(id, p.id)))!;
}
