/**
 * Flags on PostgreSQL with two servers (two services on two connection pools) on a database of this file's own in the
 * test run's cluster: a change on one reaches the other within a second, also after the other's listening connection was cut.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgDatabase } from '@/db/pg/client';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { within } from '@/lib/test-support/wait';
import { PgFlagService } from './pg-service';

const pg15 = usePostgres();
let database = '';
const services: PgFlagService[] = [];
const pools: pg.Pool[] = [];

async function server(): Promise<PgFlagService> {
  const pool = pg15.pool(database);
  pools.push(pool);
  const s = new PgFlagService({ db: pgDatabase(pool), pool, env: {} });
  await s.start();
  services.push(s);
  return s;
}

beforeAll(async () => {
  database = await pg15.freshDatabase('flags');
});
afterAll(async () => {
  for (const s of services) await s.stop();
});

describe('flags on PostgreSQL, several servers', () => {
  it('carries a change made on one server to the other within a second, and keeps its history', async () => {
    const [a, b] = [await server(), await server()];
    expect(b.values().get('cron_scheduler')).toBe(true);
    await a.setOverride('cron_scheduler', false, 'olivia', 'maintenance window');
    const ms = await within(1_000, () => b.values().get('cron_scheduler') === false);
    expect(ms).toBeLessThan(1_000);
    expect(b.get('cron_scheduler')).toMatchObject({ value: false, layer: 'override' });

    await b.unsetOverride('cron_scheduler', 'olivia', 'window over');
    await within(1_000, () => a.values().get('cron_scheduler') === true);
    const history = await pools[0]!.query<{ action: string; new_value: boolean }>("SELECT action, new_value FROM flag_changes WHERE name = 'cron_scheduler' ORDER BY id");
    expect(history.rows).toEqual([
      { action: 'set', new_value: false },
      { action: 'unset', new_value: true },
    ]);
  });

  it('refuses what the SQLite service refuses: an invariant turned off, a change without a reason', async () => {
    const a = await server();
    await expect(a.setOverride('audit_trail_security_events', false, 'mallory', 'quiet please')).rejects.toMatchObject({ code: 'INVARIANT' });
    await expect(a.setOverride('cron_scheduler', false, 'olivia', '  ')).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('still hears of changes after its listening connection was cut', async () => {
    const [a, b] = [await server(), await server()];
    // Cut every LISTEN connection to this database (as a failover or an idle timeout in a proxy would); the cluster is
    // the test run's, other files' listeners are not ours to cut.
    await pools[0]!.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND datname = current_database() AND pid <> pg_backend_pid()");
    await new Promise((r) => setTimeout(r, 400));
    await a.setOverride('batch_runner', false, 'olivia', 'after the cut');
    await within(2_000, () => b.values().get('batch_runner') === false);
  });

  it('listens again after an outage longer than one retry, on connections outside the pool', async () => {
    const owner = pg15.pool(undefined, 1); // this file's other database: the one under test can be closed to connections
    const pool = pg15.pool(database, 1);
    // A pool of one connection: the listener holds a connection of its own, so the pool still serves.
    const b = new PgFlagService({ db: pgDatabase(pool), pool, env: {}, resyncMs: 600_000 });
    await b.start();
    services.push(b);
    expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    const a = await server();
    // An outage of 2.5 s for new connections, the listening ones cut at its start.
    await owner.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS false`);
    await owner.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND datname = $1", [database]);
    await new Promise((r) => setTimeout(r, 2_500));
    await owner.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS true`);
    await new Promise((r) => setTimeout(r, 1_500));
    // No resync for ten minutes: only a notification can carry this within a second.
    await a.setOverride('auto_retraining', true, 'olivia', 'after the outage');
    const ms = await within(1_000, () => b.values().get('auto_retraining') === true);
    expect(ms).toBeLessThan(1_000);
  }, 30_000);
});
