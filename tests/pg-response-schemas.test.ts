/**
 * The API answers the response schemas the console parses (tests/support/response-schemas-suite.ts), on PostgreSQL:
 * the same suite, with the server's application on a database of the test run's cluster.
 */
import { usePgServerApp } from './support/pg-server-app';

const { admin } = usePgServerApp('response-schemas');
const { getApp } = await import('@/lib/app');
const { responseSchemasSuite } = await import('./support/response-schemas-suite');

responseSchemasSuite('PostgreSQL', getApp, () => admin);
