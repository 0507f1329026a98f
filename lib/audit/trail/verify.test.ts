/**
 * Tamper evidence, tried as an attacker with the database file would: each test edits a copy of a real database
 * directly (drops the triggers, updates a reason, deletes a row, cuts the tail, forges a checkpoint) and asserts that
 * verification catches it and says where.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '@/lib/app';
import { tempApp, type TempApp } from '@/lib/test-support/temp-app';
import type { CheckInput } from '@/lib/permissions';
import { keyDirFor, loadOrCreateSigningKey, trustedVerifierKeys, verifierKey } from './checkpoints';
import { verifyAudit } from './verify';

let t: TempApp;
let key: string;
let denialIds: number[] = [];

const deny = (i: number): CheckInput => ({
  kind: 'tool',
  principal: { kind: 'agent', id: 'data_cleaner', role: 'viewer', agent: 'data_cleaner' },
  agent: 'data_cleaner',
  tool: 'deploy_serving',
  arguments: { model_id: `m-${i}`, env: 'prod', owner: `person${i}@bank.example` },
});

beforeAll(async () => {
  t = tempApp();
  for (let i = 0; i < 12; i++) t.app.engine.decide(deny(i));
  t.app.recorder.record({ kind: 'auth', type: 'auth.login.failed', actor: 'mallory', outcome: 'failed' });
  t.app.checkpointAudit();
  // Rows after the last checkpoint: still chained, not yet signed.
  for (let i = 12; i < 15; i++) t.app.engine.decide(deny(i));
  denialIds = (await t.app.denials.query({ limit: 100 })).rows.map((r) => r.id).sort((a, b) => a - b);
  key = trustedVerifierKeys(keyDirFor(t.dbPath, {}), {})!;
  t.app.db.$client.pragma('wal_checkpoint(TRUNCATE)');
});
afterAll(() => t.cleanup());

/** A copy of the database, changed by `tamper` with a raw connection (as someone with the file would). */
function tampered(tamper: (db: Database.Database) => void): ReturnType<typeof verifyAudit> {
  const dir = mkdtempSync(join(tmpdir(), 'swarm-tamper-'));
  const copy = join(dir, 'copy.db');
  copyFileSync(t.dbPath, copy);
  const raw = new Database(copy);
  tamper(raw);
  raw.close();
  const ro = new Database(copy, { readonly: true });
  try {
    return verifyAudit(ro, key);
  } finally {
    ro.close();
  }
}

