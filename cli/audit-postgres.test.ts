/**
 * swarm audit checkpoint|key|explain|archive on PostgreSQL, end to end: the real CLI against a SQLite trail copied to a
 * database of this file's own in the test run's PostgreSQL cluster, signing with the installation's key named by SWARM_AUDIT_KEY_DIR.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '@/lib/app';
import { cliWorkspace, runSwarm } from '@/lib/test-support/cli';
import type { PgServer } from '@/lib/test-support/postgres';
import { usePostgres } from '@/lib/test-support/use-postgres';

const postgres = usePostgres();
let cluster: PgServer;
let dir: string;
let env: NodeJS.ProcessEnv;
let deniedId: string;
const OLD = Date.parse('2025-01-01T00:00:00Z') / 1000;
const swarm = (...args: string[]) => runSwarm(args, env);
const withKey = () => ({ ...env, SWARM_AUDIT_KEY_DIR: dir });

beforeAll(async () => {
  cluster = postgres.cluster;
  const ws = cliWorkspace('swarm-auditpg-', 'live.db');
  ({ dir, env } = ws);
  const app = createApp({ dbPath: ws.dbPath, configDir: dir, env: {}, watchConfig: false });
  for (let i = 0; i < 4; i++) app.recorder.appendDenial({ toolName: 'x', ruleSource: 'default', reason: `old ${i}`, timestamp: OLD + i });
  const agent = { kind: 'agent', id: 'trainer', role: 'viewer', agent: 'trainer' } as const;
  for (let i = 0; i < 6; i++) deniedId = app.engine.decide({ kind: 'tool', principal: agent, agent: 'trainer', tool: 'deploy_serving', arguments: { i } }).decisionId!;
  app.checkpointAudit();
  app.close();
  const copied = await runSwarm(['db', 'copy', '--from', ws.dbPath, '--to', cluster.url], env);
  if (copied.code !== 0) throw new Error(copied.stderr);
}, 60_000);
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function pgQuery<T extends pg.QueryResultRow>(sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: cluster.url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

describe('swarm audit on PostgreSQL', () => {
  it('refuses to sign without SWARM_AUDIT_KEY_DIR, rather than make a key somewhere', async () => {
    const runs = await Promise.all([['checkpoint'], ['key'], ['archive', '--before', '2025-06-01', '-o', join(dir, 'never.ndjson')]].map((args) => swarm('audit', ...args, '--db', cluster.url)));
    for (const r of runs) {
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/set SWARM_AUDIT_KEY_DIR to the folder that holds audit-signing-key\.pem/);
    }
  }, 120_000);

  it('prints the key, signs the heads, and verify checks the checkpoints with it', async () => {
    const key = await runSwarm(['audit', 'key', '--db', cluster.url], withKey());
    expect(key).toMatchObject({ code: 0, stdout: readFileSync(join(dir, 'audit-signing-key.pub'), 'utf8') });

    // SWARM_DB naming the database does what --db does.
    const signed = await runSwarm(['audit', 'checkpoint'], { ...withKey(), SWARM_DB: cluster.url });
    expect(signed.stderr).toBe('');
    expect(signed.code).toBe(0);
    expect(signed.stdout).toMatch(/^Keep these somewhere else/);
    // The denials' head was signed on SQLite already (and copied); the security events' head is signed here.
    expect(signed.stdout).toMatch(/swarm-permissions\/permission_denials\n10\n/);
    expect(signed.stdout).toMatch(/swarm-permissions\/security_events\n1\n/);
    // The SQLite side signed its own audit.checkpointed event too (copied across): nothing had moved here to sign.
    expect(await pgQuery('SELECT type FROM security_events WHERE type = \'audit.checkpointed\'')).toHaveLength(1);

    const verified = await swarm('audit', 'verify', '--db', cluster.url, '--public-key', join(dir, 'audit-signing-key.pub'));
    expect(verified.code).toBe(0);
    expect(verified.stdout).toMatch(/permission_denials: 10 rows checked .*1\/1 checkpoint valid/);
    expect(verified.stdout).toMatch(/security_events: 1 row checked .*1\/1 checkpoint valid/);
  }, 120_000);

  it('records verifying the live trail (audit.verified), as on SQLite; a database named by --db is only read', async () => {
    const byDb = await runSwarm(['audit', 'verify', '--db', cluster.url], withKey());
    expect(byDb.code).toBe(0);
    expect(await pgQuery(`SELECT outcome FROM security_events WHERE type = 'audit.verified'`)).toEqual([]);
    const live = await runSwarm(['audit', 'verify'], { ...withKey(), SWARM_DB: cluster.url });
    expect(live.stderr).toBe('');
    expect(live.code).toBe(0);
    expect(live.stdout).toContain('Intact: every row matches its hash chain and every checkpoint.');
    const recorded = await pgQuery<{ outcome: string; detail_json: string }>(`SELECT outcome, detail_json FROM security_events WHERE type = 'audit.verified'`);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]!.outcome).toBe('succeeded');
    expect(JSON.parse(recorded[0]!.detail_json)).toMatchObject({ failures: [], chains: [{ chain: 'permission_denials', rows: 10 }, { chain: 'security_events' }] });
  }, 120_000);

  it('explains a recorded denial from the PostgreSQL trail, and records that it did', async () => {
    const r = await runSwarm(['audit', 'explain', deniedId, '--db', cluster.url, '--json'], withKey());
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const e = JSON.parse(r.stdout) as { recorded: { table: string; decision: string; rule_source: string }; at_the_time: { same: boolean }; today: { same: boolean } };
    expect(e.recorded).toMatchObject({ table: 'permission_denials', decision: 'DENY', rule_source: 'agent_allowlist' });
    expect(e.at_the_time).toMatchObject({ same: true });
    expect(e.today).toMatchObject({ same: true });
    expect(await pgQuery(`SELECT target FROM security_events WHERE type = 'audit.explained'`)).toEqual([{ target: deniedId }]);

    const [text, unknown] = await Promise.all([
      runSwarm(['audit', 'explain', deniedId, '--db', cluster.url], withKey()),
      runSwarm(['audit', 'explain', '01900000-0000-7000-8000-000000000000', '--db', cluster.url], withKey()),
    ]);
    expect(text.stdout).toMatch(/Re-run today: +DENY agent_allowlist: today's policy decides the same/);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/No recorded decision has the id/);
  }, 120_000);

  it('archives the older rows into a bundle that verifies; the rest verifies from the archive', async () => {
    const out = join(dir, 'archive.ndjson');
    const r = await runSwarm(['audit', 'archive', '--before', '2025-06-01', '-o', out, '--db', cluster.url], withKey());
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('permission_denials: 4 rows 1–4 archived');
    expect(r.stdout).toContain('security_events: nothing older');

    const bundle = await swarm('audit', 'verify', '--bundle', out, '--public-key', join(dir, 'audit-signing-key.pub'));
    expect(bundle).toMatchObject({ code: 0, stdout: 'Bundle intact: permission_denials 4 rows.\n' });
    expect(await pgQuery('SELECT min(id)::int AS first FROM permission_denials')).toEqual([{ first: 5 }]);
    expect(await pgQuery(`SELECT target FROM security_events WHERE type = 'retention.archived'`)).toEqual([{ target: out }]);

    const verified = await swarm('audit', 'verify', '--db', cluster.url, '--public-key', join(dir, 'audit-signing-key.pub'));
    expect(verified.code).toBe(0);
    expect(verified.stdout).toMatch(/permission_denials: 6 rows checked .*1\/1 checkpoint valid, rows up to 4 archived/);

    // A bundle is checked on its own, also when SWARM_DB names the PostgreSQL database (as it does for an operator).
    const tampered = join(dir, 'tampered.ndjson');
    writeFileSync(tampered, readFileSync(out, 'utf8').replace('old 2', 'old X'));
    const caught = await runSwarm(['audit', 'verify', '--bundle', tampered], { ...withKey(), SWARM_DB: cluster.url });
    expect(caught.code).toBe(1);
    expect(caught.stdout).toMatch(/^FAILED: permission_denials: row 3 was changed/);
  }, 120_000);

  it('never makes a key of its own: a key folder without one is refused, and nothing is signed', async () => {
    const empty = join(dir, 'typo-keys');
    const before = await pgQuery('SELECT count(*)::int AS n FROM audit_checkpoints');
    const r = await runSwarm(['audit', 'checkpoint', '--db', cluster.url], { ...env, SWARM_AUDIT_KEY_DIR: empty });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/There is no audit signing key in .*typo-keys/);
    expect(existsSync(join(empty, 'audit-signing-key.pem'))).toBe(false);
    expect(await pgQuery('SELECT count(*)::int AS n FROM audit_checkpoints')).toEqual(before);
    // The key of the installation is made by the step that says so, and then verify finds it in the folder.
    const made = await runSwarm(['audit', 'key', '--db', cluster.url], { ...env, SWARM_AUDIT_KEY_DIR: empty });
    expect(made.code).toBe(0);
    expect(made.stderr).toMatch(/Created a new audit signing key pair in .*typo-keys/);
  }, 120_000);
});
