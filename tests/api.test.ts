/**
 * The REST API, end to end inside one process: the real route handlers, the real wrapper, a real SQLite file.
 * (The browser and the built server are covered by e2e/.)
 */
import { join } from 'node:path';
import { callRoute, useTempServerEnv, type RouteHandler } from './support/in-process-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { explainDecision } from '@/lib/audit/explain';

// The secret of a start: the listener proves the client address to Next.js with it (lib/http/client-address.ts).
const INTERNAL_SECRET = 'api-test-internal-secret-0123456789';
const server = useTempServerEnv('api', { env: { SWARM_INTERNAL_SECRET: INTERNAL_SECRET } });

const { getSqliteApp } = await import('@/lib/app');
const { CLIENT_ADDRESS_HEADER, CLIENT_ADDRESS_PROOF_HEADER, clientAddressProof } = await import('@/lib/http/client-address');
const health = await import('@/app/api/v1/health/route');
const login = await import('@/app/api/v1/auth/login/route');
const check = await import('@/app/api/v1/permissions/check/route');
const denials = await import('@/app/api/v1/permissions/denials/route');
const denial = await import('@/app/api/v1/permissions/denials/[id]/route');
const approve = await import('@/app/api/v1/approvals/[id]/approve/route');
const reject = await import('@/app/api/v1/approvals/[id]/reject/route');
const flag = await import('@/app/api/v1/flags/[name]/route');

type Handler = RouteHandler;
const ADMIN = server.adminToken;
let operator = '';
let operator2 = '';
let viewer = '';
let auditor = '';
let deployerAgent = '';
let cleanerAgent = '';

const call = callRoute;
const json = async (r: Response) => (await r.json()) as Record<string, unknown> & { error?: { code: string; message: string; rule_source?: string } };

beforeAll(async () => {
  const app = getSqliteApp();
  await app.auth.createUser('olivia', 'operator', 'operator-password');
  await app.auth.createUser('oscar', 'operator', 'operator-password');
  await app.auth.createUser('victor', 'viewer', 'viewer-password');
  await app.auth.createUser('alex', 'auditor', 'auditor-password');
  operator = await app.auth.createToken({ username: 'olivia' }, 't');
  operator2 = await app.auth.createToken({ username: 'oscar' }, 't');
  viewer = await app.auth.createToken({ username: 'victor' }, 't');
  auditor = await app.auth.createToken({ username: 'alex' }, 't');
  deployerAgent = await app.auth.createToken({ agent: 'deployer' }, 't');
  cleanerAgent = await app.auth.createToken({ agent: 'data_cleaner' }, 't');
});
afterAll(async () => {
  await getSqliteApp().close();
  server.remove();
});

const lastDenial = async () => (await getSqliteApp().denials.query({ limit: 1 })).rows[0]!;

describe('authentication and roles on every route', () => {
  it('serves the public health route without credentials', async () => {
    expect((await call(health.GET, '/api/v1/health')).status).toBe(200);
  });

  it('answers 401 without credentials and records the refusal with method and path', async () => {
    const r = await call(denials.GET, '/api/v1/permissions/denials');
    expect(r.status).toBe(401);
    expect((await json(r)).error?.rule_source).toBe('rbac:auditor');
    expect(await lastDenial()).toMatchObject({ ruleSource: 'rbac:auditor', httpMethod: 'GET', httpPath: '/api/v1/permissions/denials', userRole: 'anonymous' });
  });

  it('answers 401 for an unknown token', async () => {
    const r = await call(denials.GET, '/api/v1/permissions/denials', { token: 'swt_not-a-real-token' });
    expect(r.status).toBe(401);
    expect((await json(r)).error?.message).toMatch(/not valid/);
  });

  it('answers 403 to a role below the requirement and records it', async () => {
    const r = await call(denials.GET, '/api/v1/permissions/denials', { token: viewer });
    expect(r.status).toBe(403);
    expect(await lastDenial()).toMatchObject({ ruleSource: 'rbac:auditor', userRole: 'viewer', principal: 'victor' });
  });
});