const dropTriggers = (db: Database.Database) => {
  for (const { name } of db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'trigger'").all()) db.exec(`DROP TRIGGER ${name}`);
};

describe('swarm audit verify', () => {
  it('reports an intact trail with the rows checked, the checkpoints valid and the head', () => {
    const r = tampered(() => {});
    expect(r.ok).toBe(true);
    const denials = r.chains.find((c) => c.chain === 'permission_denials')!;
    expect(denials).toMatchObject({ rowsChecked: 15, checkpoints: 1, checkpointsValid: 1, firstId: 1, lastId: 15 });
    expect(denials.headHash).toMatch(/^[0-9a-f]{64}$/);
    expect(r.chains.find((c) => c.chain === 'security_events')!.rowsChecked).toBeGreaterThan(0);
  });

  it('reports the rows found in a requested time range, and verifies the whole chain either way', () => {
    const ro = new Database(t.dbPath, { readonly: true });
    try {
      const all = verifyAudit(ro, key, { from: 0 });
      expect(all.chains.find((c) => c.chain === 'permission_denials')!.inRange).toEqual({ rows: 15, firstId: 1, lastId: 15 });
      const none = verifyAudit(ro, key, { to: 1 });
      expect(none.ok).toBe(true);
      expect(none.chains.find((c) => c.chain === 'permission_denials')!).toMatchObject({ rowsChecked: 15, inRange: { rows: 0, firstId: null, lastId: null } });
    } finally {
      ro.close();
    }
  });

  it('masks the e-mail address in the arguments and lists its path on the row', async () => {
    const row = (await t.app.denials.get(denialIds[0]!))!;
    expect(row.argumentsJson).not.toContain('person0@bank.example');
    expect(JSON.parse(row.maskedPaths!)).toEqual(['owner']);
    expect(row.decisionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(row.policyRevision).toMatch(/^rev_[0-9a-f]{32}$/);
  });

  it('catches a reason changed after the triggers were dropped, at that row', () => {
    const r = tampered((db) => {
      dropTriggers(db);
      db.prepare('UPDATE permission_denials SET reason = ? WHERE id = 5').run('nothing to see here');
    });
    expect(r.ok).toBe(false);
    expect(r.failures[0]).toMatchObject({ table: 'permission_denials', id: 5, problem: 'changed' });
  });

  it('catches a deleted row as missing', () => {
    const r = tampered((db) => {
      dropTriggers(db);
      db.prepare('DELETE FROM permission_denials WHERE id = 7').run();
    });
    expect(r.failures[0]).toMatchObject({ table: 'permission_denials', id: 7, problem: 'missing' });
  });

  it('catches a rewritten chain (every later hash recomputed) against the signed checkpoint', async () => {
    const { rowHash, CHAIN_COLUMNS } = await import('./chain');
    const r = tampered((db) => {
      dropTriggers(db);
      db.prepare("UPDATE permission_denials SET reason = 'rewritten' WHERE id = 3").run();
      let prev = db.prepare<[], { row_hash: string }>('SELECT row_hash FROM permission_denials WHERE id = 2').get()!.row_hash;
      const rows = db.prepare<[], Record<string, unknown> & { id: number }>('SELECT * FROM permission_denials WHERE id >= 3 ORDER BY id').all();
      for (const row of rows) {
        const h = rowHash(prev, row.id, CHAIN_COLUMNS.permission_denials.map((c) => row[c] ?? null));
        db.prepare('UPDATE permission_denials SET prev_hash = ?, row_hash = ? WHERE id = ?').run(prev, h, row.id);
        prev = h;
      }
    });
    expect(r.failures[0]).toMatchObject({ table: 'permission_denials', id: 12, problem: 'changed' });
    expect(r.failures[0]!.message).toMatch(/does not match checkpoint/);
  });

  it('catches a tail cut back behind the last checkpoint', () => {
    const r = tampered((db) => {
      dropTriggers(db);
      db.prepare('DELETE FROM permission_denials WHERE id > 10').run();
    });
    expect(r.failures[0]).toMatchObject({ table: 'permission_denials', id: 11, problem: 'tail truncated after a checkpoint' });
  });

  it('catches a forged checkpoint signature', () => {
    const r = tampered((db) => {
      dropTriggers(db);
      const { id, note } = db.prepare<[], { id: number; note: string }>('SELECT id, note FROM audit_checkpoints ORDER BY id LIMIT 1').get()!;
      const forged = note.replace(/\n(\d+)\n/, (_, n: string) => `\n${Number(n) + 1}\n`);
      db.prepare('UPDATE audit_checkpoints SET note = ? WHERE id = ?').run(forged, id);
    });
    expect(r.failures[0]).toMatchObject({ table: 'audit_checkpoints', problem: 'bad signature' });
  });

  it('says the checkpoint key is unknown when verified with another key', () => {
    const other = loadOrCreateSigningKey(mkdtempSync(join(tmpdir(), 'swarm-otherkey-')));
    const ro = new Database(t.dbPath, { readonly: true });
    try {
      const r = verifyAudit(ro, verifierKey(other.name, other.raw));
      expect(r.failures[0]).toMatchObject({ table: 'audit_checkpoints', problem: 'checkpoint key unknown' });
    } finally {
      ro.close();
    }
  });

  it('refuses UPDATE and DELETE through the product connection (the triggers stay the first line)', () => {
    expect(() => t.app.db.$client.prepare('UPDATE permission_denials SET reason = ? WHERE id = 1').run('x')).toThrow(/append-only/);
    expect(() => t.app.db.$client.prepare('DELETE FROM security_events WHERE id = 1').run()).toThrow(/append-only/);
    expect(() => t.app.db.$client.prepare('DELETE FROM audit_checkpoints').run()).toThrow(/append-only/);
  });
});

describe('a key rotation (docs/deployment.md)', () => {
  it('verifies the checkpoints of the old key and of the new one with the pinned key ring, and names a key nobody kept', () => {
    const r = tempApp();
    try {
      const dir = keyDirFor(r.dbPath, {});
      r.app.engine.decide(deny(1));
      r.app.checkpointAudit();
      const oldKey = trustedVerifierKeys(dir, {})!;
      // The rotation: the old private key goes; its public key is pinned in the key ring the configuration names.
      rmSync(join(dir, 'audit-signing-key.pem'));
      rmSync(join(dir, 'audit-signing-key.pub'));
      const ringFile = join(r.dir, 'auditors-keys.pub');
      writeFileSync(ringFile, `${oldKey}\n`);
      const env = { SWARM_AUDIT_PUBLIC_KEYS: ringFile };
      const next = createApp({ dbPath: r.dbPath, configDir: r.dir, env });
      try {
        next.engine.decide(deny(2));
        next.checkpointAudit();
      } finally {
        next.close();
      }
      const newKey = readFileSync(join(dir, 'audit-signing-key.pub'), 'utf8').trim();
      expect(newKey).not.toBe(oldKey);
      const ring = trustedVerifierKeys(dir, env)!;
      expect(ring.split('\n').sort()).toEqual([oldKey, newKey].sort());
      const db = new Database(r.dbPath, { readonly: true });
      try {
        const withRing = verifyAudit(db, ring);
        expect(withRing.failures).toEqual([]);
        expect(withRing.chains.find((c) => c.chain === 'permission_denials')!.checkpointsValid).toBe(2);
        const onlyNew = verifyAudit(db, newKey);
        expect(onlyNew.ok).toBe(false);
        expect(onlyNew.failures.map((f) => f.problem)).toContain('checkpoint key unknown');
      } finally {
        db.close();
      }
    } finally {
      r.cleanup();
    }
  });

  it('never trusts a public key that merely appears in the key folder', () => {
    const r = tempApp();
    try {
      const dir = keyDirFor(r.dbPath, {});
      const own = trustedVerifierKeys(dir, {})!;
      const stranger = loadOrCreateSigningKey(join(r.dir, 'stranger'));
      writeFileSync(join(dir, 'audit-signing-key.2026-01-01.pub'), `${verifierKey(stranger.name, stranger.raw)}\n`);
      writeFileSync(join(dir, 'audit-signing-key.pub'), `${verifierKey(stranger.name, stranger.raw)}\n`);
      expect(trustedVerifierKeys(dir, {})).toBe(own);
    } finally {
      r.cleanup();
    }
  });
});
