/**
 * The denial queries on PostgreSQL: the twin of DenialStore (denials.ts), the same methods answering the same rows,
 * pages, cursors, counts, summaries, facets and histograms for the same filter, as promises.
 *
 * What is shared is shared: the filter and its window (denial-filter.ts), the resolution of typed agent, tool and rule
 * source values (denial-facets.ts), the cursors and pages, the folding of a summary and the bars of a histogram
 * (denial-stats.ts). What differs is what SQLite needed for speed and PostgreSQL does not or does otherwise:
 *
 * - Free text is ILIKE over the same columns, the arguments in the form SQLite's FTS5 index holds them (one
 *   `"key": value` per line), so the same text finds the same rows; no index (a scan bounded by the other filters).
 * - Summaries and histograms GROUP BY over the audit table itself: exact, and no write from a read. The daily counts
 *   (permission_denial_daily_counts) are neither read nor kept up to date here.
 * - Text compares and sorts in byte order (COLLATE "C"), with NULL first in ascending order, as SQLite does: the
 *   database's collation (en_US, say) would order `Zed` and `alice` otherwise and break the keyset cursors' agreement.
 */
import { and, asc, desc, eq, gt, lt, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import type pg from 'pg';
import { inTransaction, pgDatabase, type PgDb, type PgTx } from '@/db/pg/client';
import { permissionDenials } from '@/db/pg/schema';
import type { DenialRow } from '@/db/schema';
import {
  afterPosition,
  attributeConditions,
  denialWhere,
  likeContains,
  MIN_INDEXED_TEXT,
  normaliseSearchText,
  nowSeconds,
  pageOf,
  pagePosition,
  resolveWindow,
  type DenialFilter,
  type DenialMatch,
  type DenialSortKey,
  type FilterDialect,
  type SortOrder,
} from './denial-filter';
import { facetFilter, facetOf, fieldsToResolve, FilterResolution, typedValue, withResolved, type Facet, type FacetField, type FacetOptions } from './denial-facets';
import {
  foldSummary,
  HistogramTally,
  openHistogramStart,
  trimmedHistogramStart,
  type AggregateOptions,
  type DenialGroup,
  type DenialHistogram,
  type DenialSummary,
} from './denial-stats';

const t = permissionDenials;

/** A Drizzle database to read with: the pool's, or one transaction's. */
type Reader = PgDb | PgTx['db'];

/**
 * The stored arguments as SQLite's search index holds them (denial-search.ts, argumentsTextSql): every key and value of
 * the JSON tree, depth first in document order, one per line, a key quoted and followed by `: `, an object or array
 * shown as `{` or `[`, a scalar as written in the stored JSON (which the recorder wrote with JSON.stringify, as
 * SQLite's json_quote writes a string back). NULL when there is nothing below the root.
 */
export const ARGUMENTS_TEXT: SQL = sql`(SELECT string_agg(
    CASE WHEN a.key IS NULL THEN '' ELSE to_json(a.key)::text || ': ' END ||
    CASE json_typeof(a.value) WHEN 'object' THEN '{' WHEN 'array' THEN '[' ELSE a.value::text END,
    chr(10) ORDER BY a.path)
  FROM (
    WITH RECURSIVE tree(path, key, value) AS (
      SELECT ARRAY[]::bigint[], NULL::text, ${t.argumentsJson}::json
      UNION ALL
      SELECT tree.path || e.ord, e.key, e.value FROM tree CROSS JOIN LATERAL (
        SELECT o.key, o.value, o.ord FROM json_each(CASE WHEN json_typeof(tree.value) = 'object' THEN tree.value END) WITH ORDINALITY AS o(key, value, ord)
        UNION ALL
        SELECT NULL, i.value, i.ord FROM json_array_elements(CASE WHEN json_typeof(tree.value) = 'array' THEN tree.value END) WITH ORDINALITY AS i(value, ord)
      ) AS e
    )
    SELECT * FROM tree WHERE cardinality(tree.path) > 0
  ) AS a)`;

/**
 * Free text as SQLite answers it (denial-filter.ts, textCondition): the normalised text, a case-insensitive substring
 * of the reason, tool, agent or HTTP path, or of the arguments: in their indexed form for three characters or more
 * (what the FTS5 index holds), as stored for shorter text (SQLite's LIKE fallback).
 */
export function pgTextCondition(q: string): SQL {
  const text = normaliseSearchText(q);
  const pattern = likeContains(text);
  const like = (column: SQLWrapper) => sql`${column} ILIKE ${pattern} ESCAPE '\\'`;
  const args = [...text].length >= MIN_INDEXED_TEXT ? ARGUMENTS_TEXT : t.argumentsJson;
  // The arguments last: PostgreSQL evaluates OR from the left, so a row found by a cheap column skips the JSON walk.
  return sql`(${like(t.reason)} OR ${like(t.toolName)} OR ${like(t.agentName)} OR ${like(t.httpPath)} OR ${like(args)})`;
}

/** A rule-source family (`policy`: `policy` and every `policy:*`) as a prefix, whatever the database's collation. */
export function pgFamilyCondition(value: string, column: SQLWrapper): SQL {
  if (value.includes(':')) return sql`${column} = ${value}`;
  return sql`(${column} = ${value} OR starts_with(${column}, ${`${value}:`}))`;
}

/** PostgreSQL's filter: db/pg/schema.ts's table, ILIKE for the text, a prefix for a family. */
export const PG_FILTER: FilterDialect = { cols: t, text: pgTextCondition, family: pgFamilyCondition };

/** A sort key's value as SQLite compares it: text in byte order. */
function sortValue(sort: Exclude<DenialSortKey, 'id'>): SQLWrapper {
  if (sort === 'timestamp') return t.timestamp;
  const column = sort === 'agent_name' ? t.agentName : sort === 'tool_name' ? t.toolName : t.ruleSource;
  return sql`${column} COLLATE "C"`;
}

/** ORDER BY of a page: SQLite's NULL placement (first when ascending, last when descending), then the id. */
function orderOf(sort: DenialSortKey, order: SortOrder): SQL[] {
  const byId = order === 'asc' ? asc(t.id) : desc(t.id);
  if (sort === 'id') return [byId];
  const value = sortValue(sort);
  return [order === 'asc' ? sql`${value} ASC NULLS FIRST` : sql`${value} DESC NULLS LAST`, byId];
}

const count = () => sql<number>`count(*)`.mapWith(Number);
/** Distinct values read per round trip when a filter value is resolved (a page is all it holds at once). */
const VALUES_PAGE = 5_000;

/** The read-only snapshot in which a histogram's several statements agree (SQLite's read transaction). */
const SNAPSHOT = 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY';

/** The queries of permission_denials on PostgreSQL (the rows are written by the recorder, pg-recorder.ts). */
export class PgDenialStore {
  private readonly db: PgDb;

  constructor(private readonly pool: pg.Pool) {
    this.db = pgDatabase(pool);
  }

  async get(id: number): Promise<DenialRow | undefined> {
    const rows: DenialRow[] = await this.db.select().from(t).where(eq(t.id, id)).limit(1);
    return rows[0];
  }

  /** One page of a filter, newest first by default; the other sorts page by a keyset cursor (sort value, id). */
  async query(raw: DenialFilter): Promise<{ rows: DenialRow[]; nextCursor: string | null }> {
    const filter = await this.resolve(this.db, raw);
    const limit = filter.limit ?? 100;
    const sort = filter.sort ?? 'id';
    const order = filter.order ?? 'desc';
    let where = denialWhere(filter, PG_FILTER);
    const position = pagePosition(filter.cursor, sort, order);
    if (position && sort !== 'id') where = and(where, afterPosition(sort, order, position, { value: sortValue(sort), id: t.id }));
    const rows: DenialRow[] = await this.db
      .select()
      .from(t)
      .where(where)
      .orderBy(...orderOf(sort, order))
      .limit(limit + 1);
    return pageOf(rows, limit, sort, order);
  }

  /**
   * Every matching row, newest first, in pages: for exports that must not hold the whole result in memory. The window
   * and the newest row are fixed when the export starts: rows recorded after that are not included (one consistent cut).
   */
  async *iterate(filter: Omit<DenialFilter, 'limit' | 'sort' | 'order'>, pageSize = 1_000): AsyncGenerator<DenialRow> {
    const fixed = await this.resolve(this.db, resolveWindow(filter));
    const newest = await this.newestId();
    const where = denialWhere({ ...fixed, cursor: undefined }, PG_FILTER);
    let before = Math.min(filter.cursor !== undefined && /^\d{1,18}$/.test(filter.cursor) ? Number(filter.cursor) : Number.POSITIVE_INFINITY, newest + 1);
    for (;;) {
      const rows: DenialRow[] = await this.db
        .select()
        .from(t)
        .where(and(where, lt(t.id, before)))
        .orderBy(desc(t.id))
        .limit(pageSize);
      yield* rows;
      const last = rows[rows.length - 1];
      if (rows.length < pageSize || !last) return;
      before = last.id;
    }
  }

  async count(filter: DenialMatch = {}): Promise<number> {
    const [r] = await this.db
      .select({ n: count() })
      .from(t)
      .where(denialWhere(await this.resolve(this.db, filter), PG_FILTER));
    return r?.n ?? 0;
  }

  /**
   * Total and top agents, rule sources and tools of a filter: one GROUP BY over the three columns, folded as SQLite's
   * is. `useRollup` has no effect: there are no daily counts to read here.
   */
  async summary(filter: DenialMatch, options: AggregateOptions & { top?: number } = {}): Promise<DenialSummary> {
    const f = resolveWindow(await this.resolve(this.db, filter), options.now ?? nowSeconds());
    const groups: DenialGroup[] = await this.db
      .select({ agent: t.agentName, tool: t.toolName, rule: t.ruleSource, n: count() })
      .from(t)
      .where(denialWhere(f, PG_FILTER))
      .groupBy(t.agentName, t.toolName, t.ruleSource);
    return foldSummary(groups, options.top ?? 5);
  }

  /** The values of an agent, tool or rule-source filter in the window of `filter`, with counts (the explorer's suggestions). */
  async facet(field: FacetField, filter: DenialMatch, options: Pick<FacetOptions, 'prefix' | 'limit'> = {}): Promise<Facet> {
    return facetOf(field, await this.summary(facetFilter(field, filter), { top: Number.POSITIVE_INFINITY }), options);
  }

  /** The explorer's live tail: how many denials of a filter were recorded after `afterId`, and the newest of them. */
  async newerThan(filter: DenialMatch, afterId: number): Promise<{ count: number; newestId: number | null }> {
    const [r] = await this.db
      .select({ n: count(), newest: sql<number | null>`max(${t.id})`.mapWith(Number) })
      .from(t)
      .where(and(gt(t.id, afterId), denialWhere(await this.resolve(this.db, filter), PG_FILTER)));
    return { count: r?.n ?? 0, newestId: r?.newest ?? null };
  }

  /** The newest denial id (0 when there is none). */
  async newestId(): Promise<number> {
    const [r] = await this.db.select({ id: sql<number>`coalesce(max(${t.id}), 0)`.mapWith(Number) }).from(t);
    return r?.id ?? 0;
  }

  /**
   * Denials over time for a filter, stacked by rule-source family: the window and its bars chosen as on SQLite
   * (denial-stats.ts), counted by one GROUP BY, all in one snapshot. `useRollup` has no effect here.
   */
  async histogram(filter: DenialMatch, options: AggregateOptions = {}): Promise<DenialHistogram> {
    const now = options.now ?? nowSeconds();
    return inTransaction(
      this.pool,
      async ({ db }) => {
        const resolved = resolveWindow(await this.resolve(db, filter), now);
        const to = resolved.to ?? now;
        if (resolved.from !== undefined) return this.histogramOver(db, resolved, Math.min(resolved.from, to), to);
        const open = await this.histogramOver(db, resolved, openHistogramStart(await this.oldestDay(db, resolved), to), to);
        const start = trimmedHistogramStart(open);
        return start === undefined ? open : this.histogramOver(db, resolved, start, to);
      },
      '',
      SNAPSHOT,
    );
  }

  /** The histogram of a resolved filter over [from, to]. */
  private async histogramOver(db: Reader, resolved: DenialMatch, from: number, to: number): Promise<DenialHistogram> {
    const tally = new HistogramTally(from, to);
    // trunc: SQLite's CAST(... AS INTEGER) (a cast of a double to bigint would round).
    const bucket = sql<number>`trunc((${t.timestamp} - ${tally.origin}::float8) / ${tally.width}::float8)::bigint`.mapWith(Number);
    const rows = await db
      .select({ b: bucket, rule: t.ruleSource, n: count() })
      .from(t)
      .where(denialWhere({ ...resolved, from, to }, PG_FILTER))
      .groupBy(sql`1`, t.ruleSource);
    for (const r of rows) tally.count(r.b, r.rule, r.n);
    return tally.result();
  }

  /** The oldest UTC day with a denial of the filter's attributes (its window and text aside), or undefined. */
  private async oldestDay(db: Reader, f: DenialMatch): Promise<number | undefined> {
    const [r] = await db
      .select({ day: sql<number | null>`min(trunc(${t.timestamp} / 86400))::bigint`.mapWith(Number) })
      .from(t)
      .where(and(...attributeConditions(f, t, false, pgFamilyCondition)));
    return typeof r?.day === 'number' ? r.day : undefined;
  }

  /** A filter with its typed agent, tool and rule-source values resolved to the exact values that exist (denial-facets.ts). */
  private async resolve<F extends DenialMatch>(db: Reader, filter: F): Promise<F> {
    const resolved: Partial<Record<FacetField, string[]>> = {};
    for (const field of fieldsToResolve(filter)) {
      const resolution = new FilterResolution(field, typedValue(filter, field)!);
      for await (const page of this.knownValues(db, field)) for (const v of page) resolution.add(v);
      resolved[field] = resolution.result();
    }
    return withResolved(filter, resolved);
  }

  /**
   * Every value of a field in the trail, from its index, in pages of VALUES_PAGE: one index probe per distinct value (a
   * loose index scan), not a read of every row, as SQLite reads them from its daily counts; never all of them at once
   * (anyone with a token can add names).
   */
  private async *knownValues(db: Reader, field: FacetField): AsyncGenerator<string[]> {
    const column = field === 'agent' ? t.agentName : field === 'tool' ? t.toolName : t.ruleSource;
    let after: string | undefined;
    for (;;) {
      const first = after === undefined ? sql`SELECT min(${column}) FROM ${t}` : sql`SELECT min(${column}) FROM ${t} WHERE ${column} > ${after}`;
      const rows = await db.execute<{ v: string }>(
        sql`WITH RECURSIVE v(x) AS (
              (${first})
              UNION ALL
              SELECT (SELECT min(${column}) FROM ${t} WHERE ${column} > v.x) FROM v WHERE v.x IS NOT NULL
            ) SELECT x AS v FROM v WHERE x IS NOT NULL LIMIT ${VALUES_PAGE}`,
      );
      const page = rows.rows.map((r) => r.v);
      if (page.length > 0) yield page;
      if (page.length < VALUES_PAGE) return;
      after = page[page.length - 1];
    }
  }
}
