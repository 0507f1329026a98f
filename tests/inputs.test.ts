/**
 * Every input a clear answer on SQLite (item 8 of issue 23): a malformed session cookie, a path that does not decode,
 * TRACE, a byte order mark, a chunked body over the limit, a body declared larger than the route reads, AuthZEN path
 * spellings; through the decision listener and the route handlers alike (tests/support/inputs-suite.ts).
 */
import { afterAll } from 'vitest';
import { useTempServerEnv } from './support/in-process-api';

// The secret of a start, as serve.ts gives it to the listener and to Next.js: it proves the client address between them.
const server = useTempServerEnv('inputs', { env: { SWARM_INTERNAL_SECRET: 'inputs-test-internal-secret-0123456789' } });
const { getApp, getSqliteApp } = await import('@/lib/app');
const { inputsSuite } = await import('./support/inputs-suite');

afterAll(async () => {
  await getSqliteApp().close();
  server.remove();
});

inputsSuite('SQLite', getApp, () => server.adminToken);
