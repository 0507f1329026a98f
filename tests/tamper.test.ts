/**
 * The tamper suite on SQLite (tests/support/tamper-suite.ts): copies of a real database file edited as whoever holds
 * the file would (triggers dropped, SQL edits, hashes recomputed), each caught and located by `swarm audit verify` and
 * GET /api/v1/audit/verify. Also here, as it concerns a file's folder: `npm start` refuses a signing key kept inside
 * the database's folder.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertKeyApart, KeyBesideDatabase } from '@/lib/audit/trail/checkpoints';
import { REPO_ROOT, type CliResult } from '@/lib/test-support/cli';
import { tamperSuite, type RawDb, type TamperTarget } from './support/tamper-suite';

const FILE = 'swarm.db';

const sqlite: TamperTarget = {
  name: 'SQLite',
  async create(ws) {
    mkdirSync(join(ws, 'db'), { recursive: true });
    return join(ws, 'db', FILE);
  },
  async copy(db, ws) {
    const to = join(ws, 'db', FILE);
    mkdirSync(dirname(to), { recursive: true });
    // No process has the file open here: the file and a WAL not yet merged into it are the whole database.
    copyFileSync(db, to);
    if (existsSync(`${db}-wal`)) copyFileSync(`${db}-wal`, `${to}-wal`);
    return to;
  },
  async restore(backup, db) {
    for (const suffix of ['-wal', '-shm']) rmSync(`${db}${suffix}`, { force: true });
    copyFileSync(backup, db);
    if (existsSync(`${backup}-wal`)) copyFileSync(`${backup}-wal`, `${db}-wal`);
  },
  async raw(db, fn) {
    const file = new Database(db);
    try {
      // Whoever holds the file: the append-only triggers are the first thing to go.
      for (const { name } of file.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'trigger'").all()) file.exec(`DROP TRIGGER "${name}"`);
      const raw: RawDb = {
        all: async <T>(sql: string, params: readonly unknown[] = []) => file.prepare(sql).all(...params) as T[],
        run: async (sql, params = []) => void file.prepare(sql).run(...params),
      };
      return await fn(raw);
    } finally {
      file.close();
    }
  },
};

tamperSuite(sqlite);

describe('npm start keeps the signing key apart from the database (SQLite)', () => {
  // Made when the tests run (not when they are collected): a run that skips them leaves nothing behind.
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'swarm-tamper-start-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /**
   * scripts/start.ts as `npm start` runs it. A folder with a BUILD_ID stands for the production build, so that it goes
   * straight to its checks: the key's folder is checked before any application or server starts.
   */
  function start(env: Record<string, string>): Promise<CliResult> {
    const next = join(dir, 'next');
    mkdirSync(next, { recursive: true });
    writeFileSync(join(next, 'BUILD_ID'), 'tamper-test\n');
    const clean: NodeJS.ProcessEnv = { ...process.env };
    for (const k of Object.keys(clean)) if (k.startsWith('SWARM_')) delete clean[k];
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['bin/run.mjs', 'scripts/start.ts'], { cwd: REPO_ROOT, env: { ...clean, NEXT_DIST_DIR: next, PORT: '18999', ...env }, timeout: 120_000 });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

  it('refuses a key folder inside the database folder unless SWARM_AUDIT_KEY_BESIDE_DB=1 says it is meant', async () => {
    const data = join(dir, 'data');
    const db = join(data, FILE);
    // Beside the file (the default key folder) and in a folder under it: both where whoever edits the file can write.
    expect(() => assertKeyApart(db, {})).toThrow(KeyBesideDatabase);
    expect(() => assertKeyApart(db, { SWARM_AUDIT_KEY_DIR: join(data, 'keys') })).toThrow(KeyBesideDatabase);
    expect(() => assertKeyApart(db, { SWARM_AUDIT_KEY_DIR: join(dir, 'keys') })).not.toThrow();
    expect(() => assertKeyApart(db, { SWARM_AUDIT_KEY_BESIDE_DB: '1' })).not.toThrow();

    const [refused, allowed] = await Promise.all([
      start({ SWARM_DB: db, SWARM_AUDIT_KEY_DIR: join(data, 'keys') }),
      // Told it is meant, the check passes, and the start stops at the next check (the pinned keys), still before any
      // application opens the database.
      start({ SWARM_DB: db, SWARM_AUDIT_KEY_BESIDE_DB: '1', SWARM_AUDIT_PUBLIC_KEYS: join(dir, 'no-such-keys.txt') }),
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`Cannot start: The audit signing key folder (${join(data, 'keys')}) is inside the database's folder (${data})`);
    expect(allowed.code).toBe(1);
    expect(allowed.stderr).not.toContain('inside the database');
    expect(allowed.stderr).toContain(`Cannot start: SWARM_AUDIT_PUBLIC_KEYS names ${join(dir, 'no-such-keys.txt')}`);
    expect(existsSync(db)).toBe(false);
  }, 180_000);
});
