/**
 * Every input a clear answer on PostgreSQL: the suite of tests/inputs.test.ts (tests/support/inputs-suite.ts), with
 * the server's application on the test run's throwaway cluster.
 */
import { usePgServerApp } from './support/pg-server-app';

const { admin } = usePgServerApp('inputs', { SWARM_INTERNAL_SECRET: 'pg-inputs-internal-secret-0123456789' });
const { getApp } = await import('@/lib/app');
const { inputsSuite } = await import('./support/inputs-suite');

inputsSuite('PostgreSQL', getApp, () => admin);
