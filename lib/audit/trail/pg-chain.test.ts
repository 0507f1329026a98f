/**
 * The audit trail on PostgreSQL, on databases of this file's own in the test run's cluster: the migrations, the append-only triggers, one chain written by several writers at once, verification,
 * and a SQLite trail copied across with its hashes unchanged.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '@/db/client';
import { parseDbLocation } from '@/db/location';
import { DatabaseUnavailable, migratePostgres, openPool } from '@/db/pg/client';
import { copySqliteToPostgres, COPIED_TABLES, CopyRefused } from '@/db/pg/copy';
import { PostgresDatabase } from '@/db/dialect';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { tempApp } from '@/lib/test-support/temp-app';
import { CHAIN_COLUMNS, GENESIS_HASH, rowHash } from './chain';
import { PgChainWriter } from './pg-chain';
import { verifyTrail } from './verify';

const pg15 = usePostgres();
const pool = (database?: string) => pg15.pool(database);

/** The rows below are written at this time: verified as of it, none is yet overdue for a checkpoint. */
const WRITTEN = { now: 1_790_000_010 };
const denialRow = (i: number, writer: string) => [null, 'deploy_serving', writer, `{"i":${i}}`, 'agent_allowlist', `reason ${i}`, 'viewer', null, null, 1_790_000_000 + i / 7, writer, '[]', `dec-${writer}-${i}`, 'rev_x', null];
const eventRow = (i: number, writer: string) => [null, 'auth.login.succeeded', writer, 'admin', 'succeeded', null, `{"i":${i}}`, 'rev_x', '127.0.0.1', 1_790_000_000 + i];

async function appendIn(p: pg.Pool, rows: { denials?: unknown[][]; events?: unknown[][] }): Promise<void> {
  const client = await p.connect();
  try {
    await client.query('BEGIN');
    const w = new PgChainWriter(client);
    if (rows.denials) await w.append('permission_denials', rows.denials);
    if (rows.events) await w.append('security_events', rows.events);
    await client.query('COMMIT');
  } finally {
    client.release();
  }
}

