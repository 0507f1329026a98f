/**
 * The denial queries: what the explorer, the API and the CLI read from permission_denials. The one writer is the
 * recorder (recorder.ts); the table is append-only by design, by the database (triggers) and by its hash chain.
 */
import { unindexedMatch } from './denial-search';
import { and, asc, desc, eq, gt, gte, inArray, lt, lte, sql, type SQL } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { permissionDenials, type DenialRow, type NewDenialRow } from '@/db/schema';
import {
  afterPosition,
  denialWhere,
  ftsPhrase,
  likeContains,
  indexedText,
  nowSeconds,
  pageOf,
  pagePosition,
  resolveWindow,
  SORT_COLUMNS,
  type DenialFilter,
  type DenialMatch,
  type SortOrder,
} from './denial-filter';
import { denialFacet, resolveFilter, type Facet, type FacetField } from './denial-facets';
import { denialHistogram, summarizeDenials, type AggregateOptions, type DenialHistogram, type DenialSummary } from './denial-stats';

export {
  DENIAL_SORT_KEYS,
  SORT_ORDERS,
  denialWhere,
  likeContains,
  nowSeconds,
  resolveWindow,
  ruleSourceCondition,
  type DenialFilter,
  type DenialMatch,
  type DenialSortKey,
  type SortOrder,
} from './denial-filter';

/** The queries of permission_denials (the rows are written by the recorder, recorder.ts). */
export class DenialStore {
  constructor(private readonly db: Db) {}

  get(id: number): DenialRow | undefined {
    return this.db.select().from(permissionDenials).where(eq(permissionDenials.id, id)).get();
  }

  /**
   * One page of a filter. The default order is newest first by id: every filter index ends in the rowid, so the page
   * is an index walk. Other sorts page by a keyset cursor (sort value, id), which stays correct while denials arrive.
   */
  query(raw: DenialFilter): { rows: DenialRow[]; nextCursor: string | null } {
    const filter = resolveFilter(this.db, raw);
    const limit = filter.limit ?? 100;
    const sort = filter.sort ?? 'id';
    const order = filter.order ?? 'desc';
    const direction = order === 'asc' ? asc : desc;
    let where = denialWhere(filter);
    // With indexed free text in id order, the index drives the page (textPage): the same filter without the text.
    let rest = indexedText(filter.q) !== undefined ? denialWhere({ ...filter, q: undefined }) : undefined;
    if (sort === 'id' && (filter.since !== undefined || filter.from !== undefined || filter.to !== undefined)) {
      const span = this.idSpan(resolveWindow(filter));
      if (!span) return { rows: [], nextCursor: null };
      where = and(where, gte(permissionDenials.id, span.lo), lte(permissionDenials.id, span.hi));
      rest = and(rest, gte(permissionDenials.id, span.lo), lte(permissionDenials.id, span.hi));
    }
    const position = pagePosition(filter.cursor, sort, order);
    if (position && sort !== 'id') where = and(where, afterPosition(sort, order, position));
    const orderBy = sort === 'id' ? [direction(permissionDenials.id)] : [direction(SORT_COLUMNS[sort]), direction(permissionDenials.id)];
    const rows =
      sort === 'id' && indexedText(filter.q) !== undefined
        ? this.textPage(rest, filter.q!, order, limit + 1)
        : this.db
            .select()
            .from(permissionDenials)
            .where(where)
            .orderBy(...orderBy)
            .limit(limit + 1)
            .all();
    return pageOf(rows, limit, sort, order);
  }

  /**
   * A page in id order of a filter with indexed free text: the FTS5 index drives, in rowid order, and the walk stops at
   * the page's last row. `id IN (matches)` would first collect every match (30,000 rowids for "batch_runner" at
   * 1,000,000 rows: 30 to 50 ms); walking the index takes 1 to 3 ms for the first page (bench/denial-queries.ts).
   */
  private textPage(rest: SQL | undefined, q: string, order: SortOrder, limit: number): DenialRow[] {
    const t = permissionDenials;
    const text = indexedText(q)!;
    const dir = order === 'asc' ? sql`ASC` : sql`DESC`;
    const indexed = this.db
      .all<{ id: number }>(
        sql`SELECT ${t.id} AS id FROM permission_denials_search CROSS JOIN ${t} ON ${t.id} = permission_denials_search.rowid
            WHERE permission_denials_search MATCH ${ftsPhrase(text)}${rest ? sql` AND ${rest}` : sql``}
            ORDER BY permission_denials_search.rowid ${dir} LIMIT ${limit}`,
      )
      .map((r) => r.id);
    // The rows written since the index last moved (a second's worth in a running server): scanned, then merged.
    const recent = this.db
      .all<{ id: number }>(sql`SELECT ${t.id} AS id FROM ${t} WHERE ${unindexedMatch(likeContains(text))}${rest ? sql` AND ${rest}` : sql``} ORDER BY ${t.id} ${dir} LIMIT ${limit}`)
      .map((r) => r.id);
    const ids = [...new Set([...indexed, ...recent])].sort((a, b) => (order === 'asc' ? a - b : b - a)).slice(0, limit);
    if (ids.length === 0) return [];
    return this.db
      .select()
      .from(t)
      .where(inArray(t.id, ids))
      .orderBy(order === 'asc' ? asc(t.id) : desc(t.id))
      .all();
  }

