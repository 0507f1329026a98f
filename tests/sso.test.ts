/** Single sign-on through a real OpenID Provider on SQLite (tests/support/sso-suite.ts). */
import { join } from 'node:path';
import { openApp } from '@/lib/app';
import { ssoSuite } from './support/sso-suite';

ssoSuite('SQLite', {
  open: (configDir, env) => openApp({ dbPath: join(configDir, 'sso.db'), configDir, env, profile: '' }),
});
