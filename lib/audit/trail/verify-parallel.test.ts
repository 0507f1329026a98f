/**
 * Verification on several worker threads gives the row-by-row verifier's report, intact or tampered. A real database
 * (denials and security events, checkpoints signed along the way, an archive of the oldest rows) is cut into runs of
 * 60 rows so that every chain is verified by real worker threads; each tampered copy is then verified both ways and
 * the reports compared whole.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempApp, type TempApp } from '@/lib/test-support/temp-app';
import { step } from '@/db/dialect';
import { archiveBefore, archivedEvent } from './archive';
import { CHAIN_COLUMNS, rowHash } from './chain';
import { keyDirFor, loadOrCreateSigningKey, trustedVerifierKeys, verifierKey } from './checkpoints';
import { verifyAudit, type VerifyRange } from './verify';
import { splitIds, verifyAuditInParallel, verifyWorkerFile, type ParallelOptions } from './verify-parallel';

let t: TempApp;
let key: string;
let dir: string;
const DENIALS = 400;
const RUN = 60;
const options: ParallelOptions = { threads: 4, minRowsPerThread: RUN };

beforeAll(async () => {
  t = tempApp();
  dir = mkdtempSync(join(tmpdir(), 'swarm-verify-parallel-'));
  const old = Date.now() / 1000 - 10 * 86400;
  for (let i = 1; i <= DENIALS; i++) {
    // the first 40 rows are old enough to archive; the rest spread over the last hours
    const timestamp = i <= 40 ? old + i : Date.now() / 1000 - (DENIALS - i) * 60;
    t.app.recorder.appendDenial({ toolName: 'deploy_serving', agentName: `agent_${i % 7}`, ruleSource: 'agent_allowlist', reason: `denied ${i} ✓ 𝄞`, argumentsJson: JSON.stringify({ i }), timestamp });
    t.app.recorder.appendEvent({ type: 'auth.login.failed', actor: `user${i}`, outcome: 'failed', detail: { i } });
    if (i % 97 === 0) t.app.checkpointAudit();
  }
  const signing = loadOrCreateSigningKey(keyDirFor(t.dbPath, {}));
  await archiveBefore(t.app.database, signing, old + 100, join(dir, 'archive.ndjson'), (res, tx) => step(t.app.recorder.recordWithin(tx, archivedEvent(res, 'test'))));
  for (let i = 0; i < 5; i++) t.app.recorder.appendDenial({ toolName: 'x', ruleSource: 'default', reason: `after the archive ${i}` });
  t.app.checkpointAudit();
  key = trustedVerifierKeys(keyDirFor(t.dbPath, {}), {})!;
  t.app.db.$client.pragma('wal_checkpoint(TRUNCATE)');
});
afterAll(() => {
  t.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

const dropTriggers = (db: Database.Database) => {
  for (const { name } of db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'trigger'").all()) db.exec(`DROP TRIGGER ${name}`);
};

/** Both verifications of a copy of the database changed by `tamper`. */
async function bothWays(tamper: (db: Database.Database) => void, verifier: string | undefined = key, asked: VerifyRange = {}, opts: ParallelOptions = options) {
  // One time for both verifications: the age of rows not yet under a checkpoint is part of the report.
  const range = { ...asked, now: Date.now() / 1000 };
  const copy = join(mkdtempSync(join(dir, 'copy-')), 'copy.db');
  copyFileSync(t.dbPath, copy);
  const raw = new Database(copy);
  dropTriggers(raw);
  tamper(raw);
  raw.close();
  const ro = new Database(copy, { readonly: true });
  try {
    const { threads, ...parallel } = await verifyAuditInParallel(ro, verifier, range, opts);
    return { parallel, threads, rowByRow: verifyAudit(ro, verifier, range) };
  } finally {
    ro.close();
  }
}

/** The first id of each run after the first, as the denials chain is cut. */
function runStarts(): number[] {
  const ro = new Database(t.dbPath, { readonly: true });
  const { first, last } = ro.prepare<[], { first: number; last: number }>('SELECT min(id) AS first, max(id) AS last FROM permission_denials').get()!;
  ro.close();
  return splitIds(first, last, Math.min(4, Math.floor((last - first + 1) / RUN))).slice(1).map(([from]) => from);
}

/** Recompute the hashes of the denials from `id` on, as someone hiding a change would. */
function rechain(db: Database.Database, fromId: number, prev: string): void {
  const rows = db.prepare<[number], Record<string, unknown> & { id: number }>('SELECT * FROM permission_denials WHERE id >= ? ORDER BY id').all(fromId);
  for (const row of rows) {
    const h = rowHash(prev, row.id, CHAIN_COLUMNS.permission_denials.map((c) => row[c] ?? null));
    db.prepare('UPDATE permission_denials SET prev_hash = ?, row_hash = ? WHERE id = ?').run(prev, h, row.id);
    prev = h;
  }
}

