/**
 * Sign-in attempts on PostgreSQL, for several servers on one database: the same rows and the same verdicts as
 * SqliteLoginAttempts (attempts.ts). Each step is one transaction that first locks the user name's row (created if
 * missing): steps for one name on any server follow each other, so two servers can never both start an attempt for it,
 * and each counts what the one before committed.
 */
import type pg from 'pg';
import { inTransaction, type PgTx } from '@/db/pg/client';
import { afterFailure, judgeStart, leaseUntil, pruneBefore, PRUNE_EVERY, type AttemptFailure, type AttemptRow, type AttemptStart, type LockoutPolicy } from './attempts';

const COLUMNS = 'key, failures, last_failure_at AS "lastFailureAt", locked_until AS "lockedUntil", busy_until AS "busyUntil"';
type Row = AttemptRow & { key: string };

export class PgLoginAttempts {
  private failuresSeen = 0;

  constructor(private readonly pool: pg.Pool) {}

  /** The user name's row, locked for the transaction (made first when missing), and the other keys' rows. */
  private async rows(client: PgTx['client'], userKey: string, otherKeys: readonly string[]): Promise<{ user: AttemptRow; others: Map<string, AttemptRow> }> {
    await client.query('INSERT INTO login_attempts (key) VALUES ($1) ON CONFLICT (key) DO NOTHING', [userKey]);
    const user = (await client.query<Row>(`SELECT ${COLUMNS} FROM login_attempts WHERE key = $1 FOR UPDATE`, [userKey])).rows[0]!;
    const others = otherKeys.length === 0 ? [] : (await client.query<Row>(`SELECT ${COLUMNS} FROM login_attempts WHERE key = ANY($1)`, [otherKeys])).rows;
    return { user, others: new Map(others.map((r) => [r.key, r])) };
  }

  private async put(client: PgTx['client'], key: string, r: AttemptRow): Promise<void> {
    await client.query(
      'INSERT INTO login_attempts (key, failures, last_failure_at, locked_until, busy_until) VALUES ($1, $2, $3, $4, $5) ' +
        'ON CONFLICT (key) DO UPDATE SET failures = excluded.failures, last_failure_at = excluded.last_failure_at, locked_until = excluded.locked_until, busy_until = excluded.busy_until',
      [key, r.failures, r.lastFailureAt, r.lockedUntil, r.busyUntil],
    );
  }

  async start(userKey: string, otherKeys: readonly string[], now: number, policy?: LockoutPolicy): Promise<AttemptStart> {
    return inTransaction(this.pool, async ({ client }) => {
      const { user, others } = await this.rows(client, userKey, otherKeys);
      const verdict = judgeStart(user, otherKeys.map((k) => others.get(k)), now, policy);
      if (verdict.kind === 'go') await client.query('UPDATE login_attempts SET busy_until = $2 WHERE key = $1', [userKey, leaseUntil(verdict, now)]);
      return verdict;
    });
  }

  async failed(userKey: string, otherKeys: readonly string[], now: number, policy?: LockoutPolicy): Promise<AttemptFailure> {
    const out = await inTransaction(this.pool, async ({ client }) => {
      const { user, others } = await this.rows(client, userKey, otherKeys);
      for (const key of otherKeys) await this.put(client, key, afterFailure(others.get(key), now, policy, false));
      const after = afterFailure(user, now, policy, true);
      await this.put(client, userKey, after);
      return { failures: after.failures, lockedUntil: after.lockedUntil !== null && after.lockedUntil > now ? after.lockedUntil : null };
    });
    if (++this.failuresSeen % PRUNE_EVERY === 0) {
      await this.pool
        .query('DELETE FROM login_attempts WHERE coalesce(last_failure_at, 0) < $1 AND coalesce(locked_until, 0) < $2 AND coalesce(busy_until, 0) < $2', [pruneBefore(now, policy), now])
        .catch((error: unknown) => console.error('Pruning old sign-in attempts failed.', error));
    }
    return out;
  }

  async succeeded(userKey: string): Promise<void> {
    await this.pool.query('DELETE FROM login_attempts WHERE key = $1', [userKey]);
  }

  async release(userKey: string): Promise<void> {
    await this.pool.query('UPDATE login_attempts SET busy_until = NULL WHERE key = $1', [userKey]);
  }

  async unlock(userKey: string, now: number): Promise<boolean> {
    const { rows } = await this.pool.query<{ lockedUntil: number | null }>('DELETE FROM login_attempts WHERE key = $1 RETURNING locked_until AS "lockedUntil"', [userKey]);
    const until = rows[0]?.lockedUntil;
    return until != null && until > now;
  }

  async get(key: string): Promise<AttemptRow | undefined> {
    return (await this.pool.query<Row>(`SELECT ${COLUMNS} FROM login_attempts WHERE key = $1`, [key])).rows[0];
  }
}
