/**
 * Single sign-on through a real OpenID Provider (lib/test-support/oidc-provider.ts), run on SQLite and PostgreSQL: the
 * console's real routes behind a small HTTP server of the test (so the provider's back-channel logout reaches them), a
 * fetch "browser" that signs in on the provider's own login page, and the trail checked after each step.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '@/lib/app';
import { passwordLogin, WRONG_CREDENTIALS_BREAK_GLASS } from '@/lib/auth/login';
import { fromWebRequest, toResponse, type RouteDefinition } from '@/lib/http/route';
import { signOut, whoAmI } from '@/lib/http/routes/sessions';
import { ssoBackchannelLogout, ssoCallback, startSso } from '@/lib/http/routes/sso';
import { startTestProvider, type TestProvider } from '@/lib/test-support/oidc-provider';
import { within } from '@/lib/test-support/wait';

export interface SsoSuiteHost {
  /** an application on a fresh database of this kind, with this configuration folder */
  open(configDir: string, env: Record<string, string>): Promise<App>;
}

const SECRET_ENV = 'SSO_TEST_SECRET';

/** A browser's cookies, per host:port (stricter than a browser, which shares cookies across ports). */
class Browser {
  private readonly jars = new Map<string, Map<string, string>>();
  cookieHeader(url: string): string {
    return [...(this.jars.get(new URL(url).host) ?? new Map<string, string>())].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  cookie(url: string, name: string): string | undefined {
    return this.jars.get(new URL(url).host)?.get(name);
  }
  keep(url: string, response: Response): void {
    const host = new URL(url).host;
    const jar = this.jars.get(host) ?? new Map<string, string>();
    this.jars.set(host, jar);
    for (const c of response.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1);
      if (/max-age=0/i.test(c) || value === '') jar.delete(name);
      else jar.set(name, value);
    }
  }
  async go(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    const cookie = this.cookieHeader(url);
    if (cookie) headers.set('cookie', cookie);
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    this.keep(url, response);
    return response;
  }
}

