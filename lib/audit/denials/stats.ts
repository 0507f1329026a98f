/**
 * Aggregates over the denials of one filter: the explorer's summary cards and its chart of denials over time.
 *
 * Over a million rows a GROUP BY on the audit table takes seconds on SQLite (bench/denial-queries.ts), so where the
 * database counts ahead (SqlDatabase.countsAhead) whole UTC days come from the daily counts (rollup.ts) and only the
 * rest is read from the audit table: the partial days at the edges of the window and the rows recorded since the
 * counts were last brought up to date. Each of those parts is bounded by a time or id range, and the attribute filters
 * are written so SQLite keeps to that range. Free text cannot be counted ahead, so a filter with `q` reads the audit
 * table alone, bounded by its window; so does every aggregate on PostgreSQL, which counts when it reads.
 * The result is exact either way; the tests compare both paths on the same rows.
 */
import { and, sql, type SQL } from 'drizzle-orm';
import type { SqlDatabase, TxRunner, TxSteps } from '@/db/dialect';
import { attributeConditions, nowSeconds, resolveWindow, type AttributeColumns, type DenialMatch } from './filter';
import { resolveFilter } from './facets';
import { dayOfTimestamp, DAY_SECONDS, rollupPositionIn } from './rollup';
import { D, hasText, textCondition } from './search';
import { ruleSourceFamily } from './vocabulary';

export { ruleSourceFamily } from './vocabulary';

const DAY = DAY_SECONDS;
/** ` WHERE <where>`, or nothing when there is no condition. */
export const whereClause = (where: SQL | undefined): SQL => (where ? sql` WHERE ${where}` : sql``);

const countsColumn = (name: string): SQL => sql`${sql.identifier('permission_denial_daily_counts')}.${sql.identifier(name)}`;
/** The daily counts' columns (permission_denial_daily_counts): a missing agent or role is '' there. */
const C = {
  day: countsColumn('day'),
  n: countsColumn('n'),
  agentName: countsColumn('agent_name'),
  toolName: countsColumn('tool_name'),
  userRole: countsColumn('user_role'),
  ruleSource: countsColumn('rule_source'),
} as const satisfies AttributeColumns & Record<string, SQL>;

/**
 * The attribute filters of a part read from the audit table. `unindexed`: filters SQLite will not use an index for
 * (db.unindexed), so the part's time or id range must drive the scan. Without it the planner prefers, say, the agent
 * index for `agent = x` and then visits every row of that agent, hundreds of thousands, to keep the few in a partial
 * day. Indexed: the only bound of a query without a window.
 */
function auditConditions(db: SqlDatabase, f: DenialMatch, unindexed: boolean): SQL[] {
  const c = attributeConditions(db, f, D, unindexed);
  // The newest row of the view (untilId) bounds every part read from the audit table. The daily counts cannot say
  // which ids they hold; they are read only for whole days before the window's end, and the explorer sends untilId
  // with a `to` pinned when the view loaded, so the rows recorded after it are never in those days.
  if (f.untilId !== undefined) c.push(sql`${D.id} <= ${f.untilId}`);
  if (hasText(f.q)) c.push(textCondition(db, f.q));
  return c;
}

/** How one aggregate reads a filter: daily counts for whole days, the audit table for the rest. */
interface ReadPlan {
  /** WHERE of the daily counts, when they are used */
  rollup?: SQL;
  /** WHERE of each part read from the audit table (undefined: every row) */
  base: (SQL | undefined)[];
}

/**
 * Split a resolved filter (absolute window) into whole UTC days (daily counts, as of high_water) and the parts the
 * counts do not cover: the partial days at either edge, and the rows after high_water inside the whole days.
 */
