/**
 * The dialect port's contract, on a real SQLite file and a real PostgreSQL database: the same statements answer the
 * same rows; a transaction commits together or not at all; what each database does differently (the writer lock and
 * advisory locks, ILIKE, the change feed) behaves as the stores rely on.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql, type SQL } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from './client';
import { inTransaction } from './pg/client';
import { PostgresDatabase, postgresTx, SqliteDatabase, sqliteTx, step, TransactionWouldWait, type SqlDatabase, type TextIndex, type TxRunner, type TxSteps } from './dialect';
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
  // The free-text search walks JSON with a recursive query whose estimated cost sets off PostgreSQL's JIT compiler,
  // about a second per statement on a busy machine whatever the table's size: the semantics tested here do not
  // depend on it.
  await pg15.pool('swarm', 1).query(`ALTER DATABASE ${name} SET jit = off`);
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

  it("lets a per-database module write on a transaction's own connection: it commits and rolls back with the body", async () => {
    const n = () => db().one<{ n: number }>(sql`SELECT count(*) AS n FROM flag_overrides WHERE name LIKE ${`${kind}_own%`}`).then((r) => Number(r!.n));
    // What a per-database writer does (the audit chain's append): its own statement, on the transaction's connection.
    const own = (tx: TxRunner, name: string) =>
      step(
        tx.dialect === 'sqlite'
          ? void sqliteTx(tx).client.prepare("INSERT INTO flag_overrides (name, value, set_by, set_at, reason) VALUES (?, 1, 'test', 1, 'own')").run(name)
          : postgresTx(tx).client.query("INSERT INTO flag_overrides (name, value, set_by, set_at, reason) VALUES ($1, true, 'test', 1, 'own')", [name]).then(() => undefined),
      );
    await db().transaction(function* (tx: TxRunner): TxSteps<void> {
      yield* own(tx, `${kind}_own1`);
      yield* tx.run(flag(`${kind}_own2`, true));
    });
    expect(await n()).toBe(2);
    await expect(
      db().transaction(function* (tx: TxRunner): TxSteps<void> {
        yield* own(tx, `${kind}_own3`);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await n()).toBe(2);
    // A transaction is only ever its own database's.
    await db().transaction(function* (tx: TxRunner): TxSteps<void> {
      expect(() => (kind === 'SQLite' ? postgresTx(tx) : sqliteTx(tx))).toThrow(/is not a transaction of a/);
    });
  });

  it('runs a body inside a transaction already open (a group of decisions): committed with it, or rolled back with it', async () => {
    const names = (prefix: string) =>
      db().all<{ name: string }>(sql`SELECT name FROM flag_overrides WHERE name LIKE ${`${kind}_${prefix}%`} ORDER BY name`).then((r) => r.map((x) => x.name));
    const body = (name: string) =>
      function* (tx: TxRunner): TxSteps<number> {
        return yield* tx.run(flag(name, true));
      };
    // A transaction open on the connection (SQLite: the decision listener's group) writes a row, and a store's body runs inside it.
    const outer = async (prefix: string, fail: boolean): Promise<void> => {
      if (kind === 'SQLite') {
        const d = db() as SqliteDatabase;
        d.client.transaction(() => {
          d.client.prepare(`INSERT INTO flag_overrides (name, value, set_by, set_at, reason) VALUES (?, 1, 'test', 1, 'r')`).run(`${kind}_${prefix}_outer`);
          expect(d.transactionSync(body(`${kind}_${prefix}_inner`))).toBe(1);
          if (fail) throw new Error('the store failed after its listener');
        })();
      } else {
        await db().transaction(function* (tx: TxRunner): TxSteps<void> {
          yield* tx.run(flag(`${kind}_${prefix}_outer`, true));
          expect(yield* body(`${kind}_${prefix}_inner`)(tx)).toBe(1);
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

  it('answers integers as numbers: a count, and a sum of bigints (numeric on PostgreSQL), exact up to 2^53', async () => {
    // The report sums counts (count(*) is bigint on PostgreSQL, its sum numeric); SQLite answers integers for both.
    const row = await db().one<{ n: unknown; total: unknown; big: unknown; half: unknown }>(
      sql`SELECT count(*) AS n, sum(c) AS total, sum(c) * 1099511627776 AS big, avg(c) AS half
            FROM (SELECT count(*) AS c FROM flag_overrides UNION ALL SELECT count(*) AS c FROM flag_changes UNION ALL SELECT 1 AS c) AS parts`,
    );
    const [overrides, changes] = await Promise.all([
      db().one<{ n: unknown }>(sql`SELECT count(*) AS n FROM flag_overrides`),
      db().one<{ n: unknown }>(sql`SELECT count(*) AS n FROM flag_changes`),
    ]);
    expect(typeof overrides!.n).toBe('number');
    const total = (overrides!.n as number) + (changes!.n as number) + 1;
    expect(row).toEqual({ n: 3, total, big: total * 1099511627776, half: total / 3 });
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

/**
 * A small table with free text, made the way each database keeps it: on SQLite with its FTS5 trigram index and the
 * index's progress (as a migration would), on PostgreSQL with a column in an English collation (ICU), so that byte
 * order is not the database's own order there.
 */
