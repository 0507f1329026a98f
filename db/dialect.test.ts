/**
 * The dialect port's contract, on a real SQLite file and a real PostgreSQL database: the same statements answer the
 * same rows; a transaction commits together or not at all; what each database does differently (the writer lock and
 * advisory locks, ILIKE, the change feed) behaves as the stores rely on.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from './client';
import { inTransaction } from './pg/client';
import { PostgresDatabase, SqliteDatabase, TransactionWouldWait, type SqlDatabase, type TxRunner, type TxSteps } from './dialect';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { within } from '@/lib/test-support/wait';

const pg15 = usePostgres();
const dir = mkdtempSync(join(tmpdir(), 'swarm-dialect-'));
const closers: (() => unknown)[] = [];
const databases: Partial<Record<'SQLite' | 'PostgreSQL', { db: SqlDatabase; second: SqlDatabase }>> = {};

beforeAll(async () => {
  const path = join(dir, 'd.db');
  const [a, b] = [openDatabase({ path }), openDatabase({ path })];
  closers.push(() => a.$client.close(), () => b.$client.close());
  databases.SQLite = { db: new SqliteDatabase(a.$client), second: new SqliteDatabase(b.$client) };
  const name = await pg15.freshDatabase('dialect');
  databases.PostgreSQL = { db: new PostgresDatabase(pg15.pool(name, 4)), second: new PostgresDatabase(pg15.pool(name, 4)) };
});
afterAll(() => {
  for (const c of closers.splice(0)) c();
  rmSync(dir, { recursive: true, force: true });
});

const flag = (name: string, value: boolean) => sql`INSERT INTO flag_overrides (name, value, set_by, set_at, reason) VALUES (${name}, ${value}, 'test', 1, 'r')`;

describe.each(['SQLite', 'PostgreSQL'] as const)('the dialect port on %s', (kind) => {
  const db = () => databases[kind]!.db;

  it('runs portable statements with bound parameters, booleans included', async () => {
    expect(await db().run(flag(`${kind}_a`, true))).toBe(1);
    expect(await db().run(flag(`${kind}_b`, false))).toBe(1);
    const rows = await db().all<{ name: string; value: unknown }>(sql`SELECT name, value FROM flag_overrides WHERE name LIKE ${`${kind}_%`} ORDER BY name`);
    expect(rows.map((r) => [r.name, r.value === true || r.value === 1])).toEqual([
      [`${kind}_a`, true],
      [`${kind}_b`, false],
    ]);
    expect(await db().one(sql`SELECT name FROM flag_overrides WHERE name = ${"it's not there"}`)).toBeUndefined();
  });

  it('commits a transaction whole, and rolls it back whole when its body throws', async () => {
    const n = () => db().one<{ n: number }>(sql`SELECT count(*) AS n FROM flag_overrides WHERE name LIKE ${`${kind}_tx%`}`).then((r) => Number(r!.n));
    const out = await db().transaction(function* (tx: TxRunner): TxSteps<number> {
      yield* tx.run(flag(`${kind}_tx1`, true));
      yield* tx.run(flag(`${kind}_tx2`, true));
      return yield* tx.run(sql`UPDATE flag_overrides SET reason = 'both' WHERE name LIKE ${`${kind}_tx%`}`);
    });
    expect(out).toBe(2);
    await expect(
      db().transaction(function* (tx: TxRunner): TxSteps<void> {
        yield* tx.run(flag(`${kind}_tx3`, true));
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await n()).toBe(2);
    // A statement that fails rolls back what the transaction wrote before it.
    await expect(
      db().transaction(function* (tx: TxRunner): TxSteps<void> {
        yield* tx.run(flag(`${kind}_tx4`, true));
        yield* tx.run(flag(`${kind}_tx1`, true)); // the primary key is taken
      }),
    ).rejects.toThrow();
    expect(await n()).toBe(2);
  });

  it('runs a body inside a transaction a store already holds: committed with it, or rolled back with it', async () => {
    const names = (prefix: string) =>
      db().all<{ name: string }>(sql`SELECT name FROM flag_overrides WHERE name LIKE ${`${kind}_${prefix}%`} ORDER BY name`).then((r) => r.map((x) => x.name));
    const body = (name: string) =>
      function* (tx: TxRunner): TxSteps<number> {
        return yield* tx.run(flag(name, true));
      };
    // The store's own transaction (the approval store's, say) writes a row, and its listener runs a body inside it.
    const outer = async (prefix: string, fail: boolean): Promise<void> => {
      if (kind === 'SQLite') {
        const d = db() as SqliteDatabase;
        d.client.transaction(() => {
          d.client.prepare(`INSERT INTO flag_overrides (name, value, set_by, set_at, reason) VALUES (?, 1, 'test', 1, 'r')`).run(`${kind}_${prefix}_outer`);
          expect(d.transactionSync(body(`${kind}_${prefix}_inner`))).toBe(1);
          if (fail) throw new Error('the store failed after its listener');
        })();
      } else {
        const d = db() as PostgresDatabase;
        await inTransaction(d.pool, async ({ client }) => {
          await client.query(`INSERT INTO flag_overrides (name, value, set_by, set_at, reason) VALUES ($1, true, 'test', 1, 'r')`, [`${kind}_${prefix}_outer`]);
          expect(await d.within(client, body(`${kind}_${prefix}_inner`))).toBe(1);
          if (fail) throw new Error('the store failed after its listener');
        });
      }
    };
    await outer('kept', false);
    expect(await names('kept')).toEqual([`${kind}_kept_inner`, `${kind}_kept_outer`]);
    await expect(outer('lost', true)).rejects.toThrow('the store failed after its listener');
    expect(await names('lost')).toEqual([]);
  });

  it('matches ignoring ASCII case with ilike on both', async () => {
    await db().run(flag(`${kind}_MiXeD`, true));
    const rows = await db().all<{ name: string }>(sql`SELECT name FROM flag_overrides WHERE ${db().ilike(sql`name`, `${kind.toLowerCase()}\\_mixed`)}`);
    expect(rows.map((r) => r.name)).toEqual([`${kind}_MiXeD`]);
  });

  it('runs the transactions of one serialised key one at a time', async () => {
    await db().run(sql`INSERT INTO flag_overrides (name, value, set_by, set_at, reason) VALUES (${`${kind}_counter`}, ${true}, 'test', 0, 'r')`);
    const bump = (d: SqlDatabase) =>
      d.transaction(
        function* (tx: TxRunner): TxSteps<void> {
          const row = yield* tx.one<{ setAt: number }>(sql`SELECT set_at AS "setAt" FROM flag_overrides WHERE name = ${`${kind}_counter`}`);
          yield* tx.run(sql`UPDATE flag_overrides SET set_at = ${Number(row!.setAt) + 1} WHERE name = ${`${kind}_counter`}`);
        },
        { serialise: `counter:${kind}` },
      );
    const { db: a, second: b } = databases[kind]!;
    // Read-modify-write from two "servers" at once: without the serialisation, increments would be lost.
    await Promise.all(Array.from({ length: 20 }, (_, i) => bump(i % 2 ? a : b)));
    expect(Number((await db().one<{ setAt: number }>(sql`SELECT set_at AS "setAt" FROM flag_overrides WHERE name = ${`${kind}_counter`}`))!.setAt)).toBe(20);
  });

  it("tells a listener of another process's commit (the change feed)", async () => {
    const { db: a, second: b } = databases[kind]!;
    let heard = 0;
    const stop = await b.changes('swarm_test', () => void heard++, { pollMs: 50 });
    try {
      await a.transaction(function* (tx: TxRunner): TxSteps<void> {
        yield* tx.run(flag(`${kind}_feed`, true));
        yield* tx.publish('swarm_test');
      });
      await within(2_000, () => heard > 0);
    } finally {
      await stop();
    }
  });
});

describe('SQLite transactions', () => {
  it('refuse a body that waits for anything but a statement, and roll it back', async () => {
    const db = databases.SQLite!.db as SqliteDatabase;
    await expect(
      db.transaction(function* (tx: TxRunner): TxSteps<void> {
        yield* tx.run(flag('sqlite_waited', true));
        // Waiting for I/O while holding the writer lock would stall every other writer of the file.
        yield new Promise((r) => setTimeout(r, 1));
      }),
    ).rejects.toBeInstanceOf(TransactionWouldWait);
    expect(await db.one(sql`SELECT name FROM flag_overrides WHERE name = 'sqlite_waited'`)).toBeUndefined();
    expect(db.client.inTransaction).toBe(false);
  });
});