describe('POST /api/v1/permissions/check', () => {
  it('allows a listed tool for the agent its token belongs to', async () => {
    const r = await json(await call(check.POST, '/api/v1/permissions/check', { method: 'POST', token: cleanerAgent, body: JSON.stringify({ agent: 'data_cleaner', tool: 'profile_dataset', arguments: { dataset_id: 'd' } }) }));
    expect(r).toMatchObject({ decision: 'ALLOW', rule_source: 'agent_allowlist' });
    expect(Array.isArray(r.trace)).toBe(true);
  });

  it('denies and records an agent token naming another agent', async () => {
    const r = await json(await call(check.POST, '/api/v1/permissions/check', { method: 'POST', token: cleanerAgent, body: JSON.stringify({ agent: 'deployer', tool: 'monitor_drift', arguments: { model_id: 'm' } }) }));
    expect(r).toMatchObject({ decision: 'DENY', rule_source: 'rbac:agent_identity', recorded: true });
    expect(await lastDenial()).toMatchObject({ ruleSource: 'rbac:agent_identity', agentName: 'deployer', toolName: 'monitor_drift' });
  });

  it('asks for a gated call, allows it exactly once after an operator approved it, then asks again', async () => {
    const body = JSON.stringify({ agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: 'm-42', env: 'prod' }, tool_call_id: 'tc-1' });
    const asked = await json(await call(check.POST, '/api/v1/permissions/check', { method: 'POST', token: deployerAgent, body }));
    expect(asked).toMatchObject({ decision: 'ASK', rule_source: 'hitl:deploy' });
    const id = String(asked.approval_id);
    expect((await call(approve.POST, `/api/v1/approvals/${id}/approve`, { method: 'POST', token: auditor, params: { id }, body: '{}' })).status).toBe(403);
    const ok = await call(approve.POST, `/api/v1/approvals/${id}/approve`, { method: 'POST', token: operator, params: { id }, body: '{}' });
    expect(ok.status).toBe(200);
    const again = await call(approve.POST, `/api/v1/approvals/${id}/approve`, { method: 'POST', token: operator2, params: { id }, body: '{}' });
    expect(again.status).toBe(409);
    const first = await json(await call(check.POST, '/api/v1/permissions/check', { method: 'POST', token: deployerAgent, body }));
    expect(first).toMatchObject({ decision: 'ALLOW', rule_source: 'hitl:deploy' });
    const second = await json(await call(check.POST, '/api/v1/permissions/check', { method: 'POST', token: deployerAgent, body }));
    expect(second.decision).toBe('ASK');
    expect(second.approval_id).not.toBe(id);
  });

  it('gates a REST caller by config/gates.yaml only where the condition holds (external mail)', async () => {
    const mail = (to: string) => JSON.stringify({ agent: 'deployer', tool: 'send_email', arguments: { to, subject: 'Model m-42 is live' } });
    const internal = await json(await call(check.POST, '/api/v1/permissions/check', { method: 'POST', token: deployerAgent, body: mail('ops@swarm.example') }));
    expect(internal).toMatchObject({ decision: 'ALLOW', rule_source: 'agent_allowlist' });
    const external = await json(await call(check.POST, '/api/v1/permissions/check', { method: 'POST', token: deployerAgent, body: mail('cto@rival.com') }));
    expect(external).toMatchObject({ decision: 'ASK', rule_source: 'hitl:external-mail' });
    const id = String(external.approval_id);
    const approved = await json(await call(approve.POST, `/api/v1/approvals/${id}/approve`, { method: 'POST', token: operator, params: { id }, body: '{"reason":"announcement agreed"}' }));
    expect(approved).toMatchObject({ status: 'approved', risk: 'medium', approvals_required: 1, approvals: [{ by: 'olivia', role: 'operator', reason: 'announcement agreed' }] });
    expect(approved.gate_description).toMatch(/outside the company/);
  });

  it('refuses an operator deciding a call they requested themselves', async () => {
    const asked = await json(await call(check.POST, '/api/v1/permissions/check', { method: 'POST', token: operator, body: JSON.stringify({ agent: 'deployer', tool: 'promote_challenger', arguments: { model_id: 'm-1', env: 'prod' } }) }));
    const id = String(asked.approval_id);
    const r = await call(approve.POST, `/api/v1/approvals/${id}/approve`, { method: 'POST', token: operator, params: { id }, body: '{}' });
    expect(r.status).toBe(403);
    expect((await json(r)).error?.message).toMatch(/Separation of duties/);
  });

  it('records a rejection as a denial attributed to the gate', async () => {
    const asked = await json(await call(check.POST, '/api/v1/permissions/check', { method: 'POST', token: deployerAgent, body: JSON.stringify({ agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: 'm-9', env: 'prod' } }) }));
    const id = String(asked.approval_id);
    const noReason = await call(reject.POST, `/api/v1/approvals/${id}/reject`, { method: 'POST', token: operator, params: { id }, body: '{"reason":"  "}' });
    expect(noReason.status).toBe(400);
    const r = await call(reject.POST, `/api/v1/approvals/${id}/reject`, { method: 'POST', token: operator, params: { id }, body: '{"reason":"No model card"}' });
    expect(r.status).toBe(200);
    expect(await lastDenial()).toMatchObject({ ruleSource: 'hitl:deploy', toolName: 'deploy_serving', agentName: 'deployer' });
    expect((await lastDenial()).reason).toContain('No model card');
  });

  it('answers 400 with the issues for bad input, never 500', async () => {
    const cases: [string, string | undefined][] = [
      ['{"agent":"a"}', undefined],
      ['{"agent":"a","tool":"b","extra":1}', undefined],
      ['{not json', undefined],
      ['[]', undefined],
      ['{"agent":"a","tool":"b","arguments":"x"}', undefined],
    ];
    for (const [body] of cases) {
      const r = await call(check.POST, '/api/v1/permissions/check', { method: 'POST', token: operator, body });
      expect(r.status, body).toBe(400);
      expect((await json(r)).error?.code).toBe('BAD_REQUEST');
    }
    const big = await call(check.POST, '/api/v1/permissions/check', { method: 'POST', token: operator, body: JSON.stringify({ agent: 'a', tool: 'b', arguments: { x: 'y'.repeat(70_000) } }) });
    expect(big.status).toBe(413);
    const text = await call(check.POST, '/api/v1/permissions/check', { method: 'POST', token: operator, body: 'agent=a', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
  });
});