function* planRead(tx: TxRunner, db: SqlDatabase, f: DenialMatch, useRollup: boolean): TxSteps<ReadPlan> {
  const t = D;
  const attrs = auditConditions(db, f, true);
  const window: SQL[] = [];
  if (f.from !== undefined) window.push(sql`${t.timestamp} >= ${f.from}`);
  if (f.to !== undefined) window.push(sql`${t.timestamp} <= ${f.to}`);
  // Only with a window can the attribute filters give up their indexes: without one they are the only bound.
  const wholeTable = (): ReadPlan => ({ base: [and(...window, ...(window.length ? attrs : auditConditions(db, f, false)))] });
  // An id bound without an end of the window: today's counts may hold newer rows, so the audit table alone answers.
  if (!useRollup || hasText(f.q) || (f.untilId !== undefined && f.to === undefined)) return wholeTable();
  const firstDay = f.from === undefined ? undefined : Math.ceil(f.from / DAY);
  // The last day d with (d + 1) * DAY <= to: every row of it is at most `to`.
  const lastDay = f.to === undefined ? undefined : Math.floor(f.to / DAY) - 1;
  if (firstDay !== undefined && lastDay !== undefined && firstDay > lastDay) return wholeTable();
  const { highWater } = yield* rollupPositionIn(tx);
  const days: SQL[] = [];
  if (firstDay !== undefined) days.push(sql`${C.day} >= ${firstDay}`);
  if (lastDay !== undefined) days.push(sql`${C.day} <= ${lastDay}`);
  const base: SQL[] = [];
  if (f.from !== undefined && firstDay !== undefined && f.from < firstDay * DAY) {
    base.push(and(sql`${t.timestamp} >= ${f.from}`, sql`${t.timestamp} < ${firstDay * DAY}`, ...attrs)!);
  }
  if (f.to !== undefined && lastDay !== undefined) base.push(and(sql`${t.timestamp} >= ${(lastDay + 1) * DAY}`, sql`${t.timestamp} <= ${f.to}`, ...attrs)!);
  // Rows not yet counted: by id (a short rowid range), with the whole-day bounds as plain filters.
  const uncounted: SQL[] = [sql`${t.id} > ${highWater}`];
  if (firstDay !== undefined) uncounted.push(sql`${db.unindexed(t.timestamp)} >= ${firstDay * DAY}`);
  if (lastDay !== undefined) uncounted.push(sql`${db.unindexed(t.timestamp)} < ${(lastDay + 1) * DAY}`);
  base.push(and(...uncounted, ...attrs)!);
  return { rollup: and(...days, ...attributeConditions(db, f, C)) ?? sql`1 = 1`, base };
}

export interface Ranked<T> {
  value: T;
  count: number;
}

/** The total and the top agents, rule sources and tools of a filter (SummaryFold.summary). */
export type DenialSummary = ReturnType<SummaryFold['summary']>;

/** The `n` largest counts, largest first (ties by value). */
export function topOf<T>(counts: Map<T, number>, n: number): Ranked<T>[] {
  return [...counts.entries()]
    .map(([value, count]) => ({ value, count }))
    .sort((a, b) => b.count - a.count || String(a.value).localeCompare(String(b.value)))
    .slice(0, n);
}

function add<T>(map: Map<T, number>, key: T, n: number): void {
  map.set(key, (map.get(key) ?? 0) + n);
}

export interface AggregateOptions {
  now?: number;
  /** read the audit table alone, never the daily counts (the reference the tests compare with) */
  useRollup?: boolean;
}

/**
 * Total and top agents, rule sources and tools of a filter: one GROUP BY over the three columns (a few hundred
 * combinations in practice) per part, folded here, instead of four scans of the same rows. Read in one transaction,
 * so that the daily counts, high_water and the audit rows agree; `filter`'s agent, tool and rule source are resolved
 * in it (facets.ts). Daily counts are read where the database keeps them and `useRollup` is not false.
 */
export function* summarizeDenials(tx: TxRunner, db: SqlDatabase, filter: DenialMatch, options: AggregateOptions & { top?: number } = {}): TxSteps<DenialSummary> {
  const top = options.top ?? 5;
  const f = resolveWindow(yield* resolveFilter(tx, filter), options.now ?? nowSeconds());
  const plan = yield* planRead(tx, db, f, db.countsAhead && (options.useRollup ?? true));
  // Folded part by part. After a spray of names a part has millions of groups: spread into one list (as it was once)
  // they overflowed the call stack past about 125,000, and the summary answered 500.
  const fold = new SummaryFold();
  if (plan.rollup) {
    for (const r of yield* tx.all<DenialGroup>(
      sql`SELECT ${C.agentName} AS agent, ${C.toolName} AS tool, ${C.ruleSource} AS rule, sum(${C.n}) AS n FROM permission_denial_daily_counts WHERE ${plan.rollup} GROUP BY 1, 2, 3`,
    )) {
      fold.add({ ...r, agent: r.agent === '' ? null : r.agent });
    }
  }
  const t = D;
  for (const where of plan.base) {
    // Grouped with a sorter over the part's rows, not by walking a whole index in column order (SQLite).
    for (const r of yield* tx.all<DenialGroup>(
      sql`SELECT ${t.agentName} AS agent, ${t.toolName} AS tool, ${t.ruleSource} AS rule, count(*) AS n FROM permission_denials${whereClause(where)}
          GROUP BY ${db.unindexed(t.agentName)}, ${db.unindexed(t.toolName)}, ${db.unindexed(t.ruleSource)}`,
    )) {
      fold.add(r);
    }
  }
  return fold.summary(top);
}

/** The denials of one (agent, tool, rule source): what a summary is folded from, whichever database counted them. */
export interface DenialGroup {
  agent: string | null;
  tool: string;
  rule: string;
  n: number;
}

