/**
 * Signed checkpoints on PostgreSQL, against the test run's real cluster: heads
 * signed when they moved, checked by verifyAuditPg with the installation's key, two signers at once while servers
 * append, and tampering behind the triggers still found.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresDatabase } from '@/db/dialect';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { Checkpointer, KeyDirRequired, keyDirFor, loadOrCreateSigningKey, openCheckpoint, parseVerifierKey, verifierKey } from './checkpoints';
import { PgChainWriter } from './pg-chain';
import { verifyTrail } from './verify';

const cluster = usePostgres();
const keyDir = mkdtempSync(join(tmpdir(), 'swarm-pgkey-'));
const key = loadOrCreateSigningKey(keyDir);
const verifier = verifierKey(key.name, key.raw);
afterAll(() => rmSync(keyDir, { recursive: true, force: true }));

const denialRow = (i: number) => [null, 'deploy_serving', 'w', `{"i":${i}}`, 'agent_allowlist', `reason ${i}`, 'viewer', null, null, 1_790_000_000 + i, 'w', '[]', `dec-${i}`, 'rev_x', null];
const eventRow = (i: number) => [null, 'auth.login.succeeded', 'w', 'admin', 'succeeded', null, `{"i":${i}}`, 'rev_x', '127.0.0.1', 1_790_000_000 + i];

async function append(p: pg.Pool, denials: number, events = 0, from = 0): Promise<void> {
  const client = await p.connect();
  try {
    await client.query('BEGIN');
    const w = new PgChainWriter(client);
    if (denials) await w.append('permission_denials', Array.from({ length: denials }, (_, i) => denialRow(from + i)));
    if (events) await w.append('security_events', Array.from({ length: events }, (_, i) => eventRow(from + i)));
    await client.query('COMMIT');
  } finally {
    client.release();
  }
}

async function fresh(): Promise<pg.Pool> {
  return cluster.pool(await cluster.freshDatabase('cp'));
}

describe('Checkpointer on PostgreSQL', () => {
  it('signs the head of each chain that moved, in the C2SP note format, and verifyAuditPg checks them', async () => {
    const pool = await fresh();
    const signer = new Checkpointer(new PostgresDatabase(pool), key);
    expect(await signer.checkpoint()).toEqual([]);
    expect(await signer.latest()).toEqual([]);

    await append(pool, 5, 2);
    const notes = await signer.checkpoint();
    expect(notes).toHaveLength(2);
    const opened = openCheckpoint(notes[0]!, parseVerifierKey(verifier));
    expect(opened).toMatchObject({ ok: true, body: { origin: 'swarm-permissions/permission_denials', size: 5 } });
    // Nothing moved: nothing signed.
    expect(await signer.checkpoint()).toEqual([]);
    // Moved by fewer than minRows: not yet.
    await append(pool, 3);
    expect(await signer.checkpoint({ minRows: 10 })).toEqual([]);
    expect(await signer.checkpoint({ minRows: 3 })).toHaveLength(1);

    const latest = await signer.latest();
    expect(latest.map((c) => c.chain)).toEqual(['permission_denials', 'security_events']);
    expect(openCheckpoint(latest[0]!.note, parseVerifierKey(verifier))).toMatchObject({ ok: true, body: { size: 8 } });

    const report = await verifyTrail(new PostgresDatabase(pool), verifier);
    expect(report.failures).toEqual([]);
    expect(report.chains.map((c) => [c.chain, c.rowsChecked, c.checkpoints, c.checkpointsValid])).toEqual([
      ['permission_denials', 8, 2, 2],
      ['security_events', 2, 1, 1],
    ]);
  });

  it('two servers signing at once while others append: committed heads only, never two checkpoints of one size', async () => {
    const db = await cluster.freshDatabase('race');
    const [a, b, w] = [cluster.pool(db), cluster.pool(db), cluster.pool(db)];
    const [ca, cb] = [new Checkpointer(new PostgresDatabase(a), key), new Checkpointer(new PostgresDatabase(b), key)];
    let done = false;
    const writer = (async () => {
      for (let i = 0; i < 60; i++) await append(w, 3, 1, i * 3);
      done = true;
    })();
    const signing = async (c: Checkpointer) => {
      let n = 0;
      while (!done) n += (await c.checkpoint()).length;
      return n + (await c.checkpoint()).length;
    };
    const [na, nb] = await Promise.all([signing(ca), signing(cb), writer]);
    expect(na + nb).toBeGreaterThan(2);
    const dup = await a.query('SELECT chain, size, count(*)::int8 AS n FROM audit_checkpoints GROUP BY chain, size HAVING count(*) > 1');
    expect(dup.rows).toEqual([]);
    // Each signer signed the head at its time: sizes strictly rise in the order they were written.
    const sizes = await a.query<{ chain: string; size: number }>('SELECT chain, size FROM audit_checkpoints ORDER BY id');
    for (const chain of ['permission_denials', 'security_events']) {
      const s = sizes.rows.filter((r) => r.chain === chain).map((r) => r.size);
      expect(s).toEqual([...s].sort((x, y) => x - y));
      expect(s[s.length - 1]).toBe(chain === 'permission_denials' ? 180 : 60);
    }
    const report = await verifyTrail(new PostgresDatabase(a), verifier);
    expect(report.failures).toEqual([]);
    expect(report.chains.every((c) => c.checkpointsValid === c.checkpoints)).toBe(true);
  }, 60_000);

  it('tampering is still found: a changed row, a cut tail, a checkpoint of another key', async () => {
    const pool = await fresh();
    await append(pool, 10);
    await new Checkpointer(new PostgresDatabase(pool), key).checkpoint();
    // As the tables' owner could, behind the triggers.
    await pool.query('ALTER TABLE permission_denials DISABLE TRIGGER permission_denials_no_change');
    await pool.query("UPDATE permission_denials SET reason = 'nothing to see' WHERE id = 4");
    let report = await verifyTrail(new PostgresDatabase(pool), verifier);
    expect(report.failures[0]).toMatchObject({ table: 'permission_denials', id: 4, problem: 'changed' });

    await pool.query("UPDATE permission_denials SET reason = 'reason 3' WHERE id = 4");
    await pool.query('DELETE FROM permission_denials WHERE id > 8');
    await pool.query('ALTER TABLE permission_denials ENABLE TRIGGER permission_denials_no_change');
    report = await verifyTrail(new PostgresDatabase(pool), verifier);
    expect(report.failures[0]).toMatchObject({ table: 'permission_denials', id: 9, problem: 'tail truncated after a checkpoint' });

    const otherDir = mkdtempSync(join(tmpdir(), 'swarm-pgkey-other-'));
    try {
      const other = loadOrCreateSigningKey(otherDir);
      report = await verifyTrail(new PostgresDatabase(pool), verifierKey(other.name, other.raw));
      expect(report.failures[0]).toMatchObject({ table: 'audit_checkpoints', problem: 'checkpoint key unknown' });
    } finally {
      rmSync(otherDir, { recursive: true, force: true });
    }
  });

  it('finds the key on PostgreSQL only through SWARM_AUDIT_KEY_DIR, never beside a URL', () => {
    expect(() => keyDirFor('postgres://swarm@127.0.0.1:5432/swarm', {})).toThrow(KeyDirRequired);
    expect(() => keyDirFor('postgresql://swarm@db/swarm', {})).toThrow(/set SWARM_AUDIT_KEY_DIR/);
    expect(keyDirFor('postgres://swarm@127.0.0.1:5432/swarm', { SWARM_AUDIT_KEY_DIR: keyDir })).toBe(keyDir);
    expect(keyDirFor('/var/lib/swarm/swarm.db', {})).toBe('/var/lib/swarm');
  });
});