describe('GET /api/v1/permissions/denials', () => {
  it('answers the three queries of the specification', async () => {
    const app = getSqliteApp();
    const now = Date.now() / 1000;
    app.recorder.appendDenial({ toolName: 'deploy_serving', agentName: 'data_cleaner', ruleSource: 'agent_allowlist', reason: 'x', timestamp: now - 60 });
    app.recorder.appendDenial({ toolName: 'export_raw_data', agentName: 'compliance_agent', ruleSource: 'policy:no-pii-export', reason: 'x', timestamp: now - 30 });
    app.recorder.appendDenial({ toolName: 'old', agentName: 'data_cleaner', ruleSource: 'policy:old', reason: 'x', timestamp: now - 200_000 });
    const all = (await json(await call(denials.GET, '/api/v1/permissions/denials?since=86400', { token: auditor }))).denials as { timestamp: number; agent_name: string; rule_source: string }[];
    expect(all.length).toBeGreaterThan(0);
    expect(all.every((d) => d.timestamp >= now - 86400 - 5)).toBe(true);
    const byAgent = (await json(await call(denials.GET, '/api/v1/permissions/denials?agent=data_cleaner', { token: auditor }))).denials as typeof all;
    expect(byAgent.map((d) => d.agent_name).every((a) => a === 'data_cleaner')).toBe(true);
    expect(byAgent.length).toBe(2);
    const policy = (await json(await call(denials.GET, '/api/v1/permissions/denials?rule_source=policy', { token: auditor }))).denials as typeof all;
    expect(policy.map((d) => d.rule_source).sort()).toEqual(['policy:no-pii-export', 'policy:old']);
  });

  it('streams CSV with the same rows as the JSON answer', async () => {
    const j = (await json(await call(denials.GET, '/api/v1/permissions/denials?rule_source=policy', { token: auditor }))).denials as { id: number }[];
    const r = await call(denials.GET, '/api/v1/permissions/denials?rule_source=policy&format=csv', { token: auditor });
    expect(r.headers.get('content-type')).toMatch(/text\/csv/);
    const lines = (await r.text()).trim().split('\r\n');
    expect(lines[0]).toMatch(/^id,timestamp,timestamp_iso,tool_call_id,tool_name/);
    expect(lines.slice(1).map((l) => Number(l.split(',')[0]))).toEqual(j.map((d) => d.id));
  });

  it('answers 400 with the issues for bad filters', async () => {
    for (const q of ['since=-5', 'since=abc', 'limit=0', 'limit=5000', 'role=superuser', 'cursor=x', 'bogus=1']) {
      const r = await call(denials.GET, `/api/v1/permissions/denials?${q}`, { token: auditor });
      expect(r.status, q).toBe(400);
      const body = (await r.json()) as { error: { code: string; issues: { in: string; path: string; message: string }[] } };
      expect(body.error.code).toBe('BAD_REQUEST');
      expect(body.error.issues.length, q).toBeGreaterThan(0);
    }
  });

  it('returns one denial with its trace, and 404 for an unknown id', async () => {
    const id = String((await lastDenial()).id);
    expect((await call(denial.GET, `/api/v1/permissions/denials/${id}`, { token: auditor, params: { id } })).status).toBe(200);
    expect((await call(denial.GET, '/api/v1/permissions/denials/999999', { token: auditor, params: { id: '999999' } })).status).toBe(404);
    expect((await call(denial.GET, '/api/v1/permissions/denials/..%2F..', { token: auditor, params: { id: '../..' } })).status).toBe(400);
  });
});

