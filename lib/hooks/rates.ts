/**
 * The windows of `rate_limit` hooks, in the database: each call a hook lets through is a row of hook_rate_calls, and
 * a call is let through while fewer than N rows of its hook, agent and tool are younger than the window. Every process
 * on the database counts the same window (the server's decision listener and Next.js, a CLI hook adapter, several
 * servers). The count and the insert are one transaction, written once over the dialect port (takeSteps): on SQLite
 * BEGIN IMMEDIATE takes the one writer lock, on PostgreSQL the transaction is serialised on the window's key (an
 * advisory lock), so two processes or servers can never both take the last slot, and takes of different windows on
 * PostgreSQL do not wait for each other.
 *
 * The counter is on the decision path: on PostgreSQL (and wherever it is awaited) SqlRateCounter runs that transaction;
 * on SQLite the decision path's synchronous port, SqliteRateCounter, runs the same statements prepared once (the
 * rates contract holds both to the same verdicts, racing processes included).
 */
import { sql } from 'drizzle-orm';
import type { SqlDatabase, SqliteDatabase, TxRunner, TxSteps } from '@/db/dialect';
import { announceWrite } from '@/db/write-intent';

export interface RateKey {
  hook: string;
  agent: string;
  tool: string;
}

export interface RateTake {
  allowed: boolean;
  /** calls in the window, this one included when allowed */
  count: number;
  /** when not allowed: seconds until the oldest call of the window leaves it */
  retryInSeconds: number;
}

/**
 * Where rate-limit windows are counted (the runner's port). A counter that answers with a promise says so with
 * `async: true`: the runner then awaits it, and a synchronous decision refuses a call that a rate_limit hook applies to
 * with HookWouldWait before anything is counted. A counter that does not say so answers synchronously (SQLite), so that
 * `engine.decide()` keeps deciding without waiting.
 */
export interface RateCounter {
  readonly async?: boolean;
  take(key: RateKey, calls: number, perSeconds: number, nowSeconds: number): RateTake | Promise<RateTake>;
}

/** The longest window is a day: older rows count for nothing (pruned now and then, not on every call). */
export const DAY = 86_400;
export const PRUNE_EVERY = 1_000;

/**
 * The verdict on a window that holds `n` calls, the oldest at `oldest`: refused when it is full (with the seconds until
 * its oldest call leaves it), else let through as call n + 1. The caller inserts the call when it is let through.
 */
export function judgeWindow(n: number, oldest: number | null, calls: number, perSeconds: number, now: number): RateTake {
  if (n >= calls) return { allowed: false, count: n, retryInSeconds: Math.max(1, Math.ceil((oldest ?? now) + perSeconds - now)) };
  return { allowed: true, count: n + 1, retryInSeconds: 0 };
}

/** The key a window's takes are serialised on (PostgreSQL; SQLite's writer lock serialises every take). */
const windowLock = (key: RateKey): string => `hook_rate:${key.hook}\u0001${key.agent}\u0001${key.tool}`;

/** One take of a window, in the transaction `tx`: count, judge, insert when let through, and now and then prune. */
function* takeSteps(tx: TxRunner, key: RateKey, calls: number, perSeconds: number, now: number, prune: boolean): TxSteps<RateTake> {
  const window = sql`hook = ${key.hook} AND agent = ${key.agent} AND tool = ${key.tool} AND at > ${now - perSeconds}`;
  const row = yield* tx.one<{ n: number | string; at: number | null }>(sql`SELECT count(*) AS n, min(at) AS at FROM hook_rate_calls WHERE ${window}`);
  // PostgreSQL's count is a bigint, which node-postgres gives as text.
  const verdict = judgeWindow(Number(row?.n ?? 0), row?.at ?? null, calls, perSeconds, now);
  if (!verdict.allowed) return verdict;
  yield* tx.run(sql`INSERT INTO hook_rate_calls (hook, agent, tool, at) VALUES (${key.hook}, ${key.agent}, ${key.tool}, ${now})`);
  if (prune) yield* tx.run(sql`DELETE FROM hook_rate_calls WHERE at < ${now - DAY}`);
  return verdict;
}

/** The counter awaited by the runner (PostgreSQL: a database over the network answers with a promise). */
export class SqlRateCounter implements RateCounter {
  readonly async = true;
  private takes = 0;

  constructor(private readonly database: SqlDatabase) {}

  take(key: RateKey, calls: number, perSeconds: number, now: number): Promise<RateTake> {
    const prune = ++this.takes % PRUNE_EVERY === 0;
    return this.database.transaction((tx) => takeSteps(tx, key, calls, perSeconds, now, prune), { serialise: windowLock(key) });
  }
}

/**
 * The counter on SQLite, answered at once: the decision path's synchronous port (`engine.decide()` keeps deciding
 * without waiting), with the statements of takeSteps prepared once. Measured: driving takeSteps through
 * SqliteDatabase.transactionSync costs about half as much again per take (a savepoint inside the decision listener's
 * group transaction, the SQL built per call), and a rate-limited call is a decision. Inside the group transaction the
 * take simply joins it (the write lock is held already); otherwise it is one IMMEDIATE transaction of its own.
 */
export class SqliteRateCounter implements RateCounter {
  private readonly count;
  private readonly oldest;
  private readonly insert;
  private readonly prune;
  private takes = 0;

  constructor(private readonly database: SqliteDatabase) {
    const sqlite = database.client;
    this.count = sqlite.prepare<[string, string, string, number], { n: number }>('SELECT count(*) AS n FROM hook_rate_calls WHERE hook = ? AND agent = ? AND tool = ? AND at > ?');
    this.oldest = sqlite.prepare<[string, string, string, number], { at: number | null }>('SELECT min(at) AS at FROM hook_rate_calls WHERE hook = ? AND agent = ? AND tool = ? AND at > ?');
    this.insert = sqlite.prepare<[string, string, string, number]>('INSERT INTO hook_rate_calls (hook, agent, tool, at) VALUES (?, ?, ?, ?)');
    this.prune = sqlite.prepare<[number]>('DELETE FROM hook_rate_calls WHERE at < ?');
  }

  take(key: RateKey, calls: number, perSeconds: number, now: number): RateTake {
    const body = (): RateTake => {
      const since = now - perSeconds;
      const n = this.count.get(key.hook, key.agent, key.tool, since)!.n;
      const verdict = judgeWindow(n, n >= calls ? this.oldest.get(key.hook, key.agent, key.tool, since)!.at : null, calls, perSeconds, now);
      if (!verdict.allowed) return verdict;
      this.insert.run(key.hook, key.agent, key.tool, now);
      if (++this.takes % PRUNE_EVERY === 0) this.prune.run(now - DAY);
      return verdict;
    };
    const sqlite = this.database.client;
    // Inside the decision listener's group transaction the write lock is held already (it opens at this announcement).
    announceWrite(sqlite);
    return sqlite.inTransaction ? body() : sqlite.transaction(body).immediate();
  }
}
