/**
 * The deployment docs/deployment.md describes, on a real cluster: the owner migrates and runs db/pg/app-role.sql with
 * psql; the server runs as a role that does not own the tables. It starts (the migrations are found applied), decides
 * and records, approves, changes flags and signs in; and with that role's password nobody can rewrite the trail:
 * UPDATE, DELETE, TRUNCATE, disabling a trigger and calling the archive function are all refused.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { openApp } from '@/lib/app';
import { loadOrCreateSigningKey } from '@/lib/audit/trail/checkpoints';
import type { PostgresApp } from '@/lib/app';

const cluster = usePostgres();
const dir = mkdtempSync(join(tmpdir(), 'swarm-app-role-'));
let app: PostgresApp;
let asApp: pg.Pool;

beforeAll(async () => {
  const database = await cluster.freshDatabase('roles');
  const owner = cluster.cluster.urlOf(database);
  const ownerPool = cluster.pool(database, 1);
  // Roles are the cluster's, and the cluster is the test run's: the role is named after this file's database.
  const role = `swarm_app_${database}`;
  await ownerPool.query(`CREATE ROLE ${role} LOGIN PASSWORD 'app-password'`);
  execFileSync('psql', [owner, '-q', '-v', `app_role=${role}`, '-f', 'db/pg/app-role.sql'], { stdio: 'pipe' });
  const appUrl = owner.replace('postgres://swarm@', `postgres://${role}:app-password@`);
  cpSync('config', join(dir, 'config'), { recursive: true });
  loadOrCreateSigningKey(join(dir, 'keys'));
  app = (await openApp({
    dbPath: appUrl,
    configDir: join(dir, 'config'),
    env: { SWARM_AUDIT_KEY_DIR: join(dir, 'keys'), SWARM_ADMIN_PASSWORD: 'role-admin-password', SWARM_ADMIN_TOKEN: 'role-admin-token-0123456789' },
    server: true,
    sweepApprovals: true,
  })) as PostgresApp;
  await app.bootstrap();
  asApp = new pg.Pool({ connectionString: appUrl, max: 1 });
}, 60_000);

afterAll(async () => {
  await app?.close();
  await asApp?.end();
  rmSync(dir, { recursive: true, force: true });
});

const agent = { kind: 'agent' as const, id: 'deployer', role: 'viewer' as const, agent: 'deployer' };

describe('the application role of docs/deployment.md', () => {
  it('runs the server: decisions recorded, an approval, a flag change, a sign-in, a checkpoint', async () => {
    const denied = await app.engine.decideAsync({ kind: 'tool', principal: agent, agent: 'deployer', tool: 'export_raw_data', arguments: {} });
    expect(denied.decision).toBe('DENY');
    const asked = await app.engine.decideAsync({ kind: 'tool', principal: agent, agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: 'm', env: 'prod' } });
    expect(asked.decision).toBe('ASK');
    const request = (await app.approvals.list({ status: 'pending' }))[0]!;
    await app.approvals.reject(request.id, { id: 'admin', role: 'admin' }, 'not now');
    await app.flags.setOverride('batch_runner', false, 'admin', 'role test');
    await app.flags.unsetOverride('batch_runner', 'admin', 'role test');
    const user = await app.auth.verifyLogin('admin', 'role-admin-password');
    const session = await app.auth.createSession(user!.id);
    await app.auth.deleteSession(session.token);
    // a back-channel logout token taken once, and swept once past its time
    const at = Date.now() / 1000;
    expect(await app.auth.endSsoSessions('https://login.example.com', { jti: 'jti-1', keepUntil: at - 1, sid: 'sid-1', subject: null, issuedAt: at })).toEqual([]);
    expect(await app.auth.sweepLogoutTokens()).toBe(1);
    expect((await app.checkpointAudit()).length).toBe(2);
    const denials = Number((await asApp.query('SELECT count(*) AS n FROM permission_denials')).rows[0].n);
    expect(denials).toBe(2); // the DENY and the rejected request
  });

  it('cannot rewrite the trail with the application password', async () => {
    const refused = async (text: string) => {
      const error = await asApp.query(text).then(
        () => undefined,
        (e: { message: string }) => e,
      );
      expect(error, text).toBeDefined();
      return error!.message;
    };
    expect(await refused("UPDATE permission_denials SET reason = 'nothing happened'")).toMatch(/append-only|permission denied/);
    expect(await refused('DELETE FROM permission_denials')).toMatch(/append-only|permission denied/);
    expect(await refused('TRUNCATE security_events')).toMatch(/append-only|permission denied/);
    expect(await refused('ALTER TABLE permission_denials DISABLE TRIGGER permission_denials_no_change')).toMatch(/must be owner/);
    expect(await refused('DROP TRIGGER permission_denials_no_change ON permission_denials')).toMatch(/must be owner/);
    expect(await refused('DELETE FROM audit_checkpoints')).toMatch(/append-only|permission denied/);
    expect(await refused("SELECT swarm_archive_prefix('permission_denials', 1, 'x', 1, 'f', 'h', 'n')")).toMatch(/permission denied/);
  });
});
