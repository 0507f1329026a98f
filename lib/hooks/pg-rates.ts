/**
 * The windows of `rate_limit` hooks on PostgreSQL, for several servers on one database: the same rows and the same
 * verdict as SqliteRateCounter (rates.ts). The count and the insert run in one transaction that first takes a
 * transaction-level advisory lock on the window's key (hook, agent, tool): takes of one window on any server follow each
 * other, and each counts what the one before it committed, so two servers can never both take the last slot. Takes of
 * different windows do not wait for each other (a hash collision between two keys only makes them wait).
 */
import type pg from 'pg';
import { inTransaction } from '@/db/pg/client';
import { DAY, judgeWindow, PRUNE_EVERY, type RateCounter, type RateKey, type RateTake } from './rates';

/** The first key of the windows' advisory locks (the second is the hash of hook, agent and tool). */
const RATE_LOCK = 0x5357_4801;

export class PgRateCounter implements RateCounter {
  readonly async = true;
  private takes = 0;

  constructor(private readonly pool: pg.Pool) {}

  async take(key: RateKey, calls: number, perSeconds: number, now: number): Promise<RateTake> {
    const since = now - perSeconds;
    const params = [key.hook, key.agent, key.tool, since];
    const verdict = await inTransaction(this.pool, async ({ client }) => {
      // Two keys that hash alike only wait for each other; their counts stay apart (the query names the window).
      await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [RATE_LOCK, `${key.hook}\u0001${key.agent}\u0001${key.tool}`]);
      const { rows } = await client.query<{ n: number; at: number | null }>(
        'SELECT count(*) AS n, min(at) AS at FROM hook_rate_calls WHERE hook = $1 AND agent = $2 AND tool = $3 AND at > $4',
        params,
      );
      const took = judgeWindow(Number(rows[0]!.n), rows[0]!.at, calls, perSeconds, now);
      if (took.allowed) await client.query('INSERT INTO hook_rate_calls (hook, agent, tool, at) VALUES ($1, $2, $3, $4)', [key.hook, key.agent, key.tool, now]);
      return took;
    });
    if (verdict.allowed && ++this.takes % PRUNE_EVERY === 0) {
      // Outside the window's lock; a failed prune is tried again a thousand calls later.
      await this.pool.query('DELETE FROM hook_rate_calls WHERE at < $1', [now - DAY]).catch((error: unknown) => console.error('Pruning old rate-limit rows failed.', error));
    }
    return verdict;
  }
}
