/**
 * Every input a clear answer on PostgreSQL: the suite of tests/inputs.test.ts (tests/support/inputs-suite.ts), with
 * the server's application on the test run's throwaway cluster.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { loadOrCreateSigningKey } from '@/lib/audit/checkpoints';

const cluster = usePostgres();
const dir = mkdtempSync(join(tmpdir(), 'swarm-pg-inputs-'));
const ADMIN = 'pg-inputs-admin-token-0123456789abcdef';
const { getApp } = await import('@/lib/app');
const { inputsSuite } = await import('./support/inputs-suite');

beforeAll(async () => {
  const database = await cluster.freshDatabase('inputs');
  cpSync('config', join(dir, 'config'), { recursive: true });
  Object.assign(process.env, {
    SWARM_DB: cluster.cluster.urlOf(database),
    SWARM_CONFIG_DIR: join(dir, 'config'),
    SWARM_POLICY_FILE: join(dir, 'config', 'permission_policies.yaml'),
    SWARM_AUDIT_KEY_DIR: join(dir, 'keys'),
    SWARM_ADMIN_TOKEN: ADMIN,
    SWARM_ADMIN_PASSWORD: 'pg-inputs-admin-password',
    SWARM_PROFILE: 'bfsi',
    SWARM_INTERNAL_SECRET: 'pg-inputs-internal-secret-0123456789',
  });
  loadOrCreateSigningKey(join(dir, 'keys'));
  await getApp();
}, 60_000);

afterAll(async () => {
  await (await getApp()).close();
  rmSync(dir, { recursive: true, force: true });
});

inputsSuite('PostgreSQL', getApp, () => ADMIN);
