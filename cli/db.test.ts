/**
 * swarm db backup|check, end to end: the CLI's own entry (run in process, lib/test-support/cli.ts) against a real
 * SQLite file that the test keeps writing to on a connection of its own while the backup runs; the copy must verify
 * with `swarm audit verify --db FILE`.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliWorkspace, runSwarm, type CliResult } from '@/lib/test-support/cli';
import { createApp, type SqliteApp } from '@/lib/app';


let dir: string;
let dbPath: string;
let app: SqliteApp;
let env: NodeJS.ProcessEnv;

function swarm(...args: string[]): Promise<CliResult> {
  return runSwarm(args, env);
}

const agent = { kind: 'agent', id: 'trainer', role: 'viewer', agent: 'trainer' } as const;
let n = 0;
/** One recorded denial (an unlisted tool), as a server records it. */
const deny = () => app.engine.decide({ kind: 'tool', principal: agent, agent: 'trainer', tool: 'deploy_serving', arguments: { n: n++, blob: 'x'.repeat(2000) } });

beforeAll(() => {
  ({ dir, dbPath, env } = cliWorkspace('swarm-db-', 'live.db'));
  app = createApp({ dbPath, configDir: dir, env: {}, watchConfig: false });
  // A trail with some weight (so that the backup takes several steps) and a signed checkpoint.
  for (let i = 0; i < 3000; i++) deny();
  app.checkpointAudit();
});
afterAll(() => {
  app.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('swarm db backup', () => {
  it('copies the database while it is being written, and the copy verifies', async () => {
    const out = join(dir, 'backups', 'copy.db');
    mkdirSync(join(dir, 'backups'));
    let writes = 0;
    const writer = setInterval(() => {
      for (let i = 0; i < 20; i++) deny();
      writes += 20;
      if (writes % 200 === 0) app.checkpointAudit();
    }, 1);
    let r;
    try {
      r = await swarm('db', 'backup', out);
    } finally {
      clearInterval(writer);
      // As a server's signer would within 10 s: the live trail's last rows go under a checkpoint.
      app.checkpointAudit();
    }
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Backed up .* to .*copy\.db \(\d+ pages\)\. The public verifier key is beside it/);
    expect(writes).toBeGreaterThan(0);
    expect(existsSync(join(dir, 'backups', 'audit-signing-key.pub'))).toBe(true);
    expect(existsSync(`${out}-wal`)).toBe(false);
    const copy = new Database(out, { readonly: true });
    const rows = (copy.prepare('SELECT count(*) AS n FROM permission_denials').get() as { n: number }).n;
    copy.close();
    expect(rows).toBeGreaterThanOrEqual(3000);
    // A key beside a file is never trusted on its own: the auditor names the installation's key.
    const verified = await swarm('audit', 'verify', '--db', out, '--public-key', join(dir, 'audit-signing-key.pub'));
    expect(verified.stdout).toContain('Intact');
    expect(verified.stdout).toMatch(/coverage: rows up to \d+ are under a signed checkpoint \(every row\)/);
    expect(verified.code).toBe(0);
  }, 90_000);

  it('refuses to overwrite a file without --force, and to copy a database onto itself', async () => {
    const out = join(dir, 'exists.db');
    writeFileSync(out, 'x');
    const r = await swarm('db', 'backup', out);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--force');
    expect((await swarm('db', 'backup', out, '--force')).code).toBe(0);
    const self = await swarm('db', 'backup', dbPath);
    expect(self.code).toBe(1);
    expect(self.stderr).toContain('another file');
    const usage = await swarm('db', 'backup');
    expect(usage.code).toBe(2);
  });
});

describe('swarm db check', () => {
  it('reports integrity, foreign keys, migrations and the audit chains', async () => {
    const r = await swarm('db', 'check');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ok {3}integrity_check: ok$/m);
    expect(r.stdout).toMatch(/^ok {3}foreign keys: no violations$/m);
    expect(r.stdout).toMatch(/^ok {3}migrations: (\d+) of \1 applied$/m);
    expect(r.stdout).toMatch(/^ok {3}audit chains:$/m);
    expect(r.stdout).toContain('Intact');
    const json = await swarm('db', 'check', '--json');
    const report = JSON.parse(json.stdout) as { ok: boolean; migrations: { missing: string[] }; audit: { ok: boolean } };
    expect(report).toMatchObject({ ok: true, migrations: { missing: [] }, audit: { ok: true } });
  });

  it('fails naming what is wrong: a migration missing', async () => {
    const broken = join(dir, 'broken.db');
    expect((await swarm('db', 'backup', broken, '--force')).code).toBe(0);
    const db = new Database(broken);
    db.exec('DELETE FROM __drizzle_migrations WHERE created_at = (SELECT max(created_at) FROM __drizzle_migrations)');
    db.close();
    const r = await swarm('db', 'check', '--json');
    const saved = env.SWARM_DB;
    env.SWARM_DB = broken;
    try {
      const bad = await swarm('db', 'check');
      expect(bad.code).toBe(1);
      expect(bad.stdout).toMatch(/^FAIL migrations: \d+ of \d+ applied; missing 00\d\d_/m);
      expect(bad.stdout).toContain('The database has problems');
    } finally {
      env.SWARM_DB = saved;
    }
    expect(r.code).toBe(0);
  });
});
