import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // `@/lib/...` is the repository root, as in tsconfig.json's paths.
  resolve: { alias: { '@': fileURLToPath(new URL('.', import.meta.url)) } },
  test: {
    include: ['lib/**/*.test.ts', 'db/**/*.test.ts', 'app/**/*.test.ts', 'cli/**/*.test.ts', 'tests/**/*.test.ts'],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // better-sqlite3 is a native addon: forks are the robust pool for it
    pool: 'forks',
    // One PostgreSQL cluster for the whole run (started by the first file that needs it), stopped at the end.
    globalSetup: ['lib/test-support/shared-postgres-setup.ts'],
    // One JSON log line per request (lib/ops/log.ts) would bury the test output: errors only, unless asked.
    env: { SWARM_LOG_LEVEL: process.env.SWARM_LOG_LEVEL ?? 'error' },
  },
});