  /**
   * The ids of the rows in a time window, from the timestamp index alone. Newest first is an id order and a window is
   * a timestamp range, and no index gives both: without these bounds a window that ends in the past, or a rare filter
   * inside a window, makes SQLite walk ids from the newest row down through everything outside the window. With them
   * the walk starts and stops at the window (bench/denial-queries.ts: "custom range", "text ..., last 7 d").
   */
  private idSpan(window: Pick<DenialFilter, 'from' | 'to'>): { lo: number; hi: number } | undefined {
    const t = permissionDenials;
    const r = this.db
      .select({ lo: sql<number | null>`min(${t.id})`, hi: sql<number | null>`max(${t.id})` })
      .from(t)
      .where(and(window.from === undefined ? undefined : gte(t.timestamp, window.from), window.to === undefined ? undefined : lte(t.timestamp, window.to)))
      .get();
    return r && r.lo !== null && r.hi !== null ? { lo: r.lo, hi: r.hi } : undefined;
  }

  /**
   * Every matching row, newest first, in pages: for exports that must not hold the whole result in memory. The window
   * is fixed when the export starts, and rows recorded after that are not included: the export is one consistent cut.
   */
  *iterate(filter: Omit<DenialFilter, 'limit' | 'sort' | 'order'>, pageSize = 1_000): Generator<DenialRow> {
    const t = permissionDenials;
    const fixed = resolveFilter(this.db, resolveWindow(filter));
    const newest = this.db.select({ id: sql<number | null>`max(${t.id})` }).from(t).get()?.id ?? 0;
    // The window's id bounds once for the whole export, not once per page (bench: a 30-day window is ~600 pages).
    const windowed = fixed.from !== undefined || fixed.to !== undefined;
    const span = windowed ? this.idSpan(fixed) : { lo: 0, hi: newest };
    if (!span) return;
    const text = indexedText(fixed.q);
    const where = and(denialWhere({ ...fixed, cursor: undefined, q: text === undefined ? fixed.q : undefined }), gte(t.id, span.lo));
    let before = Math.min(filter.cursor !== undefined && /^\d{1,18}$/.test(filter.cursor) ? Number(filter.cursor) : Number.POSITIVE_INFINITY, span.hi + 1, newest + 1);
    for (;;) {
      const rows =
        text !== undefined
          ? this.textPage(and(where, lt(t.id, before)), fixed.q!, 'desc', pageSize)
          : this.db.select().from(t).where(and(where, lt(t.id, before))).orderBy(desc(t.id)).limit(pageSize).all();
      yield* rows;
      const last = rows[rows.length - 1];
      if (rows.length < pageSize || !last) return;
      before = last.id;
    }
  }


  count(filter: DenialMatch = {}): number {
    const r = this.db
      .select({ n: sql<number>`count(*)` })
      .from(permissionDenials)
      .where(denialWhere(resolveFilter(this.db, filter)))
      .get();
    return r?.n ?? 0;
  }

  /** Total and top agents, rule sources and tools of a filter (the explorer's summary cards). */
  summary(filter: DenialMatch, options: AggregateOptions & { top?: number } = {}): DenialSummary {
    return summarizeDenials(this.db, resolveFilter(this.db, filter), options);
  }

  /** The values of an agent, tool or rule-source filter in the window of `filter`, with counts (the explorer's suggestions). */
  facet(field: FacetField, filter: DenialMatch, options: { prefix?: string; limit?: number } = {}): Facet {
    return denialFacet(this.db, field, filter, options);
  }

  /**
   * The explorer's live tail: how many denials of a filter were recorded after `afterId` (a short rowid range), and
   * the newest of them. The window is the filter's, so a relative window takes the new rows and a past one none.
   */
  newerThan(filter: DenialMatch, afterId: number): { count: number; newestId: number | null } {
    const r = this.db
      .select({ n: sql<number>`count(*)`, newest: sql<number | null>`max(${permissionDenials.id})` })
      .from(permissionDenials)
      .where(and(gt(permissionDenials.id, afterId), denialWhere(resolveFilter(this.db, filter))))
      .get();
    return { count: r?.n ?? 0, newestId: r?.newest ?? null };
  }

  /** The newest denial id. */
  newestId(): number {
    return this.db.select({ id: sql<number | null>`max(${permissionDenials.id})` }).from(permissionDenials).get()?.id ?? 0;
  }

  /** Denials over time for a filter, stacked by rule-source family (the explorer's chart). */
  histogram(filter: DenialMatch, options: AggregateOptions = {}): DenialHistogram {
    return denialHistogram(this.db, resolveFilter(this.db, filter), options);
  }
}
