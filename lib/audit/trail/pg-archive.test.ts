/**
 * Retention on PostgreSQL against a real cluster: the bundle of the older rows verifies, the rows are gone, the rest
 * verifies from where the archive left the chain; and the application's role (not the tables' owner) can archive but
 * cannot delete audit rows any other way.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openPool } from '@/db/pg/client';
import { PostgresDatabase, step } from '@/db/dialect';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { archivableBefore, archiveBefore, archivedEvent, verifyBundle } from './archive';
import { Checkpointer, loadOrCreateSigningKey, verifierKey } from './checkpoints';
import { PgChainWriter } from './pg-chain';
import { verifyTrail } from './verify';
import { PgAuditRecorder } from './pg-recorder';

const cluster = usePostgres();
const dir = mkdtempSync(join(tmpdir(), 'swarm-pgarchive-'));
const key = loadOrCreateSigningKey(dir);
const verifier = verifierKey(key.name, key.raw);
const appPools: pg.Pool[] = [];
afterAll(async () => {
  for (const p of appPools) await p.end();
  rmSync(dir, { recursive: true, force: true });
});

const OLD = 1_700_000_000;
const NEW = 1_790_000_000;
const denialRow = (i: number, at: number) => [null, 'deploy_serving', 'w', `{"i":${i}}`, 'agent_allowlist', `reason ${i}`, 'viewer', null, null, at + i, 'w', '[]', `dec-${i}`, 'rev_x', null];
const eventRow = (i: number, at: number) => [null, 'auth.login.succeeded', 'w', 'admin', 'succeeded', null, `{"i":${i}}`, 'rev_x', '127.0.0.1', at + i];

async function append(p: pg.Pool, at: number, denials: number, events = 0): Promise<void> {
  const client = await p.connect();
  try {
    await client.query('BEGIN');
    const w = new PgChainWriter(client);
    if (denials) await w.append('permission_denials', Array.from({ length: denials }, (_, i) => denialRow(i, at)));
    if (events) await w.append('security_events', Array.from({ length: events }, (_, i) => eventRow(i, at)));
    await client.query('COMMIT');
  } finally {
    client.release();
  }
}

/** A migrated database, and a pool on it as an application role that does not own the tables (the deployment's). */
async function withAppRole(): Promise<{ db: string; owner: pg.Pool; app: pg.Pool }> {
  const db = await cluster.freshDatabase('arch');
  const owner = cluster.pool(db);
  const role = `swarm_app_${db}`;
  await owner.query(`CREATE ROLE ${role} LOGIN`);
  // Every privilege a careless grant could give, DELETE and TRUNCATE included: the triggers must hold anyway.
  await owner.query(`GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA public TO ${role}`);
  await owner.query(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ${role}`);
  const app = openPool({ url: `postgres://${role}@127.0.0.1:${cluster.cluster.port}/${db}`, max: 2 });
  appPools.push(app);
  return { db, owner, app };
}

describe('archiveBefore on PostgreSQL', () => {
  it('moves the older rows into a signed bundle that verifies; the rows are gone and the rest verifies from the archive', async () => {
    const { app } = await withAppRole();
    await append(app, OLD, 5, 3);
    await append(app, NEW, 4, 2);
    await new Checkpointer(new PostgresDatabase(app), key).checkpoint();
    const recorder = new PgAuditRecorder(app, { revision: () => null, logAllDecisions: () => false });
    const file = join(dir, 'a1.ndjson');
    const r = await archiveBefore(new PostgresDatabase(app), key, OLD + 1_000, file, (res, tx) => step(recorder.recordWithin(tx, archivedEvent(res, 'cli:test'))));
    expect(r.chains).toEqual([
      { chain: 'permission_denials', rows: 5, fromId: 1, upToId: 5, headHash: expect.stringMatching(/^[0-9a-f]{64}$/), note: expect.stringContaining('\narchive ') },
      { chain: 'security_events', rows: 3, fromId: 1, upToId: 3, headHash: expect.stringMatching(/^[0-9a-f]{64}$/), note: expect.stringContaining('\narchive ') },
    ]);
    const text = readFileSync(file, 'utf8');
    expect(verifyBundle(text, verifier)).toEqual({ ok: true, rows: { permission_denials: 5, security_events: 3 } });
    expect(verifyBundle(text.replace('reason 2', 'reason 9'), verifier)).toMatchObject({ ok: false, problem: 'permission_denials: row 3 was changed' });

    expect((await app.query('SELECT id FROM permission_denials ORDER BY id')).rows.map((x) => x.id)).toEqual([6, 7, 8, 9]);
    const archives = await app.query('SELECT chain, up_to_id, rows, file, file_sha256 FROM audit_archives ORDER BY chain');
    expect(archives.rows).toEqual([
      { chain: 'permission_denials', up_to_id: 5, rows: 5, file, file_sha256: r.sha256 },
      { chain: 'security_events', up_to_id: 3, rows: 3, file, file_sha256: r.sha256 },
    ]);
    // The event committed with the removal, chained after the remaining rows.
    const events = await app.query<{ id: number; type: string }>('SELECT id, type FROM security_events ORDER BY id');
    expect(events.rows.at(-1)).toEqual({ id: 6, type: 'retention.archived' });

    // Appends go on, and the whole verifies from the archived head: the earlier checkpoints are covered by the archive.
    await append(app, NEW + 100, 2);
    await new Checkpointer(new PostgresDatabase(app), key).checkpoint();
    const report = await verifyTrail(new PostgresDatabase(app), verifier);
    expect(report.failures).toEqual([]);
    expect(report.chains.find((c) => c.chain === 'permission_denials')).toMatchObject({ rowsChecked: 6, archivedUpTo: 5, firstId: 6, lastId: 11, checkpoints: 2, checkpointsValid: 2 });
  });

  it('archives a whole chain: the next row follows the archived head', async () => {
    const { app } = await withAppRole();
    await append(app, OLD, 3, 1);
    const recorder = new PgAuditRecorder(app, { revision: () => null, logAllDecisions: () => false });
    const r = await archiveBefore(new PostgresDatabase(app), key, NEW, join(dir, 'a2.ndjson'), (res, tx) => step(recorder.recordWithin(tx, archivedEvent(res, 'cli:test'))));
    expect(r.chains.map((c) => c.rows)).toEqual([3, 1]);
    expect((await app.query('SELECT count(*)::int8 AS n FROM permission_denials')).rows[0].n).toBe(0);
    await append(app, NEW, 2, 1);
    await new Checkpointer(new PostgresDatabase(app), key).checkpoint();
    const report = await verifyTrail(new PostgresDatabase(app), verifier);
    expect(report.failures).toEqual([]);
    expect(report.chains.map((c) => [c.firstId, c.lastId, c.archivedUpTo])).toEqual([
      [4, 5, 3],
      [2, 3, 1],
    ]);
    // Nothing older left: the next archive removes nothing and still writes a (rowless) bundle.
    const again = await archiveBefore(new PostgresDatabase(app), key, OLD + 1_000, join(dir, 'a3.ndjson'));
    expect(again.chains.map((c) => c.rows)).toEqual([0, 0]);
  });

  it('the application role cannot delete audit rows any other way', async () => {
    const { app, owner } = await withAppRole();
    await append(app, OLD, 6, 2);
    const head = (await app.query<{ row_hash: string }>('SELECT row_hash FROM permission_denials WHERE id = 3')).rows[0]!.row_hash;
    for (const table of ['permission_denials', 'security_events']) {
      await expect(app.query(`DELETE FROM ${table} WHERE id = 1`)).rejects.toThrow(`${table} is append-only: DELETE is refused`);
      await expect(app.query(`TRUNCATE ${table}`)).rejects.toThrow(`${table} is append-only: TRUNCATE is refused`);
      await expect(app.query(`UPDATE ${table} SET timestamp = 0`)).rejects.toThrow(`${table} is append-only: UPDATE is refused`);
    }
    // The bound the archive function sets is nothing to a role that is not the tables' owner.
    const c = await app.connect();
    try {
      await c.query('BEGIN');
      await c.query("SELECT set_config('swarm.archive_permission_denials', '100', true)");
      await expect(c.query('DELETE FROM permission_denials WHERE id <= 2')).rejects.toThrow('permission_denials is append-only: DELETE is refused');
      await c.query('ROLLBACK');
    } finally {
      c.release();
    }
    // The function removes only a prefix ending at the row the caller names by its hash, exactly the rows counted.
    await expect(app.query('SELECT swarm_archive_prefix($1, $2, $3, $4, $5, $6, $7)', ['permission_denials', 3, 'f'.repeat(64), 3, 'x', 'y', 'n\narchive 1\n'])).rejects.toThrow(/row 3 of permission_denials is not the head the archive signed/);
    await expect(app.query('SELECT swarm_archive_prefix($1, $2, $3, $4, $5, $6, $7)', ['permission_denials', 3, head, 2, 'x', 'y', 'n\narchive 1\n'])).rejects.toThrow(/holds 3 rows up to 3, the archive 2/);
    await expect(app.query('SELECT swarm_archive_prefix($1, $2, $3, $4, $5, $6, $7)', ['users', 3, head, 3, 'x', 'y', 'n\narchive 1\n'])).rejects.toThrow(/users is not an audit chain/);
    // The owner, cut short of its own triggers the same way (it could drop them; the application role cannot).
    await expect(owner.query('DELETE FROM permission_denials WHERE id = 1')).rejects.toThrow('permission_denials is append-only: DELETE is refused');
    expect((await app.query('SELECT count(*)::int8 AS n FROM permission_denials')).rows[0].n).toBe(6);
    // Verified as of the time the rows were written (none yet overdue for a checkpoint).
    expect((await verifyTrail(new PostgresDatabase(app), verifier, { now: OLD + 10 })).ok).toBe(true);
  });

  it('leaves no bundle behind when the role may not archive (db/pg/app-role.sql revokes the function from it)', async () => {
    const { app, owner } = await withAppRole();
    await owner.query('REVOKE EXECUTE ON FUNCTION swarm_archive_prefix(text, bigint, text, bigint, text, text, text) FROM PUBLIC');
    await append(app, OLD, 3, 1);
    const file = join(dir, 'refused.ndjson');
    await expect(archiveBefore(new PostgresDatabase(app), key, OLD + 1_000, file)).rejects.toMatchObject({ code: 'FORBIDDEN', message: expect.stringMatching(/run swarm audit archive as the owner of the tables.*Nothing was archived/) });
    expect(existsSync(file)).toBe(false);
    expect((await app.query('SELECT count(*)::int8 AS n FROM permission_denials')).rows[0].n).toBe(3);
  });

  it('keeps the retention of a compliance profile', () => {
    const now = NEW;
    const retention = { minDays: 365, profile: 'bfsi', basis: 'RBI' };
    expect(() => archivableBefore(retention, now - 30 * 86_400, now)).toThrow(/The compliance profile bfsi keeps audit rows 365 days in the live trail \(RBI\)/);
    expect(archivableBefore(retention, now - 400 * 86_400, now)).toBe(now - 400 * 86_400);
    expect(archivableBefore(undefined, now, now)).toBe(now);
  });
});
