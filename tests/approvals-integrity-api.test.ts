/**
 * Approvals and arguments that hold (issue 23), through the HTTP API on SQLite: the real route handlers as Next.js
 * runs them, and the decision listener in front of them over a real socket, on a real file. The same promises on
 * PostgreSQL are in tests/pg-app.test.ts; the stores' side on both databases in lib/approvals/integrity.test.ts.
 */
import Database from 'better-sqlite3';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { callRoute, useTempServerEnv, type RouteHandler } from './support/in-process-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const server = useTempServerEnv('approvals-integrity', { policy: 'empty' });

const { getSqliteApp } = await import('@/lib/app');
const { createFrontServer } = await import('@/lib/server/front');
const check = await import('@/app/api/v1/permissions/check/route');
const approve = await import('@/app/api/v1/approvals/[id]/approve/route');
const reject = await import('@/app/api/v1/approvals/[id]/reject/route');
const evaluation = await import('@/app/access/v1/evaluation/route');
const evaluations = await import('@/app/access/v1/evaluations/route');
const batch = await import('@/app/api/v1/permissions/check/batch/route');
const finished = await import('@/app/api/v1/permissions/finished/route');

const ADMIN = server.adminToken;
let operator = '';
let viewer = '';
let deployer = '';
let front: Server;
let upstream: Server;
let base = '';

type Json = Record<string, unknown> & { error?: { code: string; message: string; issues?: { path: string; message: string }[] } };
const post = async (handler: RouteHandler, url: string, body: unknown, token: string, params?: Record<string, string>) => {
  const r = await callRoute(handler, url, { method: 'POST', token, body: typeof body === 'string' ? body : JSON.stringify(body), params });
  return { status: r.status, body: (await r.json()) as Json };
};
/** The same request through the decision listener, over a socket. */
const viaListener = async (path: string, body: unknown, token: string) => {
  const r = await fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as Json };
};
const checkCall = (body: unknown, token: string) => post(check.POST, '/api/v1/permissions/check', body, token);
const approveAs = (id: string, token = operator) => post(approve.POST, `/api/v1/approvals/${id}/approve`, {}, token, { id });
const listen = (s: Server) => new Promise<number>((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)));
const eventsOf = (id: string) =>
  getSqliteApp().db.$client.prepare('SELECT type, actor, detail_json AS detail FROM security_events WHERE target = ? ORDER BY id').all(id) as { type: string; actor: string; detail: string }[];

beforeAll(async () => {
  const app = getSqliteApp();
  await app.auth.createUser('olivia', 'operator', 'operator-password');
  await app.auth.createUser('victor', 'viewer', 'viewer-password');
  operator = await app.auth.createToken({ username: 'olivia' }, 't');
  viewer = await app.auth.createToken({ username: 'victor' }, 't');
  deployer = await app.auth.createToken({ agent: 'deployer' }, 't');
  upstream = createServer((_, res) => res.writeHead(502).end());
  front = createFrontServer({ app, upstream: { host: '127.0.0.1', port: await listen(upstream) } });
  base = `http://127.0.0.1:${await listen(front)}`;
});
afterAll(async () => {
  await new Promise((r) => front.close(r));
  front.closeAllConnections();
  await new Promise((r) => upstream.close(r));
  await getSqliteApp().close();
  server.remove();
});