export function ssoSuite(name: string, host: SsoSuiteHost): void {
  describe(`single sign-on on ${name}`, () => {
    let app: App;
    let op: TestProvider;
    /** a second provider that gives names and groups only at its userinfo endpoint (sso.yaml's provider "info") */
    let opInfo: TestProvider;
    let server: Server;
    let base: string;
    let dir: string;

    /** The console's routes the browser and the provider reach, on the test's own port. */
    const routes: Array<[RegExp, string, RouteDefinition]> = [
      [/^\/api\/v1\/auth\/sso\/([a-z0-9-]+)\/start$/, 'GET', startSso],
      [/^\/api\/v1\/auth\/sso\/([a-z0-9-]+)\/callback$/, 'GET', ssoCallback],
      [/^\/api\/v1\/auth\/sso\/([a-z0-9-]+)\/backchannel-logout$/, 'POST', ssoBackchannelLogout],
      [/^\/api\/v1\/auth\/logout$/, 'POST', signOut],
      [/^\/api\/v1\/auth\/me$/, 'GET', whoAmI],
    ];

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'swarm-sso-'));
      server = createServer((req, res) => {
        void (async () => {
          // the address as the request names it (its Host header), as Next.js builds request.url
          const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
          const found = routes.find(([re, method]) => method === req.method && re.test(url.pathname));
          if (!found) {
            res.writeHead(404).end();
            return;
          }
          const chunks: Buffer[] = [];
          for await (const c of req) chunks.push(c as Buffer);
          const headers = new Headers();
          for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
          const request = new Request(url, { method: req.method, headers, ...(req.method === 'POST' ? { body: Buffer.concat(chunks) } : {}) });
          const provider = found[0].exec(url.pathname)?.[1];
          const response = toResponse(await found[2].core(app, fromWebRequest(request), provider ? { provider } : {}));
          const out: Record<string, string | string[]> = {};
          response.headers.forEach((v, k) => {
            if (k !== 'set-cookie') out[k] = v;
          });
          const cookies = response.headers.getSetCookie();
          if (cookies.length) out['set-cookie'] = cookies;
          res.writeHead(response.status, out).end(Buffer.from(await response.arrayBuffer()));
        })().catch((error: unknown) => {
          console.error(error);
          res.writeHead(500).end();
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = `http://localhost:${(server.address() as AddressInfo).port}`;
      op = await startTestProvider({
        redirectUris: [`${base}/api/v1/auth/sso/test/callback`],
        postLogoutRedirectUris: [`${base}/login`],
        backchannelLogoutUri: `${base}/api/v1/auth/sso/test/backchannel-logout`,
        people: [
          { sub: 'u-olivia', preferred_username: 'olivia.sso', groups: ['swarm-operators', 'everyone'] },
          { sub: 'u-alex', preferred_username: 'alex.sso', groups: ['risk-audit'] },
          { sub: 'u-mallory', preferred_username: 'mallory.sso', groups: ['marketing'] },
          { sub: 'u-admin', preferred_username: 'admin', groups: ['swarm-operators'] },
          { sub: 'u-shouty', preferred_username: 'ADMIN', groups: ['swarm-admins'] },
        ],
      });
      opInfo = await startTestProvider({
        redirectUris: [`${base}/api/v1/auth/sso/info/callback`],
        people: [{ sub: 'u-uma', preferred_username: 'uma.sso', groups: ['risk-audit'] }],
        claimsAtUserinfo: true,
      });
      writeFileSync(
        join(dir, 'sso.yaml'),
        `base_url: ${base}
session_lifetime: 2h
local_login: break_glass
break_glass_user: admin
providers:
  - id: test
    name: Test Provider
    issuer: ${op.issuer}
    client_id: ${op.clientId}
    client_secret_env: ${SECRET_ENV}
    scopes: [openid, profile, email, groups, offline_access]
    roles:
      admin: [swarm-admins]
      operator: [swarm-operators]
      auditor: [risk-audit]
  - id: info
    name: Userinfo Provider
    issuer: ${opInfo.issuer}
    client_id: ${opInfo.clientId}
    client_secret_env: ${SECRET_ENV}
    scopes: [openid, profile, email, groups, offline_access]
    roles:
      operator: [swarm-operators]
      auditor: [risk-audit]
`,
      );
      writeFileSync(join(dir, 'agents.yaml'), 'agents: {}\n');
      writeFileSync(join(dir, 'permission_policies.yaml'), 'rules: []\n');
      app = await host.open(dir, { [SECRET_ENV]: op.clientSecret, SWARM_APPROVAL_KEY: 'sso-test-binding-key-0123456789abcdef0123' });
      await app.auth.createUser('admin', 'admin', 'break-glass-password-1');
      await app.auth.createUser('olivia.local', 'operator', 'operator-password-1');
    }, 60_000);

    afterAll(async () => {
      await app?.close();
      await op?.close();
      await opInfo?.close();
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      rmSync(dir, { recursive: true, force: true });
    });

    /** Start at the console, sign in on the provider's page as `login`, and stop where the provider sends us back. */
    async function toCallback(browser: Browser, login: string, tamper: { nonce?: string; next?: string; provider?: string } = {}): Promise<string> {
      const id = tamper.provider ?? 'test';
      const start = await browser.go(`${base}/api/v1/auth/sso/${id}/start?next=${encodeURIComponent(tamper.next ?? '/approvals')}`);
      expect(start.status).toBe(303);
      let location = new URL(start.headers.get('location')!);
      if (tamper.nonce) location.searchParams.set('nonce', tamper.nonce);
      let url = location.href;
      for (let hops = 0; hops < 10; hops++) {
        if (url.startsWith(`${base}/api/v1/auth/sso/${id}/callback`)) return url;
        const r = await browser.go(url);
        if (r.status === 200) {
          // the provider's login page: type the login (its development page takes any password)
          const html = await r.text();
          const action = /action="([^"]+)"/.exec(html)?.[1];
          expect(action, html.slice(0, 300)).toBeTruthy();
          const posted = await browser.go(new URL(action!, url).href, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ prompt: 'login', login, password: 'any' }).toString(),
          });
          url = new URL(posted.headers.get('location')!, url).href;
        } else {
          url = new URL(r.headers.get('location')!, url).href;
        }
      }
      throw new Error('the provider never sent the browser back');
    }

    async function signIn(login: string, options: { next?: string; provider?: string } = {}): Promise<{ browser: Browser; response: Response }> {
      const browser = new Browser();
      const response = await browser.go(await toCallback(browser, login, options));
      return { browser, response };
    }

    const me = async (browser: Browser) => {
      const r = await browser.go(`${base}/api/v1/auth/me`);
      return r.status === 200 ? ((await r.json()) as { id: string; role: string }) : r.status;
    };
    const events = async (type: string) => (await app.securityEvents.ofType(type, 50)).map((e) => ({ ...e, detail: JSON.parse(e.detailJson ?? '{}') as Record<string, unknown> }));
    const refusedReason = (r: Response) => new URL(r.headers.get('location') ?? '', base).searchParams.get('reason');

    it('an operator and an auditor sign in through the provider: users created with issuer and subject, roles from groups', async () => {
      const olivia = await signIn('u-olivia');
      expect(olivia.response.status).toBe(200);
      expect(await olivia.response.text()).toContain('url=/approvals');
      expect(await me(olivia.browser)).toMatchObject({ id: 'olivia.sso', role: 'operator' });
      const alex = await signIn('u-alex');
      expect(await me(alex.browser)).toMatchObject({ id: 'alex.sso', role: 'auditor' });

      const user = await app.auth.findUser('olivia.sso');
      expect(user).toMatchObject({ issuer: op.issuer, subject: 'u-olivia', passwordHash: null });
      // a user of single sign-on never signs in with a password, nor can one be given to it
      await expect(app.auth.setPassword('olivia.sso', 'a-new-password-1')).rejects.toThrow(/single sign-on/);
      const created = (await events('user.created')).find((e) => e.target === 'olivia.sso');
      expect(created?.detail).toMatchObject({ via: 'sso', issuer: op.issuer, subject: 'u-olivia', role: 'operator' });
      const ok = (await events('auth.sso.succeeded')).find((e) => e.target === 'alex.sso');
      expect(ok?.detail).toMatchObject({ issuer: op.issuer, subject: 'u-alex', groups: ['risk-audit'], role: 'auditor' });
      // the refresh token is kept sealed, never as the provider issued it
      const session = await app.auth.ssoSessionOf(olivia.browser.cookie(base, 'swarm_session')!);
      expect(session?.sealedRefreshToken).toBeTruthy();
      expect(session?.refreshAt).not.toBeNull();
      expect(session!.expiresAt - Date.now() / 1000).toBeGreaterThan(2 * 3600 - 60);
      expect(session!.expiresAt - Date.now() / 1000).toBeLessThanOrEqual(2 * 3600);
    });

    it('a return path that a browser would read as another site is not followed after sign-in: the page goes on to /', async () => {
      // tab, newline, backslash: a browser drops the first two and reads the third as a slash (//evil.example)
      for (const next of ['/\t/evil.example', '/\n/evil.example', '/\t\\evil.example', '/\\evil.example', '/.//evil.example', '//evil.example']) {
        const { response } = await signIn('u-olivia', { next });
        expect(response.status).toBe(200);
        const page = await response.text();
        const targets = [...page.matchAll(/url=([^"]*)"|href="([^"]*)"/g)].map((m) => (m[1] ?? m[2])!);
        expect({ next, targets }).toEqual({ next, targets: ['/', '/'] });
      }
      // a path of this site with its query is kept as it was asked for
      const kept = await signIn('u-olivia', { next: '/denials?agent=data_cleaner#x' });
      expect(await kept.response.text()).toContain('url=/denials?agent=data_cleaner#x"');
    });

    it('the callback reached under another host name (behind a proxy) still sends the registered redirect URI', async () => {
      const browser = new Browser();
      const back = await toCallback(browser, 'u-alex');
      const elsewhere = back.replace('//localhost:', '//127.0.0.1:');
      const r = await fetch(elsewhere, { redirect: 'manual', headers: { cookie: browser.cookieHeader(back) } });
      expect(r.status, r.headers.get('location') ?? '').toBe(200);
    });

    it('a person in no mapped group is refused, with the reason, and no user is made', async () => {
      const { response } = await signIn('u-mallory');
      expect(response.status).toBe(303);
      expect(refusedReason(response)).toBe('no_mapped_group');
      expect(await app.auth.findUser('mallory.sso')).toBeUndefined();
      const refused = (await events('auth.sso.refused')).find((e) => e.detail.subject === 'u-mallory');
      expect(refused?.detail).toMatchObject({ reason: 'no_mapped_group', issuer: op.issuer, groups: ['marketing'] });
    });

    it('a group change changes the role at the next sign-in', async () => {
      op.people.get('u-alex')!.groups = ['swarm-operators'];
      const again = await signIn('u-alex');
      expect(await me(again.browser)).toMatchObject({ id: 'alex.sso', role: 'operator' });
      const changed = (await events('user.role_changed')).find((e) => e.target === 'alex.sso');
      expect(changed?.detail).toMatchObject({ from: 'auditor', to: 'operator' });
      expect(changed?.actor).toBe('sso:test');
      op.people.get('u-alex')!.groups = ['risk-audit'];
    });

    /** The session of this browser, made due for its refresh: its next request asks the provider again. */
    const refreshDue = async (browser: Browser) => {
      const idHash = app.credentials.seal().secretHash(browser.cookie(base, 'swarm_session')!);
      await app.database.run(sql`UPDATE sessions SET sso_refresh_at = ${Date.now() / 1000 - 1} WHERE id_hash = ${idHash}`);
    };

    it('a known person whose sign-in is refused for no mapped group is signed out everywhere at once, and it is recorded', async () => {
      const first = await signIn('u-olivia');
      const second = await signIn('u-olivia');
      for (const b of [first.browser, second.browser]) expect(await me(b)).toMatchObject({ id: 'olivia.sso', role: 'operator' });
      const olivia = (await app.auth.findUser('olivia.sso'))!;
      const open = Number((await app.database.one<{ n: number | string }>(sql`SELECT count(*) AS n FROM sessions WHERE user_id = ${olivia.id}`))!.n);
      expect(open).toBeGreaterThanOrEqual(2);
      op.people.get('u-olivia')!.groups = ['everyone'];
      try {
        const refused = await signIn('u-olivia');
        expect(refusedReason(refused.response)).toBe('no_mapped_group');
        // before: both sessions went on as an operator until their refresh (which did not read the groups either)
        for (const b of [first.browser, second.browser]) expect(await me(b)).toBe(401);
        const ended = (await events('auth.logout')).filter((e) => e.target === 'olivia.sso' && e.detail.via === 'sign_in_refused');
        // every session of the person (those of the tests before too), each recorded
        expect(ended).toHaveLength(open);
        expect(ended[0]).toMatchObject({ actor: 'sso:test', detail: { reason: 'no_mapped_group', provider: 'test', issuer: op.issuer } });
      } finally {
        op.people.get('u-olivia')!.groups = ['swarm-operators', 'everyone'];
      }
    });

    it('a refused sign-in of a person disabled here ends their sessions too', async () => {
      const open = await signIn('u-alex');
      expect(await me(open.browser)).toMatchObject({ id: 'alex.sso' });
      const alex = (await app.auth.findUser('alex.sso'))!;
      // disabled by an administrator, the row sealed as the store seals it
      const disabled = { ...alex, disabled: true };
      await app.database.run(sql`UPDATE users SET disabled = ${true}, mac = ${app.credentials.seal().user(disabled)} WHERE id = ${alex.id}`);
      try {
        const refused = await signIn('u-alex');
        expect(refusedReason(refused.response)).toBe('provider_error');
        expect(Number((await app.database.one<{ n: number | string }>(sql`SELECT count(*) AS n FROM sessions WHERE user_id = ${alex.id}`))!.n)).toBe(0);
        expect((await events('auth.logout')).find((e) => e.target === 'alex.sso' && e.detail.via === 'sign_in_refused')?.detail).toMatchObject({ reason: 'the user is disabled here' });
      } finally {
        await app.database.run(sql`UPDATE users SET disabled = ${false}, mac = ${alex.mac} WHERE id = ${alex.id}`);
      }
    });

    it('a refresh reads the groups again from the refreshed ID token: a changed role is set, no mapped group ends the session', async () => {
      const { browser } = await signIn('u-olivia');
      expect(await me(browser)).toMatchObject({ id: 'olivia.sso', role: 'operator' });
      try {
        op.people.get('u-olivia')!.groups = ['risk-audit'];
        await refreshDue(browser);
        expect(await me(browser)).toMatchObject({ id: 'olivia.sso', role: 'auditor' });
        const changed = (await events('user.role_changed')).find((e) => e.target === 'olivia.sso');
        expect(changed).toMatchObject({ actor: 'sso:test', detail: { from: 'operator', to: 'auditor' } });

        op.people.get('u-olivia')!.groups = ['everyone'];
        await refreshDue(browser);
        expect(await me(browser)).toBe(401);
        const ended = (await events('auth.logout')).find((e) => e.target === 'olivia.sso' && e.detail.via === 'refresh');
        expect(ended).toMatchObject({ actor: 'sso:test', detail: { reason: 'no_mapped_group', provider: 'test', groups: ['everyone'] } });
      } finally {
        op.people.get('u-olivia')!.groups = ['swarm-operators', 'everyone'];
      }
    });

    it('a refresh reads the groups at the userinfo endpoint when the ID token carries none', async () => {
      const { browser } = await signIn('u-uma', { provider: 'info' });
      expect(await me(browser)).toMatchObject({ id: 'uma.sso', role: 'auditor' });
      try {
        opInfo.people.get('u-uma')!.groups = ['swarm-operators'];
        await refreshDue(browser);
        expect(await me(browser)).toMatchObject({ id: 'uma.sso', role: 'operator' });
        expect((await events('user.role_changed')).find((e) => e.target === 'uma.sso')).toMatchObject({ actor: 'sso:info', detail: { from: 'auditor', to: 'operator' } });

        opInfo.people.get('u-uma')!.groups = [];
        await refreshDue(browser);
        expect(await me(browser)).toBe(401);
        expect((await events('auth.logout')).find((e) => e.target === 'uma.sso')).toMatchObject({ actor: 'sso:info', detail: { via: 'refresh', reason: 'no_mapped_group', groups: [] } });
      } finally {
        opInfo.people.get('u-uma')!.groups = ['risk-audit'];
      }
    });

    it('a tampered state, a tampered nonce and a missing flow cookie are refused', async () => {
      const b1 = new Browser();
      const back = new URL(await toCallback(b1, 'u-olivia'));
      back.searchParams.set('state', 'forged-state');
      const r1 = await b1.go(back.href);
      expect(refusedReason(r1)).toBe('state_mismatch');

      const b2 = new Browser();
      const r2 = await b2.go(await toCallback(b2, 'u-olivia', { nonce: 'forged-nonce' }));
      expect(refusedReason(r2)).toBe('nonce_mismatch');

      const b3 = new Browser();
      const url3 = await toCallback(b3, 'u-olivia');
      const r3 = await fetch(url3, { redirect: 'manual' });
      expect(refusedReason(r3)).toBe('state_mismatch');
      for (const b of [b1, b2]) expect(await me(b)).toBe(401);
      const reasons = (await events('auth.sso.refused')).map((e) => e.detail.reason);
      expect(reasons).toEqual(expect.arrayContaining(['state_mismatch', 'nonce_mismatch']));
    });

    it('passwords are off but for the break-glass admin, whose sign-in is recorded as auth.break_glass', async () => {
      const off = await passwordLogin(app, { username: 'olivia.local', password: 'operator-password-1' }, '203.0.113.7');
      expect(off).toMatchObject({ ok: false, status: 401, code: 'UNAUTHENTICATED', message: WRONG_CREDENTIALS_BREAK_GLASS });
      expect((await events('auth.sso.refused')).find((e) => e.target === 'olivia.local')?.detail).toMatchObject({ reason: 'password_login_off' });
      const glass = await passwordLogin(app, { username: 'admin', password: 'break-glass-password-1' }, '203.0.113.8');
      expect(glass.ok).toBe(true);
      const recorded = (await events('auth.break_glass'))[0];
      expect(recorded).toMatchObject({ actor: 'admin', actorRole: 'admin', ip: '203.0.113.8' });
      // a person of the provider called "admin" is not the break-glass admin: the name is a local user's
      const { response } = await signIn('u-admin');
      expect(refusedReason(response)).toBe('username_taken');
    });

    it('a refused password answers the same whoever the name, so the break-glass name cannot be learned; the trail keeps the real reason', async () => {
      const tries = [
        { username: 'admin', password: 'not-the-password' },
        { username: 'olivia.local', password: 'operator-password-1' },
        { username: 'olivia.local', password: 'not-the-password' },
        { username: 'olivia.sso', password: 'not-the-password' },
        { username: 'no-such-person', password: 'not-the-password' },
      ];
      const answers = [];
      for (const [i, t] of tries.entries()) answers.push(await passwordLogin(app, t, `198.51.100.${i + 1}`));
      for (const a of answers) expect(a).toEqual({ ok: false, status: 401, code: 'UNAUTHENTICATED', message: WRONG_CREDENTIALS_BREAK_GLASS });
      expect(WRONG_CREDENTIALS_BREAK_GLASS).toMatch(/user name or password is not correct.*break-glass administrator/);
      // the same way for every name: its failures count, and set the delay before the next attempt's password check
      for (let i = 0; i < 2; i++) await passwordLogin(app, { username: 'olivia.local', password: `guess-${i}-password` }, `198.51.100.${20 + i}`);
      const delays = (await events('auth.sso.refused')).filter((e) => e.target === 'olivia.local').map((e) => e.detail.throttled_ms as number);
      expect(Math.max(...delays)).toBeGreaterThanOrEqual(250);
      // the real reason of each, in the trail
      expect((await events('auth.login.failed')).find((e) => e.target === 'admin')?.detail).toMatchObject({ reason: 'wrong user name or password' });
      expect((await events('auth.sso.refused')).find((e) => e.target === 'no-such-person')?.detail).toMatchObject({ reason: 'password_login_off' });
      // the break-glass administrator still signs in (after the delay its failure set)
      expect((await passwordLogin(app, { username: 'admin', password: 'break-glass-password-1' }, '198.51.100.9')).ok).toBe(true);
    });

    it('a person of the provider whose name is a local user\'s in other capitals is refused (username_taken), never a second admin', async () => {
      const { response } = await signIn('u-shouty');
      expect(refusedReason(response)).toBe('username_taken');
      expect(await app.database.all(sql`SELECT username FROM users WHERE lower(username) = 'admin'`)).toEqual([{ username: 'admin' }]);
      expect(await app.auth.findUserByIdentity(op.issuer, 'u-shouty')).toBeUndefined();
      expect((await events('auth.sso.refused')).find((e) => e.detail.subject === 'u-shouty')?.detail).toMatchObject({ reason: 'username_taken', username: 'ADMIN' });
    });

    it('the break-glass comparison and the sign-in\'s lookup fold a name alike: ADMIN signs in as the break-glass admin', async () => {
      const glass = await passwordLogin(app, { username: 'ADMIN', password: 'break-glass-password-1' }, '203.0.113.30');
      expect(glass).toMatchObject({ ok: true, user: { username: 'admin', role: 'admin' } });
      expect((await events('auth.break_glass'))[0]).toMatchObject({ actor: 'admin', ip: '203.0.113.30' });
      // another case of a name passwords are off for is refused as that name is
      const off = await passwordLogin(app, { username: 'OLIVIA.LOCAL', password: 'operator-password-1' }, '203.0.113.31');
      expect(off).toMatchObject({ ok: false, status: 401, message: WRONG_CREDENTIALS_BREAK_GLASS });
    });

    it('a session ends when its provider session can no longer be refreshed', async () => {
      const { browser } = await signIn('u-olivia');
      const idHash = app.credentials.seal().secretHash(browser.cookie(base, 'swarm_session')!);
      const due = sql`UPDATE sessions SET sso_refresh_at = ${Date.now() / 1000 - 1} WHERE id_hash = ${idHash}`;
      await app.database.run(due);
      // refreshed: the session stands, and the next refresh is set ahead
      expect(await me(browser)).toMatchObject({ id: 'olivia.sso' });
      expect((await app.auth.ssoSessionByHash(idHash))!.refreshAt!).toBeGreaterThan(Date.now() / 1000);
      expect(await op.revokeGrants('u-olivia')).toBeGreaterThan(0);
      await app.database.run(due);
      expect(await me(browser)).toBe(401);
      const ended = (await events('auth.logout')).find((e) => e.detail.via === 'refresh');
      expect(ended).toMatchObject({ target: 'olivia.sso' });
    });

    it('sign-out ends the session here and at the provider (RP-initiated); the provider ends sessions over the back channel', async () => {
      const { browser } = await signIn('u-alex');
      const out = await browser.go(`${base}/api/v1/auth/logout`, { method: 'POST', headers: { origin: base } });
      expect(out.status).toBe(200);
      const endUrl = ((await out.json()) as { end_session_url?: string }).end_session_url;
      expect(endUrl).toContain(`${op.issuer}/session/end`);
      expect(endUrl).toContain('id_token_hint=');
      expect(await me(browser)).toBe(401);
      // at the provider: its confirmation form, then back to the console's login page
      const confirm = await browser.go(endUrl!);
      const html = await confirm.text();
      const form = new URLSearchParams({ xsrf: /name="xsrf" value="([^"]+)"/.exec(html)![1]!, logout: 'yes' });
      const done = await browser.go(new URL(/action="([^"]+)"/.exec(html)![1]!, op.issuer).href, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() });
      expect(done.headers.get('location')).toBe(`${base}/login`);
      expect((await events('auth.logout')).find((e) => e.target === 'alex.sso')?.detail).toMatchObject({ via: 'rp' });
      // the provider's session is over: signing in again asks for the login again (its page, not straight back)
      const again = await browser.go(`${base}/api/v1/auth/sso/test/start`);
      const atProvider = await browser.go(again.headers.get('location')!);
      expect(atProvider.headers.get('location')).toMatch(/\/interaction\//);

      // back channel: a person signs out at the provider itself; the provider tells the console, which ends the session
      const b = await signIn('u-olivia');
      expect(await me(b.browser)).toMatchObject({ id: 'olivia.sso' });
      const page = await b.browser.go(`${op.issuer}/session/end`);
      const text = await page.text();
      await b.browser.go(new URL(/action="([^"]+)"/.exec(text)![1]!, op.issuer).href, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ xsrf: /name="xsrf" value="([^"]+)"/.exec(text)![1]!, logout: 'yes' }).toString(),
      });
      await within(10_000, async () => (await me(b.browser)) === 401);
      const channel = (await events('auth.logout')).find((e) => e.detail.via === 'backchannel');
      expect(channel).toMatchObject({ target: 'olivia.sso', actor: 'sso:test' });
    });

    const postLogout = (token: string) =>
      fetch(`${base}/api/v1/auth/sso/test/backchannel-logout`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ logout_token: token }).toString() });
    const errorOf = async (r: Response) => ((await r.json()) as { error: { message: string } }).error.message;

    it('a logout token is taken once: the provider\'s own token sent again is refused with 400, recorded', async () => {
      const first = await signIn('u-alex');
      const sid = (await app.auth.ssoSessionOf(first.browser.cookie(base, 'swarm_session')!))!.sid!;
      const token = await op.backchannelLogout('u-alex', sid);
      expect(await me(first.browser)).toBe(401);
      const replay = await postLogout(token);
      expect(replay.status).toBe(400);
      expect(await errorOf(replay)).toMatch(/taken already/);
      const refused = (await events('auth.sso.refused')).find((e) => e.detail.reason === 'logout_token_replayed');
      expect(refused).toMatchObject({ actor: 'sso:test', target: 'u-alex', outcome: 'refused', detail: { provider: 'test', issuer: op.issuer, subject: 'u-alex', sid } });
      expect(typeof refused?.detail.jti).toBe('string');
      // a token of the same content with another jti is a new token
      const fresh = await postLogout(op.signLogoutToken({ sub: 'u-alex', sid }));
      expect(fresh.status).toBe(200);
    });

    it('a logout token without a jti is refused with 400 and ends nothing (Back-Channel Logout 1.0 requires one)', async () => {
      const { browser } = await signIn('u-alex');
      const r = await postLogout(op.signLogoutToken({ sub: 'u-alex', jti: undefined, iat: Math.floor(Date.now() / 1000) + 5 }));
      expect(r.status).toBe(400);
      expect(await errorOf(r)).toMatch(/jti/);
      expect(await me(browser)).toMatchObject({ id: 'alex.sso' });
    });

    it('a logout token never ends a session begun after it was issued', async () => {
      const earlier = await signIn('u-olivia');
      const idHash = app.credentials.seal().secretHash(earlier.browser.cookie(base, 'swarm_session')!);
      await app.database.run(sql`UPDATE sessions SET created_at = ${Date.now() / 1000 - 120} WHERE id_hash = ${idHash}`);
      const later = await signIn('u-olivia');
      // issued a minute ago (a token that took its time to arrive, or was held back), naming the person
      const r = await postLogout(op.signLogoutToken({ sub: 'u-olivia', iat: Math.floor(Date.now() / 1000) - 60 }));
      expect(r.status).toBe(200);
      expect(await me(earlier.browser)).toBe(401);
      expect(await me(later.browser)).toMatchObject({ id: 'olivia.sso' });
    });

    it('keeps a logout token\'s jti until its time, and the sweeper deletes it after', async () => {
      const t = Date.now() / 1000;
      const issuer = 'https://sweep.example.com';
      const take = (iss: string, jti: string, keepUntil: number) => app.auth.endSsoSessions(iss, { jti, keepUntil, sid: null, subject: 'nobody-here', issuedAt: t });
      expect(await take(issuer, 'past', t - 1)).toEqual([]);
      expect(await take(issuer, 'past', t - 1)).toBeNull();
      expect(await take(issuer, 'live', t + 300)).toEqual([]);
      // the same jti of another issuer is another token
      expect(await take('https://other.example.com', 'live', t + 300)).toEqual([]);
      expect(await app.auth.sweepLogoutTokens(t)).toBeGreaterThanOrEqual(1);
      const kept = await app.database.all<{ jti: string }>(sql`SELECT jti FROM sso_logout_tokens WHERE issuer = ${issuer} ORDER BY jti`);
      expect(kept.map((r) => r.jti)).toEqual(['live']);
      expect(await take(issuer, 'live', t + 300)).toBeNull();
    });

    it('a logout token that does not verify is refused with 400 and ends nothing', async () => {
      const { browser } = await signIn('u-alex');
      const forged = `${Buffer.from(JSON.stringify({ alg: 'RS256' })).toString('base64url')}.${Buffer.from(JSON.stringify({ iss: op.issuer, aud: op.clientId, sub: 'u-alex', iat: Math.floor(Date.now() / 1000), events: { 'http://schemas.openid.net/event/backchannel-logout': {} } })).toString('base64url')}.AAAA`;
      const r = await fetch(`${base}/api/v1/auth/sso/test/backchannel-logout`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `logout_token=${forged}` });
      expect(r.status).toBe(400);
      expect(((await r.json()) as { error: { message: string } }).error.message).toMatch(/signature/);
      const missing = await fetch(`${base}/api/v1/auth/sso/test/backchannel-logout`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
      expect(missing.status).toBe(400);
      expect(await me(browser)).toMatchObject({ id: 'alex.sso' });
      const unknown = await fetch(`${base}/api/v1/auth/sso/nobody/start`, { redirect: 'manual' });
      expect(unknown.status).toBe(404);
    });
  });
}