async function textTable(kind: 'SQLite' | 'PostgreSQL', db: SqlDatabase): Promise<TextIndex> {
  if (kind === 'SQLite') {
    await db.run(sql`CREATE TABLE dialect_text (id INTEGER PRIMARY KEY, label TEXT, body TEXT)`);
    await db.run(sql`CREATE VIRTUAL TABLE dialect_text_search USING fts5(label, body, content='', contentless_delete=1, tokenize='trigram')`);
    await db.run(sql`CREATE TABLE dialect_text_progress (id INTEGER PRIMARY KEY CHECK (id = 0), indexed_up_to INTEGER NOT NULL)`);
    await db.run(sql`INSERT INTO dialect_text_progress (id, indexed_up_to) VALUES (0, 0)`);
  } else {
    await db.run(sql`CREATE TABLE dialect_text (id bigint PRIMARY KEY, label text COLLATE "en-US-x-icu", body text)`);
  }
  return {
    table: 'dialect_text',
    key: 'id',
    columns: [
      { name: 'label', text: sql`"dialect_text"."label"` },
      { name: 'body', text: db.jsonLines(sql`"dialect_text"."body"`) },
    ],
    fts: 'dialect_text_search',
    progress: 'dialect_text_progress',
  };
}

const addText = (db: SqlDatabase, id: number, label: string, body: string | null) => db.run(sql`INSERT INTO dialect_text (id, label, body) VALUES (${id}, ${label}, ${body})`);

