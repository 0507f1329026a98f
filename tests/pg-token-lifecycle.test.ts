/**
 * The lifecycle of tokens on PostgreSQL (issue 27): the suite of tests/token-lifecycle.test.ts
 * (tests/support/token-lifecycle-suite.ts), with the server's application on the test run's throwaway cluster.
 */
import { usePgServerApp } from './support/pg-server-app';

const { admin } = usePgServerApp('token-lifecycle');
const { getApp } = await import('@/lib/app');
const { tokenLifecycleSuite } = await import('./support/token-lifecycle-suite');

tokenLifecycleSuite('PostgreSQL', getApp, () => admin);
