/**
 * The denial queries: what the explorer, the API, the exports and the CLI read from permission_denials, on SQLite and
 * PostgreSQL alike through the dialect port (db/dialect.ts). The one writer is the recorder (lib/audit/trail/recorder.ts);
 * the table is append-only by design, by the database (triggers) and by its hash chain.
 *
 * What the databases do differently is the port's: the free text (SQLite's FTS5 trigram index and the scan of the rows
 * after it, PostgreSQL's ILIKE), the daily counts SQLite keeps ahead for summaries and charts (rollup.ts), byte-order
 * text for the sorts and their keyset cursors, and a prefix for a rule-source family.
 */
import { and, sql, type SQL } from 'drizzle-orm';
import type { SqlDatabase, TxRunner, TxSteps } from '@/db/dialect';
import { columnsAs } from '@/db/columns';
import { permissionDenials, type DenialRow } from '@/db/schema';
import { afterPosition, denialWhere, pageOf, pageOrder, pagePosition, resolveWindow, type DenialFilter, type DenialMatch } from './filter';
import { facetFilter, facetOf, resolveFilter, type Facet, type FacetField, type FacetOptions } from './facets';
import { catchUpIfBehind } from './rollup';
import { catchUpSearchIndex, D, denialTextIndex, indexedText } from './search';
import { denialHistogram, summarizeDenials, whereClause, type AggregateOptions, type DenialHistogram, type DenialSummary } from './stats';

export { type DenialFilter, type DenialMatch, type DenialSortKey, type SortOrder } from './filter';

/** One page of denials and the cursor of the next (null on the last page). */
export interface DenialPage {
  rows: DenialRow[];
  nextCursor: string | null;
}

/** What an export reads: a filter without its page size and sort (always newest first); a numeric cursor continues it. */
export type DenialExportFilter = Omit<DenialFilter, 'limit' | 'sort' | 'order'>;

/** The queries of permission_denials. */
export interface DenialStore {
  get(id: number): Promise<DenialRow | undefined>;
  /** One page of a filter, newest first by default; the other sorts page by a keyset cursor (sort value, id). */
  query(filter: DenialFilter): Promise<DenialPage>;
  /**
   * Every matching row, newest first, in pages: for exports that must not hold the whole result in memory. The window
   * and the newest row are fixed when the export starts: rows recorded after that are not included (one consistent cut).
   */
  iterate(filter: DenialExportFilter, pageSize?: number): AsyncGenerator<DenialRow>;
  count(filter?: DenialMatch): Promise<number>;
  /** Total and top agents, rule sources and tools of a filter (the explorer's summary cards). */
  summary(filter: DenialMatch, options?: AggregateOptions & { top?: number }): Promise<DenialSummary>;
  /** The values of an agent, tool or rule-source filter in the window of `filter`, with counts (the explorer's suggestions). */
  facet(field: FacetField, filter: DenialMatch, options?: Pick<FacetOptions, 'prefix' | 'limit'>): Promise<Facet>;
  /**
   * The explorer's live tail: how many denials of a filter were recorded after `afterId` (a short id range), and the
   * newest of them. The window is the filter's, so a relative window takes the new rows and a past one none.
   */
  newerThan(filter: DenialMatch, afterId: number): Promise<{ count: number; newestId: number | null }>;
  /** The newest denial id (0 when there is none). */
  newestId(): Promise<number>;
  /** Denials over time for a filter, stacked by rule-source family (the explorer's chart). */
  histogram(filter: DenialMatch, options?: AggregateOptions): Promise<DenialHistogram>;
  /**
   * Index the denials recorded since the free-text index last moved, for at most about `budgetMs`; how many it indexed
   * (nothing to do on PostgreSQL). A long-lived process calls it every second; searches are exact meanwhile.
   */
  catchUpSearch(budgetMs?: number): Promise<number>;
  /** Count the denials not counted yet into the daily counts when many are (where the database keeps them). */
  catchUpDailyCounts(): Promise<void>;
}