describe('sessions', () => {
  it('refuses a wrong password without saying which part was wrong, and records it', async () => {
    const r = await call(login.POST, '/api/v1/auth/login', { method: 'POST', body: JSON.stringify({ username: 'olivia', password: 'wrong-password' }) });
    expect(r.status).toBe(401);
    expect((await json(r)).error?.message).toBe('The user name or password is not correct.');
    const unknown = await call(login.POST, '/api/v1/auth/login', { method: 'POST', body: JSON.stringify({ username: 'nobody', password: 'wrong-password' }) });
    expect((await json(unknown)).error?.message).toBe('The user name or password is not correct.');
    // A failed sign-in is a security event (not an engine decision), with who tried; the success is one too.
    const failed = await getSqliteApp().securityEvents.ofType('auth.login.failed', 2);
    expect(failed.map((e) => [e.actor, e.outcome])).toEqual([
      ['nobody', 'failed'],
      ['olivia', 'failed'],
    ]);
    // The address is the one the decision listener resolved and proves (lib/http/client-address.ts); a bare
    // X-Forwarded-For is what any client can write, and is not believed.
    await call(login.POST, '/api/v1/auth/login', { method: 'POST', headers: { 'x-forwarded-for': '203.0.113.8' }, body: JSON.stringify({ username: 'oscar', password: 'operator-password' }) });
    expect((await getSqliteApp().securityEvents.ofType('auth.login.succeeded', 1))[0]).toMatchObject({ actor: 'oscar', actorRole: 'operator', ip: null });
    const proven = { [CLIENT_ADDRESS_HEADER]: '203.0.113.7', [CLIENT_ADDRESS_PROOF_HEADER]: clientAddressProof(INTERNAL_SECRET) };
    await call(login.POST, '/api/v1/auth/login', { method: 'POST', headers: proven, body: JSON.stringify({ username: 'oscar', password: 'operator-password' }) });
    expect((await getSqliteApp().securityEvents.ofType('auth.login.succeeded', 1))[0]).toMatchObject({ actor: 'oscar', actorRole: 'operator', ip: '203.0.113.7' });
  });

  it('sets an HttpOnly, SameSite cookie and refuses a cross-origin state change made with it', async () => {
    const r = await call(login.POST, '/api/v1/auth/login', { method: 'POST', body: JSON.stringify({ username: 'olivia', password: 'operator-password' }) });
    expect(r.status).toBe(200);
    const cookie = r.headers.get('set-cookie')!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    const session = cookie.split(';')[0]!;
    const body = JSON.stringify({ agent: 'data_cleaner', tool: 'profile_dataset', arguments: { dataset_id: 'd' } });
    const same = await call(check.POST, '/api/v1/permissions/check', { method: 'POST', body, headers: { cookie: session, origin: 'http://localhost' } });
    expect(same.status).toBe(200);
    const cross = await call(check.POST, '/api/v1/permissions/check', { method: 'POST', body, headers: { cookie: session, origin: 'https://evil.example' } });
    expect(cross.status).toBe(403);
    // The engine's own decision: recorded by the one recorder, the answer names its row, explain replays it the same.
    const denial = await lastDenial();
    expect(denial).toMatchObject({ ruleSource: 'csrf:origin', reason: 'A state-changing request from another origin is refused.' });
    expect((await json(cross)).error).toMatchObject({ code: 'FORBIDDEN', rule_source: 'csrf:origin', decision_id: denial.decisionId });
    const explained = await explainDecision(getSqliteApp(), denial.decisionId!);
    expect(explained.today).toMatchObject({ decision: 'DENY', rule_source: 'csrf:origin', same: true });
    expect(explained.at_the_time).toMatchObject({ decision: 'DENY', rule_source: 'csrf:origin', same: true });
  });
});

