/** Single sign-on through a real OpenID Provider on PostgreSQL (tests/support/sso-suite.ts), on the run's cluster. */
import { openApp } from '@/lib/app';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { ssoSuite } from './support/sso-suite';

const cluster = usePostgres();

ssoSuite('PostgreSQL', {
  open: async (configDir, env) => openApp({ dbPath: cluster.cluster.urlOf(await cluster.freshDatabase('sso')), configDir, env, profile: '' }),
});
