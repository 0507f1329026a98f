/**
 * The lifecycle of tokens (issue 27) through the real routes and the decision listener: scopes (an agent's token
 * cannot read denials or approve; a `read` token cannot decide approvals; a refusal is a recorded denial
 * `rbac:scope`), expiry (refused like a revocation, recorded once as token.expired), rotation with an overlap (both
 * work meanwhile), the inactivity sweep (token.disabled), the last use written in the background. Shared by
 * tests/token-lifecycle.test.ts (SQLite) and tests/pg-token-lifecycle.test.ts (PostgreSQL): the environment names the
 * database, with the bfsi profile (tokens live 90 days at most, 90 days unused disables them), before it is imported.
 */
import type { Server } from 'node:http';
import { sendJson } from './send';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '@/lib/app';
import type { FrontServer } from '@/lib/server/front';
import { within } from '@/lib/test-support/wait';
import { createRouteServer } from './route-server';

const { createFrontServer } = await import('@/lib/server/front');

interface Answer {
  status: number;
  body: { error?: { code: string; message: string; rule_source?: string; decision_id?: string | null } } & Record<string, unknown>;
}

const listen = (s: Server) => new Promise<number>((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)));


const DAY = 86_400;
const CHECK = { agent: 'deployer', tool: 'monitor_drift', arguments: {} };

