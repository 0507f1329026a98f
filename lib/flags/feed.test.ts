/**
 * Flags on PostgreSQL with two servers (two services on two connection pools) on a database of this file's own in the
 * test run's cluster: a change on one reaches the other within a second, also after the other's listening connection was cut.
 */
import { Socket } from 'node:net';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresDatabase } from '@/db/dialect';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { within } from '@/lib/test-support/wait';
import { FlagService } from './service';
import { SqlFlagStore } from './store';
import { testSealCheck } from '@/lib/test-support/temp-app';

const pg15 = usePostgres();
let database = '';
const services: FlagService[] = [];
const pools: pg.Pool[] = [];

async function server(): Promise<FlagService> {
  const pool = pg15.pool(database);
  pools.push(pool);
  const s = new FlagService(new SqlFlagStore(new PostgresDatabase(pool), testSealCheck()), { env: {} });
  await s.start();
  services.push(s);
  return s;
}

beforeAll(async () => {
  database = await pg15.freshDatabase('flags');
});

/** The connections listening for flag changes on this file's database (LISTEN done; the cluster is the run's). */
async function listeners(on: pg.Pool): Promise<number[]> {
  const r = await on.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND state = 'idle' AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()", [database]);
  return r.rows.map((row) => row.pid);
}

/** Cut them (as a failover or an idle timeout in a proxy would): the pids cut. */
async function cutListeners(on: pg.Pool): Promise<number[]> {
  const pids = await listeners(on);
  await on.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [pids]);
  return pids;
}

/** Until PostgreSQL has ended the sessions `pids` (pg_terminate_backend only signals them). */
async function gone(on: pg.Pool, pids: number[]): Promise<void> {
  await within(5_000, async () => (await on.query('SELECT 1 FROM pg_stat_activity WHERE pid = ANY($1::int[])', [pids])).rowCount === 0);
}
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
    // Every listener of this database cut, and gone before the change: b cannot hear it on its old connection.
    const cut = await cutListeners(pools[0]!);
    expect(cut.length).toBeGreaterThanOrEqual(2);
    await gone(pools[0]!, cut);
    await a.setOverride('batch_runner', false, 'olivia', 'after the cut');
    await within(2_000, () => b.values().get('batch_runner') === false);
  });

  it('listens again after an outage longer than one retry, on connections outside the pool', async () => {
    const owner = pg15.pool(undefined, 1); // this file's other database: the one under test can be closed to connections
    const pool = pg15.pool(database, 1);
    // Every connection b opens that the server then closes, counted: its listener's connection is made with the
    // pool's settings (db/pg/client.ts, dedicatedClient), so pg's `stream` setting is where the test sees each one.
    let closed = 0;
    Object.assign(pool.options, { stream: () => new Socket().once('close', () => void closed++) });
    // A pool of one connection: the listener holds a connection of its own, so the pool still serves.
    const b = new FlagService(new SqlFlagStore(new PostgresDatabase(pool), testSealCheck()), { env: {}, resyncMs: 600_000 });
    await b.start();
    services.push(b);
    expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    const a = await server();
    // An outage for new connections, the listening ones cut at its start, that lasts until b's listener has been
    // refused twice (more than one retry, 1 s apart): the cut connection and two attempts closed by the server.
    const mark = closed;
    await owner.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS false`);
    const cut = await cutListeners(owner);
    expect(cut.length).toBeGreaterThanOrEqual(2);
    await gone(owner, cut);
    await within(10_000, () => closed >= mark + 3);
    await owner.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS true`);
    // Every listener back (a's and b's among them): b has not given up after its failed retries.
    await within(5_000, async () => (await listeners(owner)).length === cut.length);
    // No resync for ten minutes: only a notification can carry this within a second.
    await a.setOverride('auto_retraining', true, 'olivia', 'after the outage');
    const ms = await within(1_000, () => b.values().get('auto_retraining') === true);
    expect(ms).toBeLessThan(1_000);
  }, 30_000);
});