/** A row of permission_denials under the names of db/schema.ts (DenialRow). */
const ROW = sql.raw(columnsAs(permissionDenials));

/** The one DenialStore, over the dialect port. */
export class SqlDenialStore implements DenialStore {
  constructor(private readonly db: SqlDatabase) {}

  /** Statements that belong together (a filter's resolution and its query), in one read-only transaction. */
  private read<T>(body: (tx: TxRunner) => TxSteps<T>): Promise<T> {
    return this.db.transaction(body, { readOnly: true });
  }

  async get(id: number): Promise<DenialRow | undefined> {
    return this.db.one<DenialRow>(sql`SELECT ${ROW} FROM permission_denials WHERE id = ${id}`);
  }

  /**
   * The default order is newest first by id: every filter index ends in the id, so the page is an index walk. Other
   * sorts page by a keyset cursor (sort value, id), which stays correct while denials arrive.
   */
  async query(raw: DenialFilter): Promise<DenialPage> {
    const db = this.db;
    const limit = raw.limit ?? 100;
    const sort = raw.sort ?? 'id';
    const order = raw.order ?? 'desc';
    const text = sort === 'id' ? indexedText(raw.q) : undefined;
    const { filter, span } = await this.read(function* (tx) {
      const filter = yield* resolveFilter(tx, raw);
      const windowed = sort === 'id' && (filter.since !== undefined || filter.from !== undefined || filter.to !== undefined);
      return { filter, span: windowed ? yield* idSpan(tx, resolveWindow(filter)) : ('all' as const) };
    });
    const position = pagePosition(filter.cursor, sort, order);
    if (span === undefined) return { rows: [], nextCursor: null };
    const bounds = span === 'all' ? [] : [sql`${D.id} >= ${span.lo}`, sql`${D.id} <= ${span.hi}`];
    // With indexed free text in id order, the index drives the page (textPage): the same filter without the text.
    if (text !== undefined) {
      const rest = and(denialWhere(db, { ...filter, q: undefined }), ...bounds);
      const rows = await db.textPage<DenialRow>(denialTextIndex(db), text, { select: ROW, where: rest, order, limit: limit + 1 });
      return pageOf(rows, limit, sort, order);
    }
    let where = and(denialWhere(db, filter), ...bounds);
    if (position && sort !== 'id') where = and(where, afterPosition(db, sort, order, position));
    const rows = await db.all<DenialRow>(sql`SELECT ${ROW} FROM permission_denials${whereClause(where)} ORDER BY ${pageOrder(db, sort, order)} LIMIT ${limit + 1}`);
    return pageOf(rows, limit, sort, order);
  }

  async *iterate(filter: DenialExportFilter, pageSize = 1_000): AsyncGenerator<DenialRow> {
    const db = this.db;
    const { fixed, newest, span } = await this.read(function* (tx) {
      const fixed = yield* resolveFilter(tx, resolveWindow(filter));
      const newest = yield* newestIdIn(tx);
      // The window's id bounds once for the whole export, not once per page (bench: a 30-day window is ~600 pages).
      const windowed = fixed.from !== undefined || fixed.to !== undefined;
      return { fixed, newest, span: windowed ? yield* idSpan(tx, fixed) : { lo: 0, hi: newest } };
    });
    if (!span) return;
    const text = indexedText(fixed.q);
    const where = and(denialWhere(db, { ...fixed, cursor: undefined, q: text === undefined ? fixed.q : undefined }), sql`${D.id} >= ${span.lo}`);
    let before = Math.min(filter.cursor !== undefined && /^\d{1,18}$/.test(filter.cursor) ? Number(filter.cursor) : Number.POSITIVE_INFINITY, span.hi + 1, newest + 1);
    for (;;) {
      const page = and(where, sql`${D.id} < ${before}`);
      const rows =
        text !== undefined
          ? await db.textPage<DenialRow>(denialTextIndex(db), text, { select: ROW, where: page, order: 'desc', limit: pageSize })
          : await db.all<DenialRow>(sql`SELECT ${ROW} FROM permission_denials WHERE ${page} ORDER BY id DESC LIMIT ${pageSize}`);
      yield* rows;
      const last = rows[rows.length - 1];
      if (rows.length < pageSize || !last) return;
      before = last.id;
    }
  }

