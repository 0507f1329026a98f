/**
 * The API answers the response schemas the console parses (tests/support/response-schemas-suite.ts), on SQLite.
 */
import { afterAll } from 'vitest';
import { useTempServerEnv } from './support/in-process-api';

const server = useTempServerEnv('response-schemas');
const { getApp, getSqliteApp } = await import('@/lib/app');
const { responseSchemasSuite } = await import('./support/response-schemas-suite');

afterAll(async () => {
  await getSqliteApp().close();
  server.remove();
});

responseSchemasSuite('SQLite', getApp, () => server.adminToken);
