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
    // A worker imports the application's module graph once, not once per file (that import was 177 of the 320 s of a
    // run). What a file leaves in the process (the getApp singleton, the environment) is cleared after it by
    // lib/test-support/per-file.ts; state that must not cross files belongs to an application, not to a module.
    isolate: false,
    setupFiles: ['lib/test-support/per-file.ts'],
    // The tests wait on PostgreSQL, child processes and timers a third of the time: three workers on two cores keep
    // both busy (measured: 2 workers 36% idle, 3 workers 3%).
    maxWorkers: 3,
    // One PostgreSQL cluster for the whole run (started by the first file that needs it), stopped at the end.
    globalSetup: ['lib/test-support/shared-postgres-setup.ts'],
    // One JSON log line per request (lib/ops/log.ts) would bury the test output: errors only, unless asked.
    env: { SWARM_LOG_LEVEL: process.env.SWARM_LOG_LEVEL ?? 'error' },
  },
});
