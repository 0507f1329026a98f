/**
 * The API answers the response schemas the console parses (tests/support/response-schemas-suite.ts), on PostgreSQL:
 * the same suite, with the server's application on a throwaway cluster this file starts.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { loadOrCreateSigningKey } from '@/lib/audit/checkpoints';

const cluster = usePostgres();
const dir = mkdtempSync(join(tmpdir(), 'swarm-pg-response-schemas-'));
const ADMIN = 'pg-response-schemas-admin-token-0123456789';
const { getApp } = await import('@/lib/app');
const { responseSchemasSuite } = await import('./support/response-schemas-suite');

beforeAll(async () => {
  const database = await cluster.freshDatabase('response_schemas');
  cpSync('config', join(dir, 'config'), { recursive: true });
  Object.assign(process.env, {
    SWARM_DB: cluster.cluster.urlOf(database),
    SWARM_CONFIG_DIR: join(dir, 'config'),
    SWARM_POLICY_FILE: join(dir, 'config', 'permission_policies.yaml'),
    SWARM_AUDIT_KEY_DIR: join(dir, 'keys'),
    SWARM_ADMIN_TOKEN: ADMIN,
    SWARM_ADMIN_PASSWORD: 'pg-response-schemas-admin-password',
    SWARM_PROFILE: 'bfsi',
  });
  loadOrCreateSigningKey(join(dir, 'keys'));
  await getApp();
}, 60_000);

afterAll(async () => {
  await (await getApp()).close();
  rmSync(dir, { recursive: true, force: true });
});

responseSchemasSuite('PostgreSQL', getApp, () => ADMIN);
