/**
 * Sign-in under guessing on SQLite (tests/support/sign-in-suite.ts), and the lock seen by a second process on the file.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { useTempServerEnv } from './support/in-process-api';
import { LOCKFAST_PROFILE } from './support/sign-in-suite';

const server = useTempServerEnv('sign-in', { env: { SWARM_PROFILE: 'lockfast', SWARM_INTERNAL_SECRET: 'sign-in-test-internal-secret-0123456789' } });
mkdirSync(join(server.dir, 'config', 'profiles', 'lockfast'), { recursive: true });
writeFileSync(join(server.dir, 'config', 'profiles', 'lockfast', 'profile.yaml'), LOCKFAST_PROFILE);

const { createApp, getApp, getSqliteApp } = await import('@/lib/app');
const { passwordLogin } = await import('@/lib/auth/login');
const { signInSuite } = await import('./support/sign-in-suite');

afterAll(async () => {
  await getSqliteApp().close();
  server.remove();
});

signInSuite('SQLite', getApp, async (app, key) => {
  const side = app.side;
  if (side.kind !== 'sqlite') throw new Error('expected SQLite');
  side.db.$client.prepare('UPDATE login_attempts SET locked_until = ? WHERE key = ?').run(Date.now() / 1000 - 1, key);
});

it('keeps the lock and the turn for every process on the file (another server’s Next.js, the CLI)', async () => {
  const mine = getSqliteApp();
  await mine.auth.createUser('petra', 'viewer', 'petra-password');
  const other = createApp({ dbPath: process.env.SWARM_DB!, checkpointsElsewhere: true });
  try {
    for (let i = 0; i < 6; i++) expect(await passwordLogin(i % 2 ? mine : other, { username: 'petra', password: 'wrong' }, undefined)).toMatchObject({ ok: false, status: 401 });
    expect(await passwordLogin(other, { username: 'petra', password: 'petra-password' }, undefined)).toMatchObject({ ok: false, code: 'ACCOUNT_LOCKED' });
    expect(await passwordLogin(mine, { username: 'PETRA', password: 'petra-password' }, undefined)).toMatchObject({ ok: false, code: 'ACCOUNT_LOCKED' });
  } finally {
    other.close();
  }
});
