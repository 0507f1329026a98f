/**
 * For a test file that runs a suite against the server's own application (getApp) on PostgreSQL: a fresh database of
 * the run's cluster, the shipped configuration and a signing key in a temp folder, the environment a server reads,
 * and the application opened before the tests and closed after them. Returns the admin token.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { loadOrCreateSigningKey } from '@/lib/audit/trail/checkpoints';
import { usePostgres } from '@/lib/test-support/use-postgres';

export function usePgServerApp(name: string, env: Record<string, string> = {}): { admin: string } {
  const cluster = usePostgres();
  const dir = mkdtempSync(join(tmpdir(), `swarm-pg-${name}-`));
  const admin = `pg-${name}-admin-token-0123456789`;
  beforeAll(async () => {
    const database = await cluster.freshDatabase(name.replace(/-/g, '_'));
    cpSync('config', join(dir, 'config'), { recursive: true });
    Object.assign(process.env, {
      SWARM_DB: cluster.cluster.urlOf(database),
      SWARM_CONFIG_DIR: join(dir, 'config'),
      SWARM_POLICY_FILE: join(dir, 'config', 'permission_policies.yaml'),
      SWARM_AUDIT_KEY_DIR: join(dir, 'keys'),
      SWARM_ADMIN_TOKEN: admin,
      SWARM_ADMIN_PASSWORD: `pg-${name}-admin-password`,
      SWARM_PROFILE: 'bfsi',
      ...env,
    });
    loadOrCreateSigningKey(join(dir, 'keys'));
    // Imported once the environment names the database: the application reads it as it opens.
    await (await import('@/lib/app')).getApp();
  }, 60_000);
  afterAll(async () => {
    await (await (await import('@/lib/app')).getApp()).close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { admin };
}
