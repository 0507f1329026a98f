/**
 * The windows of `rate_limit` hooks, in the database: each call a hook lets through is a row of hook_rate_calls, and
 * a call is let through while fewer than N rows of its hook, agent and tool are younger than the window. Every process
 * on the database counts the same window (the server's decision listener and Next.js, a CLI hook adapter, several
 * servers); the count and the insert are one IMMEDIATE transaction, so two processes cannot both take the last slot.
 */
import type Database from 'better-sqlite3';
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
 * Where rate-limit windows are counted (the runner's port). A counter on a database over the network (PostgreSQL)
 * answers with a promise and says so with `async: true`: the runner then awaits it, and a synchronous decision refuses
 * a call that a rate_limit hook applies to with HookWouldWait before anything is counted. A counter that does not say
 * so must answer synchronously (SQLite), so that `engine.decide()` keeps deciding without waiting.
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

export class SqliteRateCounter implements RateCounter {
  private readonly count;
  private readonly oldest;
  private readonly insert;
  private readonly prune;
  private takes = 0;

  constructor(private readonly sqlite: Database.Database) {
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
    // Inside the decision listener's group transaction the write lock is held already (it opens at this announcement).
    announceWrite(this.sqlite);
    return this.sqlite.inTransaction ? body() : this.sqlite.transaction(body).immediate();
  }
}
