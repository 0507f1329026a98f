/**
 * Sign-in under guessing (issue 23, item 7), through the decision listener in front of the route handlers served as
 * Next.js serves them, and through the handlers in process: concurrent guesses for one user name are taken one at a
 * time, a compliance profile locks the name after N failures in a row (recorded), the lock refuses the right password
 * exactly as a wrong one, and the name is let in again after the period. Shared by tests/sign-in.test.ts (SQLite) and
 * tests/pg-sign-in.test.ts (PostgreSQL); the environment (SWARM_PROFILE=lockfast, LOCKFAST_PROFILE in the config
 * folder) is set before this module is imported.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '@/lib/app';
import type { FrontServer } from '@/lib/server/front';
import { callRoute, type RouteHandler } from './in-process-api';
import { send, type Answer } from './inputs-suite';
import { createRouteServer } from './route-server';

/** A profile that locks after 6 failures in a row (3 free, then 250, 500 and 1,000 ms), for 30 minutes. */
export const LOCKFAST_PROFILE = `title: Quick lock (tests)
description: Locks a user name after six failed sign-ins in a row, for 30 minutes.
frameworks: [PCI DSS v4.0 8.3.4]
sign_in:
  lock_after_failures: 6
  lock_minutes: 30
  basis: the tests of sign-in locks
`;

const { createFrontServer } = await import('@/lib/server/front');
const { parseTrustedProxies } = await import('@/lib/http/client-address');
const { unlockUserName } = await import('@/lib/auth/login');
const loginRoute = await import('@/app/api/v1/auth/login/route');

const listen = (s: Server) => new Promise<number>((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)));

/** Put a user name's lock in the past, as the passing of its 30 minutes would. */
export type ExpireLock = (app: App, userKey: string) => Promise<void>;