describe.each(['SQLite', 'PostgreSQL'] as const)('what the dialect port writes differently, on %s', (kind) => {
  const db = () => databases[kind]!.db;
  let index: TextIndex;
  beforeAll(async () => {
    index = await textTable(kind, db());
    const rows: [string, string | null][] = [
      ['Deploy to PROD', '{"env":"prod"}'],
      ['other', '{"env":"staging","model_id":"m-42","trials":500}'],
      ['100% of budget', null],
      ['a_b', '{}'],
      ['nested', '{"list":[1,"prod"],"ok":true}'],
    ];
    for (const [i, [label, body]] of rows.entries()) await addText(db(), i + 1, label, body);
  });

  const matching = async (text: string) =>
    (await db().all<{ id: number }>(sql`SELECT id FROM dialect_text WHERE ${db().textMatch(index, text)} ORDER BY id`)).map((r) => Number(r.id));
  const page = async (text: string, order: 'asc' | 'desc', limit: number, where?: SQL) =>
    (await db().textPage<{ id: number }>(index, text, { select: sql`id`, where, order, limit })).map((r) => Number(r.id));

  it('finds text ignoring case, literally, in the rows the index holds and in those written after it, and pages in key order', async () => {
    const found = async () => ({
      prod: await matching('prod'),
      copied: await matching('"env": "prod"'),
      percent: await matching('0% of'),
      underscore: await matching('a_b'),
      desc: await page('PROD', 'desc', 2),
      asc: await page('prod', 'asc', 2),
      before5: await page('prod', 'desc', 5, sql`"dialect_text"."id" < 5`),
    });
    const expected = { prod: [1, 5], copied: [1], percent: [3], underscore: [4], desc: [5, 1], asc: [1, 5], before5: [1] };
    // Before the index holds anything (SQLite scans the rows after it), after it caught up, and with a newer row.
    expect(await found()).toEqual(expected);
    expect(await db().indexText(index, 3)).toBe(kind === 'SQLite' ? 3 : 0);
    expect(await found()).toEqual(expected);
    expect(await db().indexText(index)).toBe(kind === 'SQLite' ? 2 : 0);
    expect(await db().indexText(index)).toBe(0);
    expect(await found()).toEqual(expected);
    await addText(db(), 6, 'Prod again', null);
    expect(await matching('prod')).toEqual([1, 5, 6]);
    expect(await page('prod', 'desc', 2)).toEqual([6, 5]);
    expect(await db().indexText(index)).toBe(kind === 'SQLite' ? 1 : 0);
    expect(await page('prod', 'desc', 2)).toEqual([6, 5]);
  });

  it('writes JSON as a search sees it, the same on both', async () => {
    const lines = async (json: string | null) => (await db().one<{ t: string | null }>(sql`SELECT ${db().jsonLines(sql`${json}`)} AS t`))!.t;
    expect(await lines('{"a":1,"b":{"c":[true,null,"x"]},"d":"q\\"","e":-2.5}')).toBe('"a": 1\n"b": {\n"c": [\ntrue\nnull\n"x"\n"d": "q\\""\n"e": -2.5');
    expect(await lines('[1,"two",{"three":3}]')).toBe('1\n"two"\n{\n"three": 3');
    expect(await lines('{"city":"café"}')).toBe('"city": "café"');
    expect(await lines('{}')).toBeNull();
    expect(await lines(null)).toBeNull();
  });

  it('truncates toward zero, compares text in byte order, reads a prefix, and keeps a column off its index', async () => {
    const r = await db().one<{ a: number; b: number }>(sql`SELECT ${db().truncate(sql.raw('-2.5'))} AS a, ${db().truncate(sql.raw('7.9'))} AS b`);
    expect([Number(r!.a), Number(r!.b)]).toEqual([-2, 7]);
    const labels = ['Zed', 'alice', 'policy:a', 'policyx', 'policy', 'Élan', 'élan', 'x\u{1F600}y', 'x\u{1F601}'];
    for (const [i, label] of labels.entries()) await addText(db(), 100 + i, label, null);
    const ordered = async (by: SQL, where: SQL = sql`id >= 100`) => (await db().all<{ label: string }>(sql`SELECT label FROM dialect_text WHERE ${where} ORDER BY ${by}, id`)).map((x) => x.label);
    const bytes = [...labels].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect(await ordered(db().bytewise(sql`label`))).toEqual(bytes);
    // PostgreSQL's own order of the column is not byte order: the test would prove nothing otherwise.
    if (kind === 'PostgreSQL') expect(await ordered(sql`label`)).not.toEqual(bytes);
    const prefixed = async (prefix: string) => ordered(sql`label`, sql`id >= 100 AND ${db().startsWith(sql`"dialect_text"."label"`, prefix)}`);
    expect(await prefixed('policy:')).toEqual(['policy:a']);
    expect((await prefixed('policy')).sort()).toEqual(['policy', 'policy:a', 'policyx']);
    expect(await prefixed('Pol')).toEqual([]);
    expect(await prefixed('É')).toEqual(['Élan']);
    // A prefix ending in a character outside the BMP (no next code unit keeps the order): compared as it is.
    expect(await prefixed('x\u{1F600}')).toEqual(['x\u{1F600}y']);
    expect(await ordered(sql`label`, sql`${db().unindexed(sql`"dialect_text"."label"`)} = ${'alice'}`)).toEqual(['alice']);
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