describe('approvals bound to who asked, over HTTP', () => {
  it("answers a viewer's check of an agent's approved call ASK and leaves the approval to the agent, who runs it once", async () => {
    const call = { agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: 'm-42', env: 'prod' } };
    const asked = await checkCall(call, deployer);
    expect(asked.body).toMatchObject({ decision: 'ASK', rule_source: 'hitl:deploy' });
    const id = String(asked.body.approval_id);
    expect((await approveAs(id)).status).toBe(200);

    // Through Next.js and through the listener alike: the viewer is asked, and the approval is not spent.
    for (const answer of [await checkCall(call, viewer), await viaListener('/api/v1/permissions/check', call, viewer)]) {
      expect(answer.body).toMatchObject({ decision: 'ASK', rule_source: 'hitl:deploy' });
      expect(answer.body.approval_id).not.toBe(id);
    }
    expect((await getSqliteApp().approvals.get(id))?.status).toBe('approved');

    expect((await viaListener('/api/v1/permissions/check', call, deployer)).body).toMatchObject({ decision: 'ALLOW', rule_source: 'hitl:deploy', approval_id: id });
    expect((await checkCall(call, deployer)).body.decision).toBe('ASK');
    expect(eventsOf(id).filter((e) => e.type === 'approval.consumed').map((e) => e.actor)).toEqual(['agent:deployer']);
  });

  it('lets an administrator asking for the agent through AuthZEN use the approval, recorded as the administrator', async () => {
    const args = { model_id: 'm-43', env: 'prod' };
    const asked = await checkCall({ agent: 'deployer', tool: 'deploy_serving', arguments: args }, deployer);
    const id = String(asked.body.approval_id);
    await approveAs(id);
    const evaluated = await post(evaluation.POST, '/access/v1/evaluation', { subject: { type: 'agent', id: 'deployer' }, action: { name: 'call' }, resource: { type: 'tool', id: 'deploy_serving', properties: { arguments: args } } }, ADMIN);
    expect(evaluated.body).toMatchObject({ decision: true, context: { approval_id: id } });
    const consumed = eventsOf(id).find((e) => e.type === 'approval.consumed')!;
    expect(consumed.actor).toBe('admin');
    expect(JSON.parse(consumed.detail)).toMatchObject({ requested_by: 'agent:deployer' });
  });
});

describe('approval state verified against the audit trail, over HTTP', () => {
  it('does not allow a call whose rejection was turned into an approval by editing the database file', async () => {
    const call = { agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: 'm-44', env: 'prod' } };
    const id = String((await checkCall(call, deployer)).body.approval_id);
    expect((await post(reject.POST, `/api/v1/approvals/${id}/reject`, { reason: 'no model card' }, operator, { id })).status).toBe(200);
    // Whoever holds the file, with a connection of their own.
    const file = new Database(process.env.SWARM_DB!);
    file.prepare("UPDATE approvals SET status = 'approved' WHERE id = ?").run(id);
    file.close();
    const viaRoute = await checkCall(call, deployer);
    expect(viaRoute.body).toMatchObject({ decision: 'ASK', rule_source: 'hitl:deploy' });
    expect(String(viaRoute.body.reason)).toMatch(/audit trail does not hold it/);
    expect((await viaListener('/api/v1/permissions/check', call, deployer)).body.decision).toBe('ASK');
    expect(eventsOf(id).filter((e) => e.type === 'approval.unverified')).toHaveLength(1);
  });
});