export function signInSuite(name: string, app: () => Promise<App>, expireLock: ExpireLock): void {
  let upstream: Server;
  let front: FrontServer;
  let port = 0;

  beforeAll(async () => {
    const a = await app();
    for (const user of ['tara', 'lena', 'ines', 'uma']) if (!(await a.auth.findUser(user))) await a.auth.createUser(user, 'operator', `${user}-password`);
    upstream = createRouteServer();
    const upstreamPort = await listen(upstream);
    // Behind a proxy the listener trusts, so that each test signs in from an address of its own (X-Forwarded-For):
    // the failures of one address would otherwise slow every other test down.
    front = createFrontServer({ app: a, upstream: { host: '127.0.0.1', port: upstreamPort }, trustedProxies: parseTrustedProxies('127.0.0.1/32') });
    port = await listen(front);
  }, 60_000);
  afterAll(async () => {
    await front.shutdown(2_000);
    await new Promise((r) => upstream.close(r));
    upstream.closeAllConnections();
  });

  const viaListener = (username: string, password: string, from: string) =>
    send(port, { method: 'POST', path: '/api/v1/auth/login', headers: { 'content-type': 'application/json', 'x-forwarded-for': from }, body: JSON.stringify({ username, password }) });
  const viaNext = async (username: string, password: string): Promise<Answer> => {
    const r = await callRoute(loginRoute.POST as RouteHandler, '/api/v1/auth/login', { method: 'POST', body: JSON.stringify({ username, password }) });
    return { status: r.status, headers: Object.fromEntries(r.headers), text: await r.text() };
  };
  const error = (a: Answer) => (JSON.parse(a.text) as { error: { code: string; message: string } }).error;
  const events = async (type: string, target: string) => (await (await app()).securityEvents.list({ type, limit: 200 })).rows.filter((e) => e.target === target);

  describe(`sign-in under guessing (${name})`, () => {
    it('takes concurrent guesses for one user name one at a time, each after its own delay; beyond two waiting, refused at once', async () => {
      // Three failures: the next attempt waits 250 ms before its password is checked.
      for (let i = 0; i < 3; i++) expect((await viaListener('tara', 'guess', '203.0.113.30')).status).toBe(401);
      const started = performance.now();
      const burst = await Promise.all(
        Array.from({ length: 30 }, async (_, i) => {
          const a = await viaListener('tara', `guess-${i}`, '203.0.113.30');
          return { status: a.status, code: a.status === 401 ? 'UNAUTHENTICATED' : error(a).code, retry: a.headers['retry-after'], took: performance.now() - started };
        }),
      );
      const checked = burst.filter((b) => b.status === 401).sort((x, y) => x.took - y.took);
      const refused = burst.filter((b) => b.status === 429);
      expect(checked.length + refused.length).toBe(30);
      // One under way and two waiting their turn, each after its own delay (250, 500, 1,000 ms, one after the other);
      // the rest refused: never 30 passwords checked on one shared delay.
      expect(checked).toHaveLength(3);
      checked.forEach((c, i) => expect(c.took).toBeGreaterThanOrEqual([250, 750, 1750][i]!));
      // How many of the 30 arrive before the sixth failure locks the name depends on the machine's load (16 of them on
      // a busy 2-core run): some are refused for the full queue, and each refusal is one of the two below.
      expect(refused.filter((r) => r.code === 'TOO_MANY_REQUESTS').length).toBeGreaterThanOrEqual(1);
      // Refused at once, or (waiting when the sixth failure locked the name: lockfast) refused as locked after it.
      const lockedAt = checked.length >= 3 ? checked[2]!.took : Infinity;
      for (const r of refused) {
        if (r.code === 'ACCOUNT_LOCKED') expect(r.took).toBeGreaterThanOrEqual(lockedAt - 50);
        else expect(`${r.code} ${r.retry}`).toBe('TOO_MANY_REQUESTS 1');
      }
      // Every guess is in the trail: the checked ones as failed, the refused ones as refused.
      const recorded = await events('auth.login.failed', 'tara');
      expect(recorded.filter((e) => e.outcome === 'failed')).toHaveLength(3 + checked.length);
      expect(recorded.filter((e) => e.outcome === 'refused')).toHaveLength(refused.length);
      // Through Next.js alike (the handler in process, no address): one at a time.
      for (let i = 0; i < 3; i++) expect((await viaNext('ines', 'guess')).status).toBe(401);
      const next = await Promise.all(Array.from({ length: 8 }, (_, i) => viaNext('ines', `guess-${i}`)));
      expect(next.filter((a) => a.status === 401)).toHaveLength(3);
      // (one that came late and waited until the sixth failure locked the name is refused as locked)
      expect(next.filter((a) => a.status === 429 && error(a).code === 'TOO_MANY_REQUESTS').length).toBeGreaterThanOrEqual(4);
    });

    it('locks the user name after the profile’s failures in a row, records it, and refuses the right password exactly as a wrong one', async () => {
      const answers: Answer[] = [];
      for (let i = 0; i < 6; i++) answers.push(await viaListener('lena', `wrong-${i}`, '203.0.113.41'));
      expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 401, 401, 401]);
      expect(error(answers[4]!).message).toBe('The user name or password is not correct.');
      expect(error(answers[5]!).message).toMatch(/^The user name or password is not correct\. This user name is locked after too many failed sign-ins, until .* UTC\./);
      const locked = await events('auth.locked', 'lena');
      expect(locked).toHaveLength(1);
      expect(locked[0]).toMatchObject({ actor: 'system', outcome: 'succeeded', ip: '203.0.113.41' });
      expect(JSON.parse(locked[0]!.detailJson ?? '{}')).toMatchObject({ lock_minutes: 30, profiles: ['lockfast'] });
      // While locked: the right password and a wrong one get the same answer, from another address too, on both transports.
      const right = await viaListener('lena', 'lena-password', '198.51.100.42');
      const wrong = await viaListener('lena', 'still-wrong', '203.0.113.41');
      const nextRight = await viaNext('lena', 'lena-password');
      for (const a of [right, wrong, nextRight]) {
        expect(a.status).toBe(429);
        expect(error(a)).toEqual(error(right));
        expect(Number(a.headers['retry-after'])).toBeGreaterThan(29 * 60);
      }
      expect(error(right).code).toBe('ACCOUNT_LOCKED');
      expect(right.headers['set-cookie']).toBeUndefined();
      expect((await events('auth.login.failed', 'lena')).filter((e) => e.outcome === 'refused')).toHaveLength(3);
      expect(await events('auth.login.succeeded', 'lena')).toHaveLength(0);
      expect(await events('auth.locked', 'lena')).toHaveLength(1);
    });

    it('lets the user name in again once the period is over, and when an administrator unlocks it', async () => {
      await expireLock(await app(), 'user:lena');
      const after = await viaListener('lena', 'lena-password', '203.0.113.41');
      expect(after.status).toBe(200);
      expect(after.headers['set-cookie']).toBeDefined();
      // uma: locked, then unlocked by an administrator (recorded), then in.
      for (let i = 0; i < 6; i++) await viaListener('uma', `wrong-${i}`, '203.0.113.51');
      expect((await viaNext('uma', 'uma-password')).status).toBe(429);
      expect(await unlockUserName(await app(), 'uma', 'cli:root')).toBe(true);
      expect((await events('auth.unlocked', 'uma'))[0]).toMatchObject({ actor: 'cli:root', outcome: 'succeeded' });
      expect((await viaNext('uma', 'uma-password')).status).toBe(200);
    });
  });
}
