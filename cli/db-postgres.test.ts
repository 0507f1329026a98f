/**
 * swarm db migrate|copy and swarm audit verify on PostgreSQL, end to end: the real CLI against a real SQLite trail and a
 * database of this file's own in the test run's PostgreSQL cluster.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '@/lib/app';
import { cliWorkspace, runSwarm } from '@/lib/test-support/cli';
import type { PgServer } from '@/lib/test-support/postgres';
import { usePostgres } from '@/lib/test-support/use-postgres';

/** The committed PostgreSQL migrations (db/pg/migrations/meta/_journal.json). */
const PG_MIGRATIONS = (JSON.parse(readFileSync('db/pg/migrations/meta/_journal.json', 'utf8')) as { entries: unknown[] }).entries.length;

const postgres = usePostgres();
let cluster: PgServer;
let dir: string;
let env: NodeJS.ProcessEnv;
const swarm = (...args: string[]) => runSwarm(args, env);

beforeAll(async () => {
  cluster = postgres.cluster;
  const ws = cliWorkspace('swarm-dbpg-', 'live.db');
  ({ dir, env } = ws);
  const app = createApp({ dbPath: ws.dbPath, configDir: dir, env: {}, watchConfig: false });
  const agent = { kind: 'agent', id: 'trainer', role: 'viewer', agent: 'trainer' } as const;
  for (let i = 0; i < 250; i++) app.engine.decide({ kind: 'tool', principal: agent, agent: 'trainer', tool: 'deploy_serving', arguments: { i } });
  app.checkpointAudit();
  app.close();
}, 60_000);
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('swarm db on PostgreSQL', () => {
  it('migrates, copies a SQLite trail, and verifies it there with the installation key', async () => {
    const migrated = await swarm('db', 'migrate', '--db', cluster.url);
    expect(migrated).toMatchObject({ code: 0, stdout: expect.stringMatching(new RegExp(`^postgres://swarm@127\\.0\\.0\\.1:\\d+/${new URL(cluster.url).pathname.slice(1)}: migrated \\(${PG_MIGRATIONS} migrations in this version\\)\\.\\n$`)) });

    const copied = await swarm('db', 'copy', '--from', env.SWARM_DB!, '--to', cluster.url);
    expect(copied.stderr).toBe('');
    expect(copied.code).toBe(0);
    expect(copied.stdout).toContain('permission_denials: 250 rows');
    expect(copied.stdout).toContain('Intact: every row matches its hash chain and every checkpoint.');
    expect(copied.stdout).toContain('Both chains end at the same row and hash as in the source.');

    const verified = await swarm('audit', 'verify', '--db', cluster.url, '--public-key', join(dir, 'audit-signing-key.pub'));
    expect(verified.code).toBe(0);
    expect(verified.stdout).toMatch(/permission_denials: 250 rows checked .*1\/1 checkpoint valid/);

    // Tampering behind the triggers (as the tables' owner could) is found at its row.
    const client = new pg.Client({ connectionString: cluster.url });
    await client.connect();
    await client.query('ALTER TABLE permission_denials DISABLE TRIGGER permission_denials_no_change');
    await client.query("UPDATE permission_denials SET reason = 'fine' WHERE id = 100");
    await client.end();
    const tampered = await swarm('audit', 'verify', '--db', cluster.url, '--public-key', join(dir, 'audit-signing-key.pub'));
    expect(tampered.code).toBe(1);
    expect(tampered.stdout).toContain('FAILED permission_denials at row 100: changed');

    const again = await swarm('db', 'copy', '--from', env.SWARM_DB!, '--to', cluster.url);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already holds rows in \w+: copy into an empty database/);
  });

  it('says what is wrong with SWARM_DB instead of making a file of it', async () => {
    const mysql = await runSwarm(['denials'], { ...env, SWARM_DB: 'mysql://app@db/swarm' });
    expect(mysql.code).toBe(1);
    expect(mysql.stderr).toMatch(/scheme "mysql:", which this product cannot use/);
    // db backup is SQLite's backup API: refused on PostgreSQL, saying what runs there.
    const onPg = await runSwarm(['db', 'backup', join(dir, 'never.db')], { ...env, SWARM_DB: 'postgres://app:pw@127.0.0.1:1/swarm' });
    expect(onPg.code).toBe(1);
    expect(onPg.stderr).toMatch(/SWARM_DB names a PostgreSQL database \(postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/swarm\)/);
    const unreachable = await runSwarm(['db', 'migrate'], { ...env, SWARM_DB: 'postgres://app:pw@127.0.0.1:1/swarm' });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/PostgreSQL at postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/swarm is not available \(ECONNREFUSED/);
  });
});
