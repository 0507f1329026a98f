/**
 * The lifecycle of tokens on SQLite (issue 27): the suite of tests/support/token-lifecycle-suite.ts through the
 * decision listener and the route handlers, on the server's application with the bfsi profile.
 */
import { afterAll } from 'vitest';
import { useTempServerEnv } from './support/in-process-api';

const server = useTempServerEnv('token-lifecycle');
const { getApp, getSqliteApp } = await import('@/lib/app');
const { tokenLifecycleSuite } = await import('./support/token-lifecycle-suite');

afterAll(async () => {
  await getSqliteApp().close();
  server.remove();
});

tokenLifecycleSuite('SQLite', getApp, () => server.adminToken);