export function tokenLifecycleSuite(name: string, app: () => Promise<App>, admin: () => string): void {
  let upstream: Server;
  let front: FrontServer;
  let port = 0;
  let a: App;
  /** a request through the decision listener (which passes what it does not answer itself to the route handlers) */
  const call = (method: string, path: string, token: string, body?: unknown) => sendJson<Answer['body']>(port, method, path, token, body);
  const events = async (type: string) => {
    const r = await call('GET', `/api/v1/audit/events?type=${type}&limit=100`, admin());
    expect(r.status).toBe(200);
    return r.body.events as { type: string; target: string; detail: Record<string, unknown> }[];
  };

  beforeAll(async () => {
    a = await app();
    for (const [user, role] of [['olga', 'operator'], ['aldo', 'auditor']] as const) if (!(await a.auth.findUser(user))) await a.auth.createUser(user, role);
    upstream = createRouteServer();
    const upstreamPort = await listen(upstream);
    front = createFrontServer({ app: a, upstream: { host: '127.0.0.1', port: upstreamPort } });
    port = await listen(front);
  }, 60_000);
  afterAll(async () => {
    await front.shutdown(2_000);
    await new Promise((r) => upstream.close(r));
    upstream.closeAllConnections();
  });

  describe(`token lifecycle (${name})`, () => {
    it('gives tokens the profile\'s longest life and their owner\'s scope, and refuses a scope above the role or a longer life', async () => {
      const agent = await a.auth.issueToken({ agent: 'deployer' }, 'scopes agent');
      expect(agent.scopes).toEqual(['decide']);
      // bfsi: 90 days at most
      expect(agent.expiresAt! - Date.now() / 1000).toBeGreaterThan(90 * DAY - 60);
      expect(agent.expiresAt! - Date.now() / 1000).toBeLessThanOrEqual(90 * DAY);
      expect((await a.auth.issueToken({ username: 'olga' }, 'olga default')).scopes).toEqual(['operate']);
      expect((await a.auth.issueToken({ username: 'aldo' }, 'aldo default')).scopes).toEqual(['read']);
      await expect(a.auth.issueToken({ username: 'aldo' }, 'too much', { scopes: ['operate'] })).rejects.toMatchObject({
        code: 'BAD_REQUEST',
        message: expect.stringContaining('above what role "auditor" allows'),
      });
      await expect(a.auth.issueToken({ agent: 'deployer' }, 'agent reads', { scopes: ['decide', 'read'] })).rejects.toMatchObject({ code: 'BAD_REQUEST', message: expect.stringContaining('"decide" only') });
      await expect(a.auth.issueToken({ agent: 'deployer' }, 'forever', { expiresInSeconds: null })).rejects.toMatchObject({ code: 'BAD_REQUEST', message: expect.stringContaining('at most 90 days') });
      await expect(a.auth.issueToken({ agent: 'deployer' }, 'long', { expiresInSeconds: 91 * DAY })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
      const short = await a.auth.issueToken({ agent: 'deployer' }, 'thirty days', { expiresInSeconds: 30 * DAY });
      expect(Math.round((short.expiresAt! - Date.now() / 1000) / DAY)).toBe(30);
      const created = (await events('token.created')).find((e) => e.target === String(short.id));
      expect(created?.detail).toMatchObject({ scopes: ['decide'], expires_at: short.expiresAt, owner: 'agent:deployer' });
    });

    it('lets an agent\'s token decide but not read denials nor approve, each refusal a recorded denial rbac:scope', async () => {
      const { token } = await a.auth.issueToken({ agent: 'deployer' }, 'agent scope');
      expect((await call('POST', '/api/v1/permissions/check', token, CHECK)).status).toBe(200);
      expect((await call('POST', '/api/v1/permissions/check/batch', token, { checks: [CHECK] })).status).toBe(200);
      expect((await call('POST', '/api/v1/permissions/tools', token, { agent: 'deployer', tools: [{ tool: 'monitor_drift' }] })).status).toBe(200);
      expect((await call('GET', '/api/v1/auth/me', token)).status).toBe(200);
      // An agent acts as a viewer: denials (auditor) and approvals (operator) are above its role, whatever its scope...
      const denials = await call('GET', '/api/v1/permissions/denials', token);
      expect(denials.status).toBe(403);
      expect(denials.body.error?.rule_source).toBe('rbac:auditor');
      const approve = await call('POST', '/api/v1/approvals/apr_AAAAAAAAAAAAAAAA/approve', token, {});
      expect(approve.status).toBe(403);
      // ...and what a viewer may read is outside its scope: it decides, nothing else.
      const read = await call('GET', '/api/v1/flags', token);
      expect(read.status).toBe(403);
      expect(read.body.error).toMatchObject({ code: 'FORBIDDEN', rule_source: 'rbac:scope' });
      expect(read.body.error?.message).toContain('does not include "read"');
      const transparency = await call('GET', '/api/v1/transparency', token);
      expect(transparency.body.error?.rule_source).toBe('rbac:scope');
      // Recorded like any denial: the admin finds it by its decision id.
      const denial = await call('GET', `/api/v1/permissions/denials?rule_source=rbac:scope&limit=50`, admin());
      expect(denial.status).toBe(200);
      const rows = denial.body.denials as { decision_id: string; rule_source: string; principal: string | null }[];
      expect(rows.map((r) => r.decision_id)).toEqual(expect.arrayContaining([read.body.error?.decision_id, transparency.body.error?.decision_id]));
      expect(rows.find((r) => r.decision_id === read.body.error?.decision_id)?.principal).toBe('deployer');
    });

    it('lets a read token of an operator read denials but not decide approvals, and an operate token past the scope check', async () => {
      const read = await a.auth.issueToken({ username: 'olga' }, 'olga read', { scopes: ['read'] });
      const operate = await a.auth.issueToken({ username: 'olga' }, 'olga operate');
      expect((await call('GET', '/api/v1/permissions/denials', read.token)).status).toBe(200);
      expect((await call('POST', '/api/v1/permissions/check', read.token, CHECK)).status).toBe(200);
      const refused = await call('POST', '/api/v1/approvals/apr_AAAAAAAAAAAAAAAA/approve', read.token, {});
      expect(refused.status).toBe(403);
      expect(refused.body.error?.rule_source).toBe('rbac:scope');
      const rejected = await call('POST', '/api/v1/approvals/apr_AAAAAAAAAAAAAAAA/reject', read.token, { reason: 'no' });
      expect(rejected.body.error?.rule_source).toBe('rbac:scope');
      // The operate token reaches the route: there is no such request (404), which is not the scope's doing.
      expect((await call('POST', '/api/v1/approvals/apr_AAAAAAAAAAAAAAAA/approve', operate.token, {})).status).toBe(404);
      // Neither reaches an admin route: the role decides first (rbac:admin), whatever the scope.
      expect((await call('GET', '/api/v1/tokens', operate.token)).body.error?.rule_source).toBe('rbac:admin');
    });

    it('refuses an expired token as a revoked one (401), and the sweeper records its expiry once', async () => {
      const t = await a.auth.issueToken({ agent: 'deployer' }, 'short-lived', { expiresInSeconds: 2 });
      expect((await call('POST', '/api/v1/permissions/check', t.token, CHECK)).status).toBe(200);
      // (used once: kept by the token cache, which must forget it at its expiry)
      await within(5_000, async () => (await call('POST', '/api/v1/permissions/check', t.token, CHECK)).status === 401);
      const refused = await call('POST', '/api/v1/permissions/check', t.token, CHECK);
      expect(refused.body.error?.message).toBe('The token or session is not valid (expired, revoked or unknown).');
      expect((await call('GET', '/api/v1/auth/me', t.token)).status).toBe(401);
      const first = await a.sweepTokens();
      expect(first.expired).toContain(t.id);
      expect((await a.sweepTokens()).expired).not.toContain(t.id);
      const recorded = (await events('token.expired')).filter((e) => e.target === String(t.id));
      expect(recorded).toHaveLength(1);
      expect(recorded[0]!.detail).toMatchObject({ name: 'short-lived', owner: 'agent:deployer', expires_at: t.expiresAt });
      const listed = (await call('GET', '/api/v1/tokens', admin())).body.tokens as { id: number; state: string; disabled_reason: string | null }[];
      expect(listed.find((x) => x.id === t.id)).toMatchObject({ state: 'expired', disabled_reason: 'expired' });
    });

    it('rotates a token through the admin route: a new secret with the same owner and scopes, the old one working for the overlap only', async () => {
      const old = await a.auth.issueToken({ username: 'olga' }, 'olga rotating', { scopes: ['read'] });
      expect((await call('GET', '/api/v1/permissions/denials', old.token)).status).toBe(200);
      const rotated = await call('POST', `/api/v1/tokens/${old.id}/rotate`, admin(), { overlap: '1h' });
      expect(rotated.status).toBe(200);
      const next = rotated.body as { token: string; id: number; rotated_from: number; scopes: string[]; expires_at: number; old_expires_at: number };
      expect(next).toMatchObject({ rotated_from: old.id, scopes: ['read'] });
      expect(next.old_expires_at - Date.now() / 1000).toBeGreaterThan(3_500);
      expect(next.old_expires_at - Date.now() / 1000).toBeLessThanOrEqual(3_600);
      // Both work during the overlap, as the same person with the same scope.
      for (const token of [old.token, next.token]) {
        const me = await call('GET', '/api/v1/auth/me', token);
        expect(me.body).toMatchObject({ kind: 'user', id: 'olga' });
        expect((await call('POST', '/api/v1/approvals/apr_AAAAAAAAAAAAAAAA/approve', token, {})).body.error?.rule_source).toBe('rbac:scope');
      }
      const event = (await events('token.rotated')).find((e) => e.target === String(next.id));
      expect(event?.detail).toMatchObject({ old_id: old.id, new_id: next.id, overlap_seconds: 3_600, owner: 'olga' });
      // Rotated again without overlap: the one it replaces stops at once, the newest works.
      const third = (await call('POST', `/api/v1/tokens/${next.id}/rotate`, admin(), { overlap: '0s' })).body as { token: string };
      expect((await call('GET', '/api/v1/auth/me', next.token)).status).toBe(401);
      expect((await call('GET', '/api/v1/auth/me', third.token)).status).toBe(200);
      // Nothing to rotate in a revoked token; a malformed overlap is a 400 with its issue; an unknown id a 404.
      await a.auth.revokeToken(old.id);
      expect((await call('POST', `/api/v1/tokens/${old.id}/rotate`, admin(), {})).status).toBe(409);
      const bad = await call('POST', `/api/v1/tokens/${next.id}/rotate`, admin(), { overlap: 'a day' });
      expect(bad.status).toBe(400);
      expect((await call('POST', '/api/v1/tokens/999999/rotate', admin(), {})).status).toBe(404);
      // Admins only, and never with an admin's token scoped below admin: the scope decides, recorded as rbac:scope.
      expect((await call('POST', `/api/v1/tokens/${next.id}/rotate`, old.token, {})).status).toBe(401);
      const adminRead = await a.auth.issueToken({ username: 'admin' }, 'admin dashboards', { scopes: ['read'] });
      expect((await call('GET', '/api/v1/permissions/denials', adminRead.token)).status).toBe(200);
      for (const [method, path] of [['GET', '/api/v1/tokens'], ['POST', `/api/v1/tokens/${next.id}/rotate`]] as const) {
        const refused = await call(method, path, adminRead.token, method === 'POST' ? {} : undefined);
        expect({ path, status: refused.status, rule: refused.body.error?.rule_source }).toEqual({ path, status: 403, rule: 'rbac:scope' });
      }
    });

    it('writes the last use in the background, and disables the tokens unused for the profile\'s 90 days (not SWARM_ADMIN_TOKEN)', async () => {
      const used = await a.auth.issueToken({ agent: 'deployer' }, 'used lately');
      const idle = await a.auth.issueToken({ agent: 'deployer' }, 'idle');
      expect((await call('POST', '/api/v1/permissions/check', used.token, CHECK)).status).toBe(200);
      expect((await call('POST', '/api/v1/permissions/check', idle.token, CHECK)).status).toBe(200);
      // The background write (flushed now rather than waited for).
      await a.tokens.lastUse!.flush();
      const listed = (await call('GET', '/api/v1/tokens', admin())).body.tokens as { id: number; last_used_at: number | null; state: string }[];
      const usedAt = listed.find((x) => x.id === used.id)!.last_used_at!;
      expect(Math.abs(usedAt - Date.now() / 1000)).toBeLessThan(30);
      // Ninety-one days pass for `idle` and for the admin token (its last use put back by hand, as time would).
      const past = Date.now() / 1000 - 91 * DAY;
      await a.database.run(sql`UPDATE api_tokens SET last_used_at = ${past}, created_at = ${past - DAY} WHERE id = ${idle.id} OR name = 'SWARM_ADMIN_TOKEN'`);
      const swept = await a.sweepTokens();
      expect(swept.disabled).toContain(idle.id);
      expect(swept.disabled).not.toContain(used.id);
      expect((await call('POST', '/api/v1/permissions/check', idle.token, CHECK)).status).toBe(401);
      expect((await call('POST', '/api/v1/permissions/check', used.token, CHECK)).status).toBe(200);
      expect((await call('GET', '/api/v1/tokens', admin())).status).toBe(200);
      const event = (await events('token.disabled')).find((e) => e.target === String(idle.id));
      expect(event?.detail).toMatchObject({ name: 'idle', owner: 'agent:deployer', days: 90, last_used_at: past });
      const after = (await call('GET', '/api/v1/tokens', admin())).body.tokens as { id: number; state: string }[];
      expect(after.find((x) => x.id === idle.id)?.state).toBe('disabled');
      expect(after.find((x) => x.id === used.id)?.state).toBe('active');
    });
  });
}
