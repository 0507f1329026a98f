/** Sign-in under guessing on PostgreSQL (tests/support/sign-in-suite.ts), on the test run's throwaway cluster. */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { loadOrCreateSigningKey } from '@/lib/audit/trail/checkpoints';
import { LOCKFAST_PROFILE } from './support/sign-in-suite';

const cluster = usePostgres();
const dir = mkdtempSync(join(tmpdir(), 'swarm-pg-sign-in-'));
const { getApp } = await import('@/lib/app');
const { signInSuite } = await import('./support/sign-in-suite');

beforeAll(async () => {
  const database = await cluster.freshDatabase('signin');
  cpSync('config', join(dir, 'config'), { recursive: true });
  mkdirSync(join(dir, 'config', 'profiles', 'lockfast'), { recursive: true });
  writeFileSync(join(dir, 'config', 'profiles', 'lockfast', 'profile.yaml'), LOCKFAST_PROFILE);
  Object.assign(process.env, {
    SWARM_DB: cluster.cluster.urlOf(database),
    SWARM_CONFIG_DIR: join(dir, 'config'),
    SWARM_POLICY_FILE: join(dir, 'config', 'permission_policies.yaml'),
    SWARM_AUDIT_KEY_DIR: join(dir, 'keys'),
    SWARM_ADMIN_TOKEN: 'pg-sign-in-admin-token-0123456789',
    SWARM_ADMIN_PASSWORD: 'pg-sign-in-admin-password',
    SWARM_PROFILE: 'lockfast',
    SWARM_INTERNAL_SECRET: 'pg-sign-in-internal-secret-0123456789',
  });
  loadOrCreateSigningKey(join(dir, 'keys'));
  await getApp();
}, 60_000);

afterAll(async () => {
  await (await getApp()).close();
  rmSync(dir, { recursive: true, force: true });
});

signInSuite('PostgreSQL', getApp, async (app, key) => {
  const side = app.side;
  if (side.kind !== 'postgres') throw new Error('expected PostgreSQL');
  await side.pool.query('UPDATE login_attempts SET locked_until = $1 WHERE key = $2', [Date.now() / 1000 - 1, key]);
});
