/**
 * Vitest global setup (vitest.config.ts): a folder for the run's one PostgreSQL cluster, handed to the test files'
 * processes, and the cluster stopped and removed once every file has finished. The cluster itself is started by the
 * first file that needs it (shared-postgres.ts), so a run without PostgreSQL tests starts none.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { stopClusterLater } from './postgres';
import type {} from './shared-postgres';

export default function setup(project: TestProject): () => Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'swarm-pg-run-'));
  // The cluster's own folder inside is the postgres user's when tests run as root: it must be able to reach it.
  chmodSync(root, 0o755);
  project.provide('swarmPostgresRun', root);
  return async () => {
    try {
      await stopClusterLater(join(root, 'cluster'));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  };
}