describe('verification on several threads', () => {
  it('cuts ids into consecutive runs that cover them exactly', () => {
    expect(splitIds(41, 405, 4)).toEqual([[41, 132], [133, 223], [224, 314], [315, 405]]);
    expect(splitIds(1, 3, 3)).toEqual([[1, 1], [2, 2], [3, 3]]);
  });

  it('verifies an intact trail on worker threads and reports what the row-by-row verifier reports', async () => {
    const r = await bothWays(() => {});
    expect(r.threads).toBe(4);
    expect(r.parallel.ok).toBe(true);
    expect(r.parallel).toEqual(r.rowByRow);
    const denials = r.parallel.chains.find((c) => c.chain === 'permission_denials')!;
    expect(denials).toMatchObject({ archivedUpTo: 40, firstId: 41, lastId: DENIALS + 5, rowsChecked: DENIALS - 35 });
    expect(denials.checkpointsValid).toBe(denials.checkpoints);
    expect(denials.checkpoints).toBeGreaterThanOrEqual(5);
  });

  it('counts the rows of a requested time range as the row-by-row verifier does', async () => {
    const from = Date.now() / 1000 - 100 * 60;
    for (const range of [{ from }, { to: from }, { from, to: from + 30 * 60 }, { to: 1 }]) {
      const r = await bothWays(() => {}, key, range);
      expect(r.threads).toBe(4);
      expect(r.parallel).toEqual(r.rowByRow);
    }
  });

  const tampering: [string, (db: Database.Database) => void][] = [
    ['a reason changed in the middle', (db) => db.prepare("UPDATE permission_denials SET reason = 'nothing here' WHERE id = 250").run()],
    ['a row deleted in the middle', (db) => db.prepare('DELETE FROM permission_denials WHERE id = 200').run()],
    ['the first row of a run deleted', (db) => db.prepare('DELETE FROM permission_denials WHERE id = ?').run(runStarts()[1]!)],
    ['the tail cut behind the last checkpoint', (db) => db.prepare('DELETE FROM permission_denials WHERE id > 380').run()],
    [
      'a run that is whole in itself but does not follow the run before it',
      (db) => {
        const start = runStarts()[0]!;
        rechain(db, start, 'f'.repeat(64));
      },
    ],
    [
      'the chain rewritten from a row on (every later hash recomputed)',
      (db) => {
        db.prepare("UPDATE permission_denials SET reason = 'rewritten' WHERE id = 100").run();
        rechain(db, 100, db.prepare<[], { h: string }>('SELECT row_hash AS h FROM permission_denials WHERE id = 99').get()!.h);
      },
    ],
    [
      'two rows swapped',
      (db) => {
        const a = db.prepare('SELECT * FROM permission_denials WHERE id = 300').get() as Record<string, unknown>;
        const b = db.prepare('SELECT * FROM permission_denials WHERE id = 301').get() as Record<string, unknown>;
        db.prepare('DELETE FROM permission_denials WHERE id IN (300, 301)').run();
        const cols = Object.keys(a);
        const insert = db.prepare(`INSERT INTO permission_denials (${cols.join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')})`);
        insert.run({ ...b, id: 300 });
        insert.run({ ...a, id: 301 });
      },
    ],
    [
      'the timestamp of the first rows removed (the table rebuilt to allow it, the chain recomputed)',
      (db) => {
        const ddl = db.prepare<[], { sql: string }>("SELECT sql FROM sqlite_master WHERE name = 'permission_denials'").get()!.sql;
        db.exec(ddl.replace('CREATE TABLE `permission_denials`', 'CREATE TABLE `rebuilt`').replace('`timestamp` real NOT NULL', '`timestamp` real'));
        db.exec('INSERT INTO rebuilt SELECT * FROM permission_denials; DROP TABLE permission_denials; ALTER TABLE rebuilt RENAME TO permission_denials');
        db.prepare('UPDATE permission_denials SET timestamp = NULL WHERE id IN (41, 42)').run();
        rechain(db, 41, db.prepare<[], { h: string }>("SELECT head_hash AS h FROM audit_archives WHERE chain = 'permission_denials'").get()!.h);
      },
    ],
    [
      'every checkpoint removed and the first row after the archive dated in the future, to look just written',
      (db) => {
        db.prepare('DELETE FROM audit_checkpoints').run();
        db.prepare('UPDATE permission_denials SET timestamp = ? WHERE id = 41').run(Date.now() / 1000 + 365 * 86400);
        rechain(db, 41, db.prepare<[], { h: string }>("SELECT head_hash AS h FROM audit_archives WHERE chain = 'permission_denials'").get()!.h);
      },
    ],
    [
      'every checkpoint removed and every row after the archive dated in the future',
      (db) => {
        db.prepare('DELETE FROM audit_checkpoints').run();
        db.prepare('UPDATE permission_denials SET timestamp = ? WHERE id >= 41').run(Date.now() / 1000 + 365 * 86400);
        rechain(db, 41, db.prepare<[], { h: string }>("SELECT head_hash AS h FROM audit_archives WHERE chain = 'permission_denials'").get()!.h);
      },
    ],
    ['a security event changed', (db) => db.prepare("UPDATE security_events SET actor = 'nobody' WHERE id = 222").run()],
    [
      'a checkpoint forged',
      (db) => {
        const { id, note } = db.prepare<[], { id: number; note: string }>('SELECT id, note FROM audit_checkpoints ORDER BY id LIMIT 1').get()!;
        db.prepare('UPDATE audit_checkpoints SET note = ? WHERE id = ?').run(note.replace(/\n(\d+)\n/, (_, n: string) => `\n${Number(n) + 1}\n`), id);
      },
    ],
  ];
  for (const [what, tamper] of tampering) {
    it(`catches ${what}, with the row-by-row verifier's failure`, async () => {
      const r = await bothWays(tamper);
      expect(r.rowByRow.ok).toBe(false);
      if (what.includes('dated in the future')) expect(r.rowByRow.failures[0]).toMatchObject({ table: 'permission_denials', id: 41, problem: 'not covered by a checkpoint' });
      expect(r.parallel).toEqual(r.rowByRow);
    });
  }

  it('reports a missing or unknown key as the row-by-row verifier does, after verifying the rows on threads', async () => {
    const other = loadOrCreateSigningKey(mkdtempSync(join(dir, 'other-key-')));
    // '' is no key at all (undefined would take the default of bothWays)
    for (const verifier of ['', verifierKey(other.name, other.raw), 'not a key']) {
      const r = await bothWays(() => {}, verifier);
      expect(r.threads).toBe(4);
      expect(r.parallel.ok).toBe(false);
      expect(r.parallel).toEqual(r.rowByRow);
    }
  });

  it('verifies row by row when the worker script is missing or fails', async () => {
    const broken = join(dir, 'broken-worker.mjs');
    writeFileSync(broken, "throw new Error('this worker does not start');\n");
    for (const workerFile of [join(dir, 'no-such-worker.mjs'), broken]) {
      const r = await bothWays(() => {}, key, {}, { ...options, workerFile });
      expect(r.threads).toBe(0);
      expect(r.parallel.ok).toBe(true);
      expect(r.parallel).toEqual(r.rowByRow);
    }
  });

  it('never runs a worker script found through the working directory: the verdict does not depend on where it is run', async () => {
    // A directory with its own lib/audit/trail/verify-worker.mjs, as an older checkout or someone's folder may have.
    const elsewhere = mkdtempSync(join(dir, 'elsewhere-'));
    const marker = join(elsewhere, 'loaded');
    mkdirSync(join(elsewhere, 'lib', 'audit', 'trail'), { recursive: true });
    writeFileSync(join(elsewhere, 'lib', 'audit', 'trail', 'verify-worker.mjs'), `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'x');\n`);
    const before = process.cwd();
    process.chdir(elsewhere);
    try {
      expect(verifyWorkerFile()).toBe(fileURLToPath(new URL('./verify-worker.mjs', import.meta.url)));
      const r = await bothWays((db) => db.prepare("UPDATE permission_denials SET reason = 'x' WHERE id = 250").run());
      expect(r.parallel.ok).toBe(false);
      expect(r.parallel).toEqual(r.rowByRow);
      expect(existsSync(marker)).toBe(false);
    } finally {
      process.chdir(before);
    }
    // The Next.js server is told where the worker is; a name that is not the worker, or relative, is not taken.
    expect(verifyWorkerFile({ SWARM_VERIFY_WORKER_FILE: 'lib/audit/trail/verify-worker.mjs' })).toBe(verifyWorkerFile({}));
  });

  it('runs one verification on worker threads at a time, however many are asked for at once', async () => {
    const ro = new Database(t.dbPath, { readonly: true });
    try {
      const reports = await Promise.all([1, 2, 3].map(() => verifyAuditInParallel(ro, key, {}, options)));
      for (const r of reports) {
        expect(r.threads).toBe(4);
        expect(r.ok).toBe(true);
      }
    } finally {
      ro.close();
    }
  });

  it('finds its worker script in the source tree', () => {
    expect(verifyWorkerFile()).toMatch(/lib[\\/]audit[\\/]trail[\\/]verify-worker\.mjs$/);
  });
});