describe('PostgreSQL: schema and migrations', () => {
  it('migrates once when several servers start together, with the same tables and columns as SQLite', async () => {
    const fresh = await pg15.emptyDatabase('fresh');
    const [a, b, c] = [pool(fresh), pool(fresh), pool(fresh)];
    await Promise.all([migratePostgres(a, 'a'), migratePostgres(b, 'b'), migratePostgres(c, 'c')]);
    const applied = await a.query<{ n: number }>('SELECT count(*)::int8 AS n FROM drizzle.__drizzle_migrations');
    expect(applied.rows[0]!.n).toBe(readFileSync(join('db/pg/migrations/meta/_journal.json'), 'utf8').match(/"tag"/g)!.length);

    const sqlite = openDatabase({ path: join(pg15.cluster.dir, 'parity.db') }).$client;
    for (const table of COPIED_TABLES) {
      const inSqlite = (sqlite.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((r) => r.name).sort();
      const inPg = (await a.query<{ column_name: string }>('SELECT column_name FROM information_schema.columns WHERE table_name = $1', [table])).rows.map((r) => r.column_name).sort();
      expect({ table, columns: inPg }).toEqual({ table, columns: inSqlite });
    }
    sqlite.close();
  });

  it('refuses UPDATE, DELETE and TRUNCATE on the audit trail, naming the table', async () => {
    const p = pool();
    await migratePostgres(p, pg15.cluster.url);
    await appendIn(p, { denials: [denialRow(0, 'x')], events: [eventRow(0, 'x')] });
    for (const table of ['permission_denials', 'security_events']) {
      await expect(p.query(`UPDATE ${table} SET timestamp = 0`)).rejects.toThrow(`${table} is append-only: UPDATE is refused`);
      await expect(p.query(`DELETE FROM ${table}`)).rejects.toThrow(`${table} is append-only: DELETE is refused`);
      await expect(p.query(`TRUNCATE ${table}`)).rejects.toThrow(`${table} is append-only: TRUNCATE is refused`);
    }
    await p.query(
      `INSERT INTO approvals (id, gate, agent_name, tool_name, arguments_canonical, arguments_redacted, arguments_hash, requested_by, requested_at, expires_at, rule_source, status)
       VALUES ('apr_x', 'deploy', 'deployer', 'deploy_serving', '{}', '{}', 'h', 'agent:deployer', 1, 2, 'hitl:deploy', 'pending')`,
    );
    await expect(p.query('DELETE FROM approvals')).rejects.toThrow('approvals is append-only: DELETE is refused');
    await expect(p.query("UPDATE approvals SET status = 'approved' WHERE id = 'apr_x'")).resolves.toMatchObject({ rowCount: 1 });
  });

  it('says which database cannot be reached, without its password', async () => {
    const dead = openPool({ url: 'postgres://swarm:s3cret-pw@127.0.0.1:1/swarm', connectionTimeoutMs: 1_000 });
    const error = await migratePostgres(dead, 'postgres://swarm:s3cret-pw@127.0.0.1:1/swarm').catch((e: unknown) => e);
    await dead.end();
    expect(error).toBeInstanceOf(DatabaseUnavailable);
    expect((error as Error).message).toMatch(/^PostgreSQL at postgres:\/\/swarm:\*\*\*@127\.0\.0\.1:1\/swarm is not available \(ECONNREFUSED/);
    expect((error as Error).message).not.toContain('s3cret');
  });
});

describe('PostgreSQL: one audit chain, several writers', () => {
  it('keeps one dense chain when writers on separate connections append to both tables at once', async () => {
    const p = pool();
    await migratePostgres(p, pg15.cluster.url);
    const before = (await p.query<{ n: number }>('SELECT count(*)::int8 AS n FROM permission_denials')).rows[0]!.n;
    const writers = ['w1', 'w2', 'w3', 'w4'].map((w) => ({ w, p: pool() }));
    await Promise.all(
      writers.map(async ({ w, p: wp }) => {
        for (let t = 0; t < 15; t++) {
          await appendIn(wp, { denials: [denialRow(2 * t, w), denialRow(2 * t + 1, w)], events: [eventRow(t, w)] });
        }
      }),
    );
    const ids = (await p.query<{ id: number }>('SELECT id FROM permission_denials ORDER BY id')).rows.map((r) => r.id);
    expect(ids).toEqual(Array.from({ length: before + 120 }, (_, i) => i + 1));
    const report = await verifyTrail(new PostgresDatabase(p), undefined, WRITTEN);
    expect(report.failures).toEqual([]);
    expect(report.chains.map((c) => [c.chain, c.rowsChecked])).toEqual([
      ['permission_denials', before + 120],
      ['security_events', before + 60],
    ]);
    // The hashes are SQLite's: the first row is the genesis' successor, encoded the same way.
    const first = (await p.query<unknown[]>({ text: `SELECT id, ${CHAIN_COLUMNS.permission_denials.join(', ')}, row_hash FROM permission_denials WHERE id = 1`, rowMode: 'array' })).rows[0]!;
    expect(first.at(-1)).toBe(rowHash(GENESIS_HASH, 1, first.slice(1, -1)));
  });

  it('waits for a server of the previous release, which locks the trail by its number, before it appends', async () => {
    const p = pool();
    await migratePostgres(p, pg15.cluster.url);
    // The chain append of earlier releases: pg_advisory_xact_lock(7318221905002), held here in an open transaction.
    const old = await pool().connect();
    try {
      await old.query('BEGIN');
      await old.query('SELECT pg_advisory_xact_lock(7318221905002)');
      let appended = false;
      const append = appendIn(pool(), { denials: [denialRow(0, 'new-release')] }).then(() => (appended = true));
      // The new release's append is waiting on that very lock (pg_locks shows it), not appending beside it.
      await expect.poll(async () => (await p.query<{ n: number }>("SELECT count(*)::int8 AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")).rows[0]!.n, { timeout: 10_000 }).toBe(1);
      expect(appended).toBe(false);
      await old.query('COMMIT');
      await append;
      expect(appended).toBe(true);
    } finally {
      old.release();
    }
  });

  it('finds a row changed behind the triggers, and a row removed, at their ids', async () => {
    const p = pool(await pg15.emptyDatabase('tamper'));
    await migratePostgres(p, pg15.cluster.url);
    await appendIn(p, { denials: [0, 1, 2, 3, 4].map((i) => denialRow(i, 'x')) });
    // The owner of the tables can lift a trigger: exactly what the application's role must not be able to do.
    await p.query('ALTER TABLE permission_denials DISABLE TRIGGER permission_denials_no_change');
    await p.query("UPDATE permission_denials SET reason = 'nothing to see' WHERE id = 3");
    let report = await verifyTrail(new PostgresDatabase(p), undefined, WRITTEN);
    expect(report.failures).toEqual([expect.objectContaining({ table: 'permission_denials', id: 3, problem: 'changed' })]);
    await p.query('DELETE FROM permission_denials WHERE id IN (3, 4)');
    report = await verifyTrail(new PostgresDatabase(p), undefined, WRITTEN);
    expect(report.failures).toEqual([expect.objectContaining({ table: 'permission_denials', id: 3, problem: 'missing' })]);
  });
});

describe('swarm db copy: a SQLite trail moved to PostgreSQL', () => {
  it('copies every table with its ids and hashes; the chains verify there and end where they ended', async () => {
    const t = tempApp();
    try {
      const a = t.app;
      for (let i = 0; i < 30; i++) a.engine.decide({ kind: 'tool', principal: { kind: 'agent', id: 'deployer', role: 'viewer', agent: 'deployer' }, agent: 'deployer', tool: 'train_model', arguments: { i } });
      await a.auth.createUser('olivia', 'operator', 'pw-olivia-123');
      await a.flags.setOverride('cron_scheduler', false, 'olivia', 'maintenance');
      // A reviewed change to the rules (advisory without a profile): its proposal and vote are copied too.
      const proposal = await a.changeControl.propose({ texts: { ...a.ruleTexts(), policy: 'rules:\n  - { id: x, decision: DENY, match: { tool: run_batch } }\n' }, message: 'freeze', by: { id: 'admin', role: 'admin' } });
      await a.changeControl.vote(proposal.id, { id: 'olivia', role: 'admin' }, 'approve', 'ok');
      a.checkpointAudit();
      const key = readFileSync(join(t.dir, 'audit-signing-key.pub'), 'utf8');
      const copied = await pg15.emptyDatabase('copied');
      const target = pool(copied);
      await migratePostgres(target, pg15.cluster.urlOf(copied));
      const report = await copySqliteToPostgres(t.dbPath, target, key);
      expect(report.source.ok).toBe(true);
      expect(report.target.failures).toEqual([]);
      expect(report.headsMatch).toBe(true);
      expect(report.target.chains.find((c) => c.chain === 'permission_denials')).toMatchObject({ rowsChecked: 30, checkpointsValid: 1 });
      expect(report.tables.find((x) => x.table === 'users')!.rows).toBe(1);
      expect(report.tables.filter((x) => x.table.startsWith('policy_p') || x.table === 'policy_votes').map((x) => [x.table, x.rows])).toEqual([
        ['policy_proposals', 1],
        ['policy_votes', 1],
      ]);
      // Identity columns continue after the copied ids: the next vote gets a new one.
      await target.query(`INSERT INTO policy_votes (proposal_id, voter, voter_role, vote, reason, voted_at) VALUES ($1, 'carl', 'admin', 'approve', 'ok', 1)`, [proposal.id]);
      // The copy continues the chain: a new row follows the copied head.
      await appendIn(target, { denials: [denialRow(99, 'after-copy')] });
      expect((await verifyTrail(new PostgresDatabase(target), key, WRITTEN)).failures).toEqual([]);
      // A second copy into the same database is refused, nothing half-written.
      await expect(copySqliteToPostgres(t.dbPath, target, key)).rejects.toThrow(CopyRefused);
    } finally {
      t.cleanup();
    }
  });
});

describe('SWARM_DB', () => {
  it('is a file path, a PostgreSQL URL, or refused with the reason', () => {
    expect(parseDbLocation(undefined)).toEqual({ kind: 'sqlite', path: 'data/swarm.db' });
    expect(parseDbLocation('data/x.db')).toEqual({ kind: 'sqlite', path: 'data/x.db' });
    expect(parseDbLocation('file:///var/lib/swarm/x.db')).toEqual({ kind: 'sqlite', path: '/var/lib/swarm/x.db' });
    expect(parseDbLocation('postgres://app:pw@db.internal:5432/swarm')).toEqual({ kind: 'postgres', url: 'postgres://app:pw@db.internal:5432/swarm', shown: 'postgres://app:***@db.internal:5432/swarm' });
    expect(() => parseDbLocation('mysql://app@db/swarm')).toThrow(/scheme "mysql:", which this product cannot use/);
    expect(() => parseDbLocation('postgres://db.internal:5432/')).toThrow(/names no database/);
    // A password never shows, wherever the URL carries it; a socket folder in ?host= is a host.
    expect(parseDbLocation('postgres://app@db:5432/swarm?password=secret&sslpassword=s2&application_name=x')).toMatchObject({ shown: 'postgres://app@db:5432/swarm?password=***&sslpassword=***&application_name=x' });
    expect(parseDbLocation('postgres://app:pw@/swarm?host=/run/postgresql&port=5433')).toMatchObject({ kind: 'postgres', shown: 'postgres://app:***@/swarm?host=/run/postgresql&port=5433' });
    expect(() => parseDbLocation('postgres://app:pw@/swarm')).toThrow(/names no host/);
  });
});