/**
 * Counts of groups added one at a time (a group may come several times, from several parts of a read: they add up).
 * The explorer's summary and the audit report's denial figures are folded alike.
 */
export class SummaryFold {
  private readonly agents = new Map<string | null, number>();
  private readonly tools = new Map<string, number>();
  private readonly rules = new Map<string, number>();
  private readonly families = new Map<string, number>();
  private total = 0;

  add(r: DenialGroup): void {
    // A count is a bigint on PostgreSQL: read as a number (db/pg/client.ts), made sure of here.
    const n = Number(r.n);
    this.total += n;
    add(this.agents, r.agent, n);
    add(this.tools, r.tool, n);
    add(this.rules, r.rule, n);
    add(this.families, ruleSourceFamily(r.rule), n);
  }

  summary(top: number) {
    return {
      total: this.total,
      topAgents: topOf(this.agents, top),
      topRuleSources: topOf(this.rules, top),
      topTools: topOf(this.tools, top),
      /** every rule-source family present, largest first */
      families: topOf(this.families, Number.POSITIVE_INFINITY),
    };
  }

  /** How many distinct agents, tools and rule sources were added. */
  distinct(): { agents: number; tools: number; ruleSources: number } {
    return { agents: this.agents.size, tools: this.tools.size, ruleSources: this.rules.size };
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Histogram
// ---------------------------------------------------------------------------------------------------------------

/** Bucket widths a person reads easily. Up to 8 days: minutes and hours; beyond: days and weeks (whole days). */
export const SUB_DAY_WIDTHS = [60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600] as const;
export const DAY_WIDTHS = [DAY, 7 * DAY, 30 * DAY] as const;
export const MAX_SUB_DAY_BUCKETS = 60;
export const MAX_DAY_BUCKETS = 100;

/**
 * The narrowest readable width that covers `span` seconds in a readable number of bars. Spans over 8 days get whole
 * days or weeks, which the daily counts answer without reading the audit table.
 */
export function chooseBucketSeconds(span: number): number {
  if (span <= 8 * DAY) {
    for (const w of SUB_DAY_WIDTHS) if (span / w <= MAX_SUB_DAY_BUCKETS) return w;
  }
  for (const w of DAY_WIDTHS) if (span / w <= MAX_DAY_BUCKETS) return w;
  return Math.ceil(span / MAX_DAY_BUCKETS / (30 * DAY)) * 30 * DAY;
}

/** Buckets are counted from this instant: weeks start on a Monday (1970-01-05), everything else at the epoch. */
export function bucketOrigin(width: number): number {
  return width === 7 * DAY ? 4 * DAY : 0;
}

export interface HistogramBucket {
  /** seconds since the epoch; the bucket is [start, end) */
  start: number;
  end: number;
  total: number;
  /** denials per rule-source family */
  counts: Record<string, number>;
}

/** Denials over time, stacked by rule-source family (HistogramTally.result). */
export type DenialHistogram = ReturnType<HistogramTally['result']>;

/** The start of the oldest day with a denial of these attributes (the text filter aside), or undefined. */
function* oldestDay(tx: TxRunner, db: SqlDatabase, f: DenialMatch, useRollup: boolean): TxSteps<number | undefined> {
  const t = D;
  const day = dayOfTimestamp(db);
  const attributes = { ...f, q: undefined };
  if (useRollup) {
    const { highWater } = yield* rollupPositionIn(tx);
    const counted = (yield* tx.one<{ day: number | null }>(
      sql`SELECT min(${C.day}) AS day FROM permission_denial_daily_counts${whereClause(and(...attributeConditions(db, f, C)))}`,
    ))?.day;
    const uncounted = (yield* tx.one<{ day: number | null }>(
      sql`SELECT min(${day}) AS day FROM permission_denials WHERE ${and(sql`${t.id} > ${highWater}`, ...auditConditions(db, attributes, true))}`,
    ))?.day;
    const days = [counted, uncounted].filter((x): x is number => typeof x === 'number');
    return days.length ? Math.min(...days) : undefined;
  }
  const r = yield* tx.one<{ day: number | null }>(sql`SELECT min(${day}) AS day FROM permission_denials${whereClause(and(...auditConditions(db, attributes, false)))}`);
  return typeof r?.day === 'number' ? r.day : undefined;
}

/**
 * Denials over time for a filter, stacked by rule-source family. The window is the filter's; an open window starts
 * at the oldest day with a matching denial. Every bucket of the window is returned, empty ones included. Read in one
 * transaction (see summarizeDenials).
 */
export function* denialHistogram(tx: TxRunner, db: SqlDatabase, filter: DenialMatch, options: AggregateOptions = {}): TxSteps<DenialHistogram> {
  const now = options.now ?? nowSeconds();
  const resolved = resolveWindow(yield* resolveFilter(tx, filter), now);
  const useRollup = db.countsAhead && (options.useRollup ?? true);
  const to = resolved.to ?? now;
  if (resolved.from !== undefined) return yield* histogramOver(tx, db, resolved, Math.min(resolved.from, to), to, useRollup);
  const open = yield* histogramOver(tx, db, resolved, openHistogramStart(yield* oldestDay(tx, db, resolved, useRollup), to), to, useRollup);
  // The oldest day ignores the text (it would take a scan to know): when the text matches only later rows, start
  // the chart at the first of them, in bars that fit the shorter span.
  const start = trimmedHistogramStart(open);
  return start === undefined ? open : yield* histogramOver(tx, db, resolved, start, to, useRollup);
}

/**
 * The bars of a histogram over [from, to], every one present (empty ones too), and the counts added to them: the part
 * of a histogram that does not depend on the database. A bucket index counts `width` seconds from `origin`, as
 * `CAST((timestamp - origin) / width AS INTEGER)` does in SQL.
 */
export class HistogramTally {
  readonly width: number;
  readonly origin: number;
  readonly buckets: HistogramBucket[] = [];
  private readonly firstIndex: number;
  private readonly familyTotals = new Map<string, number>();

  constructor(
    readonly from: number,
    readonly to: number,
  ) {
    this.width = chooseBucketSeconds(Math.max(to - from, 60));
    this.origin = bucketOrigin(this.width);
    this.firstIndex = this.indexOf(from);
    const lastIndex = this.indexOf(to);
    for (let i = this.firstIndex; i <= lastIndex; i++) {
      this.buckets.push({ start: this.origin + i * this.width, end: this.origin + (i + 1) * this.width, total: 0, counts: {} });
    }
  }

  /** The index of the bucket holding `t` (seconds since the epoch). */
  indexOf(t: number): number {
    return Math.floor((t - this.origin) / this.width);
  }

  /** Add `n` denials of `ruleSource` to the bucket of this index (outside the window: ignored). */
  count(index: number, ruleSource: string, n: number): void {
    const bucket = this.buckets[index - this.firstIndex];
    if (!bucket) return;
    const family = ruleSourceFamily(ruleSource);
    bucket.total += n;
    bucket.counts[family] = (bucket.counts[family] ?? 0) + n;
    add(this.familyTotals, family, n);
  }

  result() {
    // the families present, largest first
    const families = topOf(this.familyTotals, Number.POSITIVE_INFINITY).map((x) => x.value);
    return { from: this.from, to: this.to, bucketSeconds: this.width, families, buckets: this.buckets };
  }
}

/** The start of a histogram with an open window: the oldest day with a denial of its attributes, else an hour before `to`. */
export function openHistogramStart(oldestDay: number | undefined, to: number): number {
  return oldestDay === undefined ? to - 3600 : Math.min(oldestDay * DAY, to);
}

/**
 * Where an open window's chart starts when its first bars are empty (the text matches only later rows): at the first
 * non-empty bar, drawn again in bars that fit the shorter span. Undefined: keep the chart as it is.
 */
export function trimmedHistogramStart(open: DenialHistogram): number | undefined {
  const first = open.buckets.findIndex((b) => b.total > 0);
  return first <= 0 ? undefined : open.buckets[first]!.start;
}

/** The histogram of a filter over [from, to]. */
function* histogramOver(tx: TxRunner, db: SqlDatabase, resolved: DenialMatch, from: number, to: number, useRollup: boolean): TxSteps<DenialHistogram> {
  const tally = new HistogramTally(from, to);
  const { width, origin } = tally;
  const f = { ...resolved, from, to };
  // Whole days can only fill whole-day buckets; narrower buckets read the (at most 8 days of) audit rows.
  const plan = yield* planRead(tx, db, f, useRollup && width >= DAY);
  if (plan.rollup) {
    for (const r of yield* tx.all<{ day: number; rule: string; n: number }>(
      sql`SELECT ${C.day} AS day, ${C.ruleSource} AS rule, sum(${C.n}) AS n FROM permission_denial_daily_counts WHERE ${plan.rollup} GROUP BY 1, 2`,
    )) {
      tally.count(tally.indexOf(Number(r.day) * DAY), r.rule, Number(r.n));
    }
  }
  const t = D;
  const bucket = db.truncate(sql`(${t.timestamp} - ${origin}) / ${width}`);
  for (const where of plan.base) {
    for (const r of yield* tx.all<{ b: number; rule: string; n: number }>(
      sql`SELECT ${bucket} AS b, ${t.ruleSource} AS rule, count(*) AS n FROM permission_denials${whereClause(where)}
          GROUP BY 1, ${db.unindexed(t.ruleSource)}`,
    )) {
      tally.count(Number(r.b), r.rule, Number(r.n));
    }
  }
  return tally.result();
}
