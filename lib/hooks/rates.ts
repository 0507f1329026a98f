/**
 * The windows of `rate_limit` hooks, in the database: each call a hook lets through is a row of hook_rate_calls, and
 * a call is let through while fewer than N rows of its hook, agent and tool are younger than the window. Every process
 * on the database counts the same window (the server's decision listener and Next.js, a CLI hook adapter, several
 * servers); the count and the insert are one IMMEDIATE transaction, so two processes cannot both take the last slot.
 */
import type Database from 'better-sqlite3';

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

/** Where rate-limit windows are counted (the runner's port). */
export interface RateCounter {
  take(key: RateKey, calls: number, perSeconds: number, nowSeconds: number): RateTake;
}

const DAY = 86_400;

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
      if (n >= calls) {
        const oldest = this.oldest.get(key.hook, key.agent, key.tool, since)!.at ?? now;
        return { allowed: false, count: n, retryInSeconds: Math.max(1, Math.ceil(oldest + perSeconds - now)) };
      }
      this.insert.run(key.hook, key.agent, key.tool, now);
      // The longest window is a day: older rows count for nothing (pruned now and then, not on every call).
      if (++this.takes % 1_000 === 0) this.prune.run(now - DAY);
      return { allowed: true, count: n + 1, retryInSeconds: 0 };
    };
    // Inside the decision listener's group transaction the write lock is held already.
    return this.sqlite.inTransaction ? body() : this.sqlite.transaction(body).immediate();
  }
}