  async count(raw: DenialMatch = {}): Promise<number> {
    const db = this.db;
    return this.read(function* (tx) {
      const filter = yield* resolveFilter(tx, raw);
      const r = yield* tx.one<{ n: number }>(sql`SELECT count(*) AS n FROM permission_denials${whereClause(denialWhere(db, filter))}`);
      return Number(r?.n ?? 0);
    });
  }

  async summary(filter: DenialMatch, options: AggregateOptions & { top?: number } = {}): Promise<DenialSummary> {
    const db = this.db;
    if (options.useRollup !== false) await catchUpIfBehind(db);
    return this.read((tx) => summarizeDenials(tx, db, filter, options));
  }

  async facet(field: FacetField, filter: DenialMatch, options: Pick<FacetOptions, 'prefix' | 'limit'> = {}): Promise<Facet> {
    return facetOf(field, await this.summary(facetFilter(field, filter), { top: Number.POSITIVE_INFINITY }), options);
  }

  async newerThan(raw: DenialMatch, afterId: number): Promise<{ count: number; newestId: number | null }> {
    const db = this.db;
    return this.read(function* (tx) {
      const filter = yield* resolveFilter(tx, raw);
      const r = yield* tx.one<{ n: number; newest: number | null }>(
        sql`SELECT count(*) AS n, max(id) AS newest FROM permission_denials WHERE ${and(sql`${D.id} > ${afterId}`, denialWhere(db, filter))}`,
      );
      return { count: Number(r?.n ?? 0), newestId: r?.newest ?? null };
    });
  }

  async newestId(): Promise<number> {
    return Number((await this.db.one<{ id: number | null }>(NEWEST_ID))?.id ?? 0);
  }

  async histogram(filter: DenialMatch, options: AggregateOptions = {}): Promise<DenialHistogram> {
    const db = this.db;
    if (options.useRollup !== false) await catchUpIfBehind(db);
    return this.read((tx) => denialHistogram(tx, db, filter, options));
  }

  catchUpSearch(budgetMs?: number): Promise<number> {
    return catchUpSearchIndex(this.db, budgetMs);
  }

  catchUpDailyCounts(): Promise<void> {
    return catchUpIfBehind(this.db);
  }
}

const NEWEST_ID = sql`SELECT max(id) AS id FROM permission_denials`;

function* newestIdIn(tx: TxRunner): TxSteps<number> {
  return Number((yield* tx.one<{ id: number | null }>(NEWEST_ID))?.id ?? 0);
}

/**
 * The ids of the rows in a time window, from the timestamp index alone. Newest first is an id order and a window is
 * a timestamp range, and no index gives both: without these bounds a window that ends in the past, or a rare filter
 * inside a window, makes SQLite walk ids from the newest row down through everything outside the window. With them
 * the walk starts and stops at the window (bench/denial-queries.ts: "custom range", "text ..., last 7 d").
 */
function* idSpan(tx: TxRunner, window: Pick<DenialFilter, 'from' | 'to'>): TxSteps<{ lo: number; hi: number } | undefined> {
  const c: SQL[] = [];
  if (window.from !== undefined) c.push(sql`${D.timestamp} >= ${window.from}`);
  if (window.to !== undefined) c.push(sql`${D.timestamp} <= ${window.to}`);
  const r = yield* tx.one<{ lo: number | null; hi: number | null }>(sql`SELECT min(id) AS lo, max(id) AS hi FROM permission_denials${whereClause(and(...c))}`);
  return r && r.lo !== null && r.hi !== null ? { lo: r.lo, hi: r.hi } : undefined;
}
