/**
 * The server's application on PostgreSQL (SWARM_DB=postgres://…), through the same route handlers Next.js runs and the
 * decision listener in front of it, on the test run's throwaway cluster: decisions recorded before they are
 * answered, approvals, sign-in, flags, the explorer's reads, the audit pages' reads, verification, readiness and
 * metrics. The SQLite twin of each promise is tested in the other files of tests/.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { loadOrCreateSigningKey } from '@/lib/audit/trail/checkpoints';
import { callRoute } from './support/in-process-api';

const cluster = usePostgres();
const dir = mkdtempSync(join(tmpdir(), 'swarm-pg-app-'));
const ADMIN = 'pg-app-admin-token-0123456789abcdef';
let pool: pg.Pool;
let agent = '';

const { getApp } = await import('@/lib/app');
type PostgresApp = import('@/lib/app').PostgresApp;
const { PostgresSide } = await import('@/lib/server/postgres');
const routes = {
  check: await import('@/app/api/v1/permissions/check/route'),
  batch: await import('@/app/api/v1/permissions/check/batch/route'),
  denials: await import('@/app/api/v1/permissions/denials/route'),
  denial: await import('@/app/api/v1/permissions/denials/[id]/route'),
  summary: await import('@/app/api/v1/permissions/denials/summary/route'),
  facets: await import('@/app/api/v1/permissions/denials/facets/route'),
  histogram: await import('@/app/api/v1/permissions/denials/histogram/route'),
  tail: await import('@/app/api/v1/permissions/denials/tail/route'),
  approvals: await import('@/app/api/v1/approvals/route'),
  approve: await import('@/app/api/v1/approvals/[id]/approve/route'),
  reject: await import('@/app/api/v1/approvals/[id]/reject/route'),
  login: await import('@/app/api/v1/auth/login/route'),
  flag: await import('@/app/api/v1/flags/[name]/route'),
  transparency: await import('@/app/api/v1/transparency/route'),
  events: await import('@/app/api/v1/audit/events/route'),
  verify: await import('@/app/api/v1/audit/verify/route'),
  ready: await import('@/app/api/v1/ready/route'),
  authzen: await import('@/app/access/v1/evaluation/route'),
};

async function app() {
  const a = await getApp();
  if (!(a.side instanceof PostgresSide)) throw new Error('expected the PostgreSQL application');
  return a as PostgresApp;
}

const post = (handler: Parameters<typeof callRoute>[0], url: string, body: unknown, token = agent, params?: Record<string, string>) =>
  callRoute(handler, url, { method: 'POST', token, body: JSON.stringify(body), params });

beforeAll(async () => {
  const database = await cluster.freshDatabase('app');
  cpSync('config', join(dir, 'config'), { recursive: true });
  Object.assign(process.env, {
    SWARM_DB: cluster.cluster.urlOf(database),
    SWARM_CONFIG_DIR: join(dir, 'config'),
    SWARM_POLICY_FILE: join(dir, 'config', 'permission_policies.yaml'),
    SWARM_AUDIT_KEY_DIR: join(dir, 'keys'),
    SWARM_ADMIN_TOKEN: ADMIN,
    SWARM_ADMIN_PASSWORD: 'pg-app-admin-password',
    SWARM_PROFILE: '',
  });
  loadOrCreateSigningKey(join(dir, 'keys'));
  pool = cluster.pool(database, 2);
  agent = await (await app()).auth.createToken({ agent: 'deployer' }, 'pg app test');
}, 60_000);

afterAll(async () => {
  await (await app()).close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the application on PostgreSQL', () => {
  it('records a DENY before answering it, with the decision id it answers', async () => {
    const res = await post(routes.check.POST, '/api/v1/permissions/check', { agent: 'deployer', tool: 'export_raw_data', arguments: { dataset_id: 'ds-1', card: '4111 1111 1111 1111' }, tool_call_id: 'tc-deny-1' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { decision: string; decision_id: string; rule_source: string };
    expect(body).toMatchObject({ decision: 'DENY', rule_source: 'agent_allowlist' });
    const row = (await pool.query('SELECT decision_id, tool_call_id, arguments_json, row_hash FROM permission_denials WHERE decision_id = $1', [body.decision_id])).rows[0];
    expect(row).toMatchObject({ tool_call_id: 'tc-deny-1' });
    expect(row.arguments_json).not.toContain('4111');
    expect(row.row_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('asks for approval, lets an operator approve once, and runs the approved call exactly once', async () => {
    const call = { agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: 'm-9', env: 'prod' } };
    const asked = (await (await post(routes.check.POST, '/api/v1/permissions/check', call)).json()) as { decision: string; approval_id: string };
    expect(asked.decision).toBe('ASK');
    const again = (await (await post(routes.check.POST, '/api/v1/permissions/check', call)).json()) as { approval_id: string };
    expect(again.approval_id).toBe(asked.approval_id);
    const listed = (await (await callRoute(routes.approvals.GET, '/api/v1/approvals?status=pending', { token: ADMIN })).json()) as { approvals: { id: string }[] };
    expect(listed.approvals.map((a) => a.id)).toContain(asked.approval_id);
    const approved = await post(routes.approve.POST, `/api/v1/approvals/${asked.approval_id}/approve`, { reason: 'ok' }, ADMIN, { id: asked.approval_id });
    expect(approved.status).toBe(200);
    const rejected = await post(routes.reject.POST, `/api/v1/approvals/${asked.approval_id}/reject`, { reason: 'too late' }, ADMIN, { id: asked.approval_id });
    expect(rejected.status).toBe(409);
    const runs = await Promise.all([1, 2, 3].map(async () => ((await (await post(routes.check.POST, '/api/v1/permissions/check', call)).json()) as { decision: string }).decision));
    expect(runs.filter((d) => d === 'ALLOW')).toHaveLength(1);
  });

  it("answers a viewer's check of an agent's approved call ASK, leaves the approval to the agent, and names who used it", async () => {
    const a = await app();
    await a.auth.createUser('victor', 'viewer', 'viewer-password');
    const viewer = await a.auth.createToken({ username: 'victor' }, 'pg app test');
    const call = { agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: 'm-bound', env: 'prod' } };
    const asked = (await (await post(routes.check.POST, '/api/v1/permissions/check', call)).json()) as { approval_id: string };
    expect((await post(routes.approve.POST, `/api/v1/approvals/${asked.approval_id}/approve`, {}, ADMIN, { id: asked.approval_id })).status).toBe(200);
    const viewers = (await (await post(routes.check.POST, '/api/v1/permissions/check', call, viewer)).json()) as { decision: string; approval_id: string };
    expect(viewers.decision).toBe('ASK');
    expect(viewers.approval_id).not.toBe(asked.approval_id);
    expect((await a.approvals.get(asked.approval_id))?.status).toBe('approved');
    expect(await (await post(routes.check.POST, '/api/v1/permissions/check', call)).json()).toMatchObject({ decision: 'ALLOW', approval_id: asked.approval_id });
    const consumed = await pool.query<{ actor: string }>("SELECT actor FROM security_events WHERE target = $1 AND type = 'approval.consumed'", [asked.approval_id]);
    expect(consumed.rows.map((r) => r.actor)).toEqual(['agent:deployer']);
  });

  it('does not allow a call whose rejection was turned into an approval by editing the database', async () => {
    const call = { agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: 'm-edited', env: 'prod' } };
    const asked = (await (await post(routes.check.POST, '/api/v1/permissions/check', call)).json()) as { approval_id: string };
    expect((await post(routes.reject.POST, `/api/v1/approvals/${asked.approval_id}/reject`, { reason: 'no' }, ADMIN, { id: asked.approval_id })).status).toBe(200);
    await pool.query("UPDATE approvals SET status = 'approved' WHERE id = $1", [asked.approval_id]);
    const next = (await (await post(routes.check.POST, '/api/v1/permissions/check', call)).json()) as { decision: string; reason: string };
    expect(next).toMatchObject({ decision: 'ASK', reason: expect.stringMatching(/audit trail does not hold it/) });
    const recorded = await pool.query("SELECT 1 FROM security_events WHERE target = $1 AND type = 'approval.unverified'", [asked.approval_id]);
    expect(recorded.rowCount).toBe(1);
  });

  it('refuses arguments it cannot keep exactly (a "__proto__" key, 5,000 levels of nesting) with 400, recording nothing', async () => {
    const before = Number((await pool.query('SELECT count(*) AS n FROM permission_denials')).rows[0].n);
    const smuggled = await callRoute(routes.check.POST, '/api/v1/permissions/check', { method: 'POST', token: agent, body: '{"agent":"deployer","tool":"export_raw_data","arguments":{"__proto__":{"x":1}}}' });
    expect(smuggled.status).toBe(400);
    expect(((await smuggled.json()) as { error: { issues: { path: string }[] } }).error.issues.map((i) => i.path)).toEqual(['arguments.__proto__']);
    const deep = await callRoute(routes.check.POST, '/api/v1/permissions/check', { method: 'POST', token: agent, body: `{"agent":"deployer","tool":"export_raw_data","arguments":{"v":${'['.repeat(5_000)}${']'.repeat(5_000)}}}` });
    expect(deep.status).toBe(400);
    await expect((await app()).engine.decideAsync({ kind: 'tool', principal: { kind: 'agent', id: 'deployer', role: 'viewer', agent: 'deployer' }, agent: 'deployer', tool: 'export_raw_data', arguments: JSON.parse('{"a":{"prototype":1}}') as Record<string, unknown> })).rejects.toMatchObject({ code: 'INVALID_ARGUMENTS' });
    expect(Number((await pool.query('SELECT count(*) AS n FROM permission_denials')).rows[0].n)).toBe(before);
  });

  it('keeps a secret argument out of the approvals table, and runs the approval only for the call with that very secret', async () => {
    const SECRET = 'pg-secret-0123456789abcdef';
    const call = (password: string) => ({ agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: 'm-secret', env: 'prod', db_password: password } });
    const asked = (await (await post(routes.check.POST, '/api/v1/permissions/check', call(SECRET))).json()) as { approval_id: string };
    expect(JSON.stringify((await pool.query('SELECT * FROM approvals')).rows)).not.toContain(SECRET);
    await post(routes.approve.POST, `/api/v1/approvals/${asked.approval_id}/approve`, {}, ADMIN, { id: asked.approval_id });
    expect(((await (await post(routes.check.POST, '/api/v1/permissions/check', call('other'))).json()) as { decision: string }).decision).toBe('ASK');
    expect(await (await post(routes.check.POST, '/api/v1/permissions/check', call(SECRET))).json()).toMatchObject({ decision: 'ALLOW', approval_id: asked.approval_id });
  });

  it('answers a batch in order, every denial recorded before the answer', async () => {
    const res = await post(routes.batch.POST, '/api/v1/permissions/check/batch', {
      checks: [
        { agent: 'deployer', tool: 'monitor_drift', arguments: { model_id: 'm-1' } },
        { agent: 'deployer', tool: 'export_raw_data', arguments: { dataset_id: 'batch' }, tool_call_id: 'tc-batch' },
      ],
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { results: { decision: string; decision_id: string }[] };
    expect(body.results.map((r) => r.decision)).toEqual(['ALLOW', 'DENY']);
    expect((await pool.query('SELECT 1 FROM permission_denials WHERE decision_id = $1', [body.results[1]!.decision_id])).rowCount).toBe(1);
  });

  it('answers AuthZEN evaluations from the same engine', async () => {
    const res = await post(routes.authzen.POST, '/access/v1/evaluation', { subject: { type: 'agent', id: 'deployer' }, action: { name: 'call' }, resource: { type: 'tool', id: 'monitor_drift' } });
    expect(await res.json()).toMatchObject({ decision: true });
  });

  it('signs in, and records the sign-in and a refused one', async () => {
    const ok = await callRoute(routes.login.POST, '/api/v1/auth/login', { method: 'POST', body: JSON.stringify({ username: 'admin', password: 'pg-app-admin-password' }) });
    expect(ok.status).toBe(200);
    const bad = await callRoute(routes.login.POST, '/api/v1/auth/login', { method: 'POST', body: JSON.stringify({ username: 'admin', password: 'wrong-password' }) });
    expect(bad.status).toBe(401);
    const events = (await (await callRoute(routes.events.GET, '/api/v1/audit/events?type=auth', { token: ADMIN })).json()) as { events: { type: string }[] };
    expect(events.events.map((e) => e.type)).toEqual(expect.arrayContaining(['auth.login.succeeded', 'auth.login.failed']));
  });

  it('changes a flag, records the change and refuses an invariant', async () => {
    const off = await callRoute(routes.flag.PUT, '/api/v1/flags/drift_monitoring', { method: 'PUT', token: ADMIN, body: JSON.stringify({ value: false, reason: 'test' }), params: { name: 'drift_monitoring' } });
    expect(off.status).toBe(200);
    const denied = (await (await post(routes.check.POST, '/api/v1/permissions/check', { agent: 'deployer', tool: 'monitor_drift', arguments: {} })).json()) as { rule_source: string };
    expect(denied.rule_source).toBe('flag:drift_monitoring');
    const invariant = await callRoute(routes.flag.PUT, '/api/v1/flags/hitl_gates', { method: 'PUT', token: ADMIN, body: JSON.stringify({ value: false, reason: 'test' }), params: { name: 'hitl_gates' } });
    expect(invariant.status).toBe(403);
    const refused = (await (await callRoute(routes.events.GET, '/api/v1/audit/events?type=flag.refused', { token: ADMIN })).json()) as { events: { target: string }[] };
    expect(refused.events.map((e) => e.target)).toEqual(['hitl_gates']);
    const report = (await (await callRoute(routes.transparency.GET, '/api/v1/transparency', { token: ADMIN })).json()) as { history: { changes: { name: string }[] } };
    expect(report.history.changes.map((c) => c.name)).toContain('drift_monitoring');
    const back = await callRoute(routes.flag.DELETE, '/api/v1/flags/drift_monitoring', { method: 'DELETE', token: ADMIN, body: JSON.stringify({ reason: 'done' }), params: { name: 'drift_monitoring' } });
    expect(back.status).toBe(200);
  });

  it('reads the explorer: list, one denial, summary, facets, histogram, tail and the CSV export', async () => {
    const list = (await (await callRoute(routes.denials.GET, '/api/v1/permissions/denials?q=batch', { token: ADMIN })).json()) as { denials: { id: number; tool_call_id: string }[] };
    expect(list.denials.map((d) => d.tool_call_id)).toEqual(['tc-batch']);
    const one = await callRoute(routes.denial.GET, `/api/v1/permissions/denials/${list.denials[0]!.id}`, { token: ADMIN, params: { id: String(list.denials[0]!.id) } });
    expect(((await one.json()) as { trace: unknown[] }).trace.length).toBeGreaterThan(0);
    const summary = (await (await callRoute(routes.summary.GET, '/api/v1/permissions/denials/summary?since=3600', { token: ADMIN })).json()) as { total: number };
    const count = Number((await pool.query('SELECT count(*) AS n FROM permission_denials')).rows[0].n);
    expect(summary.total).toBe(count);
    const facets = (await (await callRoute(routes.facets.GET, '/api/v1/permissions/denials/facets?field=tool&prefix=EXP', { token: ADMIN })).json()) as { values: { value: string }[] };
    expect(facets.values.map((v) => v.value)).toEqual(['export_raw_data']);
    const histogram = await callRoute(routes.histogram.GET, '/api/v1/permissions/denials/histogram?since=3600', { token: ADMIN });
    expect(histogram.status).toBe(200);
    const tail = (await (await callRoute(routes.tail.GET, '/api/v1/permissions/denials/tail?after=0', { token: ADMIN })).json()) as { count: number };
    expect(tail.count).toBe(count);
    const csv = await (await callRoute(routes.denials.GET, '/api/v1/permissions/denials?format=csv', { token: ADMIN })).text();
    expect(csv.trim().split('\n')).toHaveLength(count + 1);
  });

  it('verifies the trail it wrote, and says it is ready', async () => {
    await (await app()).checkpointAudit();
    const verified = (await (await callRoute(routes.verify.GET, '/api/v1/audit/verify', { token: ADMIN })).json()) as { ok: boolean; chains: { checkpoints_valid: number }[] };
    expect(verified.ok).toBe(true);
    expect(verified.chains.every((c) => c.checkpoints_valid >= 1)).toBe(true);
    const ready = await callRoute(routes.ready.GET, '/api/v1/ready');
    expect(await ready.json()).toMatchObject({ status: 'ready' });
  });

  it('reports the state gauges of /metrics from PostgreSQL', async () => {
    const { stateRegistry } = await import('@/lib/ops/metrics');
    const text = await (await stateRegistry(await app())).metrics();
    const pending = Number((await pool.query("SELECT count(*) AS n FROM approvals WHERE status = 'pending'")).rows[0].n);
    expect(text).toContain(`swarm_approvals_pending ${pending}`);
    expect(text).toMatch(/swarm_audit_rows_unsigned\{chain="permission_denials"\} \d+/);
    expect(text).not.toContain('swarm_wal_size_bytes');
  });

  it('answers the decision endpoints from the listener: concurrent denials committed together before their answers, a failed one refused alone', async () => {
    const { createFrontServer } = await import('@/lib/server/front');
    const upstream: Server = createServer((_, res) => res.end('upstream'));
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
    const front = createFrontServer({ app: await app(), upstream: { host: '127.0.0.1', port: (upstream.address() as AddressInfo).port } });
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `http://127.0.0.1:${(front.address() as AddressInfo).port}/api/v1/permissions/check`;
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          fetch(url, { method: 'POST', headers: { authorization: `Bearer ${agent}`, 'content-type': 'application/json' }, body: JSON.stringify({ agent: 'deployer', tool: 'export_raw_data', arguments: { i }, tool_call_id: `front-${i}` }) }).then((r) => r.json() as Promise<{ decision: string }>),
        ),
      );
      expect(answers.every((a) => a.decision === 'DENY')).toBe(true);
      expect(Number((await pool.query("SELECT count(*) AS n FROM permission_denials WHERE tool_call_id LIKE 'front-%'")).rows[0].n)).toBe(20);

      // A denial that cannot be written is refused alone (503); the others recorded at the same moment commit.
      await pool.query(`CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.tool_call_id = 'poison' THEN RAISE EXCEPTION 'disk full (test)'; END IF; RETURN NEW; END $$`);
      await pool.query('CREATE TRIGGER refuse_poison BEFORE INSERT ON permission_denials FOR EACH ROW EXECUTE FUNCTION refuse_poison()');
      try {
        const ids = ['g-0', 'g-1', 'g-2', 'poison', 'g-3', 'g-4', 'g-5'];
        const statuses = await Promise.all(
          ids.map((id) =>
            fetch(url, { method: 'POST', headers: { authorization: `Bearer ${agent}`, 'content-type': 'application/json' }, body: JSON.stringify({ agent: 'deployer', tool: 'export_raw_data', arguments: { id }, tool_call_id: id }) }).then((r) => r.status),
          ),
        );
        expect(statuses).toEqual([200, 200, 200, 503, 200, 200, 200]);
        const stored = (await pool.query<{ id: string }>("SELECT tool_call_id AS id FROM permission_denials WHERE tool_call_id IN ('g-0','g-1','g-2','g-3','g-4','g-5','poison') ORDER BY id")).rows.map((r) => r.id);
        expect(stored).toEqual(['g-0', 'g-1', 'g-2', 'g-3', 'g-4', 'g-5']);
      } finally {
        await pool.query('DROP TRIGGER refuse_poison ON permission_denials');
      }
      const verified = (await (await callRoute(routes.verify.GET, '/api/v1/audit/verify', { token: ADMIN })).json()) as { ok: boolean; failures: unknown[] };
      expect(verified.failures).toEqual([]);
    } finally {
      await front.shutdown(1_000);
      upstream.close();
    }
  });
});