describe('flags over REST', () => {
  it('refuses to turn off the invariant and records the attempt', async () => {
    const r = await call(flag.PUT, '/api/v1/flags/audit_trail_security_events', { method: 'PUT', token: ADMIN, params: { name: 'audit_trail_security_events' }, body: JSON.stringify({ value: false, reason: 'quieter logs' }) });
    expect(r.status).toBe(403);
    expect((await json(r)).error?.code).toBe('INVARIANT');
    expect((await getSqliteApp().securityEvents.ofType('flag.refused', 1))[0]).toMatchObject({ actor: 'admin', outcome: 'refused', target: 'audit_trail_security_events' });
  });

  it('lets an admin turn a flag off, after which its tool is denied as flag:<name>', async () => {
    const r = await call(flag.PUT, '/api/v1/flags/batch_runner', { method: 'PUT', token: ADMIN, params: { name: 'batch_runner' }, body: JSON.stringify({ value: false, reason: 'cost incident' }) });
    expect(r.status).toBe(200);
    const d = await json(await call(check.POST, '/api/v1/permissions/check', { method: 'POST', token: cleanerAgent, body: JSON.stringify({ agent: 'data_cleaner', tool: 'run_batch', arguments: {} }) }));
    expect(d).toMatchObject({ decision: 'DENY', rule_source: 'flag:batch_runner' });
  });

  it('refuses a flag change by an operator (rbac:admin)', async () => {
    const r = await call(flag.PUT, '/api/v1/flags/batch_runner', { method: 'PUT', token: operator, params: { name: 'batch_runner' }, body: JSON.stringify({ value: true, reason: 'x' }) });
    expect(r.status).toBe(403);
    expect((await json(r)).error?.rule_source).toBe('rbac:admin');
  });
});
