/**
 * Run before every test file (vitest.config.ts setupFiles). Files share a worker's modules (isolate: false: the
 * application's module graph is imported once per worker, not once per file), so what one file leaves in the
 * process must not reach the next: the server's application singleton (getApp) and the environment it was read from.
 */
import { afterAll } from 'vitest';

const env = { ...process.env };

afterAll(() => {
  const g = globalThis as Record<symbol, unknown>;
  delete g[Symbol.for('swarm-permissions.app')];
  delete g[Symbol.for('swarm-permissions.sqlite-app')];
  delete g[Symbol.for('swarm-permissions.metrics')];
  for (const key of Object.keys(process.env)) if (!(key in env)) delete process.env[key];
  Object.assign(process.env, env);
});