describe('arguments kept exactly or refused, over HTTP', () => {
  /** The same request to the route (as Next.js runs it) and to the listener: both answers, which must be the same. */
  const both = async (handler: RouteHandler, path: string, body: string, token = deployer) => {
    const [route, listener] = [await post(handler, path, body, token), await viaListener(path, body, token)];
    // (a decided call has its own decision id each time)
    expect({ ...listener, body: { ...listener.body, decision_id: 'x' } }).toEqual({ ...route, body: { ...route.body, decision_id: 'x' } });
    return route;
  };

  it('refuses the call that smuggles "__proto__" past an approval (400 naming the path), and keeps the approval for its call', async () => {
    const staging = { agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: 'm-45', env: 'staging' } };
    const id = String((await checkCall(staging, deployer)).body.approval_id);
    await approveAs(id);
    const denials = await getSqliteApp().denials.count();
    const smuggled = '{"agent":"deployer","tool":"deploy_serving","arguments":{"model_id":"m-45","env":"staging","__proto__":{"env":"prod"}}}';
    const answer = await both(check.POST, '/api/v1/permissions/check', smuggled);
    expect(answer.status).toBe(400);
    expect(answer.body.error?.issues).toEqual([expect.objectContaining({ path: 'arguments.__proto__', message: expect.stringMatching(/"__proto__" is refused/) })]);
    expect(await getSqliteApp().denials.count()).toBe(denials);
    expect((await getSqliteApp().approvals.get(id))?.status).toBe('approved');
    expect((await checkCall(staging, deployer)).body).toMatchObject({ decision: 'ALLOW', approval_id: id });
  });

  it('refuses constructor and prototype keys at any depth in a batch, in AuthZEN and in a finished report', async () => {
    const inBatch = await both(batch.POST, '/api/v1/permissions/check/batch', '{"checks":[{"agent":"deployer","tool":"monitor_drift"},{"agent":"deployer","tool":"monitor_drift","arguments":{"a":[{"constructor":{}}]}}]}');
    expect(inBatch.status).toBe(400);
    expect(inBatch.body.error?.issues?.map((i) => i.path)).toEqual(['checks.1.arguments.a.0.constructor']);
    const authzen = '{"subject":{"type":"agent","id":"deployer"},"action":{"name":"call"},"resource":{"type":"tool","id":"monitor_drift","properties":{"arguments":{"prototype":1}}}}';
    const one = await both(evaluation.POST, '/access/v1/evaluation', authzen);
    expect(one.status).toBe(400);
    expect(one.body.error?.issues?.map((i) => i.path)).toEqual(['resource.properties.arguments.prototype']);
    const many = await both(evaluations.POST, '/access/v1/evaluations', '{"subject":{"type":"agent","id":"deployer"},"action":{"name":"call"},"evaluations":[{"resource":{"type":"tool","id":"monitor_drift","properties":{"__proto__":{"arguments":{}}}}}]}');
    expect(many.status).toBe(400);
    expect(many.body.error?.issues?.map((i) => i.path)).toEqual(['evaluations.0.resource.properties.__proto__']);
    const report = await both(finished.POST, '/api/v1/permissions/finished', '{"agent":"deployer","tool":"monitor_drift","outcome":"succeeded","arguments":{"x":{"__proto__":1}}}');
    expect(report.status).toBe(400);
  });

  it('answers arguments nested 5,000 arrays deep 400, not 500, and 64 levels are decided', async () => {
    const deep = `{"agent":"deployer","tool":"monitor_drift","arguments":{"v":${'['.repeat(5_000)}${']'.repeat(5_000)}}}`;
    for (const [handler, path, body] of [
      [check.POST, '/api/v1/permissions/check', deep],
      [batch.POST, '/api/v1/permissions/check/batch', `{"checks":[${deep}]}`],
      [evaluation.POST, '/access/v1/evaluation', `{"subject":{"type":"agent","id":"deployer"},"action":{"name":"call"},"resource":{"type":"tool","id":"monitor_drift","properties":{"arguments":{"v":${'['.repeat(5_000)}${']'.repeat(5_000)}}}}}`],
    ] as const) {
      const answer = await both(handler, path, body);
      expect(answer.status, path).toBe(400);
      expect(answer.body.error?.issues?.[0]?.message).toMatch(/at most 64 levels/);
    }
    const deepest = await both(check.POST, '/api/v1/permissions/check', `{"agent":"deployer","tool":"monitor_drift","arguments":{"v":${'['.repeat(63)}${']'.repeat(63)}}}`);
    expect(deepest.body.decision).toBe('ALLOW');
  });
});

describe('secret arguments never at rest, over HTTP', () => {
  it('keeps a secret argument out of the approvals table, and runs the approval only for the call with that very secret', async () => {
    const SECRET = 'ghp_0123456789abcdefSECRET';
    const call = (token: string) => ({ agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: 'm-46', env: 'prod', registry_token: token } });
    const id = String((await checkCall(call(SECRET), deployer)).body.approval_id);
    const file = new Database(process.env.SWARM_DB!, { readonly: true });
    const rows = file.prepare('SELECT * FROM approvals').all();
    file.close();
    expect(JSON.stringify(rows)).not.toContain(SECRET);
    await approveAs(id);
    expect((await viaListener('/api/v1/permissions/check', call('ghp_another'), deployer)).body.decision).toBe('ASK');
    expect((await checkCall(call(SECRET), deployer)).body).toMatchObject({ decision: 'ALLOW', approval_id: id });
  });
});
