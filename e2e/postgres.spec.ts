/**
 * Two servers of the real build on one PostgreSQL (a throwaway cluster this file starts: initdb and pg_ctl in a
 * temporary folder, on a free port), proving the promises of several servers: a session and a token work on both;
 * an approval approved on one and rejected on the other at the same moment has one outcome; an approved call runs
 * once; a flag override made on one reaches the other within a second; one hash chain that `swarm audit verify`
 * accepts; a server killed with SIGKILL under DENY load loses no denial it acknowledged, and the other takes over
 * the sweeper and the checkpoints; with the database gone, checks fail closed and readiness says why.
 */
import { expect, test, type Page } from '@playwright/test';
import pg from 'pg';
import { generateText, stepCountIs, tool as aiTool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { SwarmClient } from '../packages/client/src/index';
import { withSwarm } from '../packages/client/src/ai-sdk';
import { startPostgres, type PgCluster } from '@/lib/test-support/postgres';
import { E2E } from './fixtures/accounts';
import { PG_ADMIN_PASSWORD, PG_ADMIN_TOKEN, PG_METRICS_TOKEN, pgServers, type PgServer, type PgServers } from './fixtures/pg-servers';

test.describe.configure({ mode: 'serial', timeout: 180_000 });

let cluster: PgCluster;
let servers: PgServers;
let a: PgServer;
let b: PgServer;
let pool: pg.Pool;
let agentToken: string;

const json = { 'content-type': 'application/json' };
const bearer = (token: string) => ({ authorization: `Bearer ${token}`, ...json });

async function check(server: PgServer, token: string, call: Record<string, unknown>) {
  const res = await fetch(`${server.url}/api/v1/permissions/check`, { method: 'POST', headers: bearer(token), body: JSON.stringify(call) });
  return { status: res.status, body: (await res.json()) as { decision?: string; approval_id?: string; decision_id?: string; rule_source?: string } };
}

/** Sign in to a server's console as its admin. */
async function signIn(page: Page, server: PgServer): Promise<void> {
  await page.goto(`${server.url}/login`);
  await page.getByLabel('User name').fill('admin');
  await page.getByLabel('Password').fill(PG_ADMIN_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByTestId('signed-in-user')).toContainText('admin');
}

test.beforeAll(async () => {
  // A cluster, two servers starting at once and a CLI call: more than one test's time on a busy machine.
  test.setTimeout(180_000);
  cluster = await startPostgres();
  cluster.createDatabase('two');
  servers = pgServers(cluster.urlOf('two'));
  a = servers.server(E2E.port + 71);
  b = servers.server(E2E.port + 72);
  // Two servers starting at the same moment: one migrates, the other waits for it; one creates the admin.
  await Promise.all([a.start(), b.start()]);
  pool = new pg.Pool({ connectionString: cluster.urlOf('two'), max: 2 });
  // The last test stops the cluster under this pool's idle connections.
  pool.on('error', () => undefined);
  const made = await servers.swarm('tokens', 'add', '--agent', 'deployer', '--name', 'pg e2e');
  expect(made.code, made.out).toBe(0);
  agentToken = /\b(swt_\S+)/.exec(made.out)![1]!;
});

test.afterAll(async () => {
  await a?.kill('SIGKILL');
  await b?.kill('SIGKILL');
  await pool?.end();
  cluster?.stop();
});

test('a session opened on one server and a token made by the CLI work on the other', async () => {
  const login = await fetch(`${a.url}/api/v1/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ username: 'admin', password: PG_ADMIN_PASSWORD }) });
  expect(login.status).toBe(200);
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  const onB = await fetch(`${b.url}/api/v1/approvals`, { headers: { cookie } });
  expect(onB.status).toBe(200);
  const asAgentOnB = await check(b, agentToken, { agent: 'deployer', tool: 'monitor_drift', arguments: { model_id: 'm-1' } });
  expect(asAgentOnB).toMatchObject({ status: 200, body: { decision: 'ALLOW' } });
});

test('an agent on the AI SDK held on one server runs as soon as the approval is given on the other (the long poll hears the change feed)', async () => {
  const ran: string[] = [];
  const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
  let step = 0;
  const model = new MockLanguageModelV3({
    doGenerate: async () =>
      step++ === 0
        ? { content: [{ type: 'tool-call', toolCallId: 'call_pg', toolName: 'deploy_serving', input: JSON.stringify({ model_id: 'm-pg-wait', env: 'prod' }) }], finishReason: { unified: 'tool-calls', raw: undefined }, usage, warnings: [] }
        : { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] },
  });
  let held: string | undefined;
  const swarm = new SwarmClient({ url: a.url, token: agentToken, agent: 'deployer' });
  const tools = withSwarm(
    { deploy_serving: aiTool({ inputSchema: z.object({ model_id: z.string(), env: z.string() }), execute: async () => (ran.push(`deployed at ${Date.now()}`), { ok: true }) }) },
    swarm,
    { waitMs: 60_000, onHold: (answer) => (held = answer.approval_id ?? undefined) },
  );
  const run = generateText({ model, tools, prompt: 'Deploy.', stopWhen: stepCountIs(2) });
  await expect.poll(() => held).toBeTruthy();
  // The long poll is under way on server A; the approval is given on server B.
  const approved = await fetch(`${b.url}/api/v1/approvals/${held}/approve`, { method: 'POST', headers: bearer(PG_ADMIN_TOKEN), body: JSON.stringify({ reason: 'CHG-40' }) });
  expect(approved.status).toBe(200);
  const approvedAt = Date.now();
  await run;
  expect(ran).toHaveLength(1);
  // Heard through PostgreSQL's NOTIFY, not at the end of a poll.
  expect(Number(/\d+/.exec(ran[0]!)![0]) - approvedAt).toBeLessThan(3_000);
});

test('approve on one server and reject on the other at the same moment: exactly one outcome', async () => {
  for (let round = 0; round < 5; round++) {
    const asked = await check(a, agentToken, { agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: `race-${round}`, env: 'prod' } });
    expect(asked.body.decision).toBe('ASK');
    const id = asked.body.approval_id!;
    const [approve, reject] = await Promise.all([
      fetch(`${a.url}/api/v1/approvals/${id}/approve`, { method: 'POST', headers: bearer(PG_ADMIN_TOKEN), body: JSON.stringify({ reason: 'ok' }) }),
      fetch(`${b.url}/api/v1/approvals/${id}/reject`, { method: 'POST', headers: bearer(PG_ADMIN_TOKEN), body: JSON.stringify({ reason: 'no' }) }),
    ]);
    expect([approve.status, reject.status].sort()).toEqual([200, 409]);
    const row = (await pool.query<{ status: string }>('SELECT status FROM approvals WHERE id = $1', [id])).rows[0]!;
    expect(row.status).toBe(approve.status === 200 ? 'approved' : 'rejected');
  }
});

test('an approved call runs exactly once, whichever servers the agent asks at once', async () => {
  const call = { agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: 'once', env: 'prod' } };
  const asked = await check(a, agentToken, call);
  const approved = await fetch(`${b.url}/api/v1/approvals/${asked.body.approval_id}/approve`, { method: 'POST', headers: bearer(PG_ADMIN_TOKEN), body: JSON.stringify({}) });
  expect(approved.status).toBe(200);
  const answers = await Promise.all([a, b, a, b, a, b].map((s) => check(s, agentToken, call)));
  expect(answers.filter((r) => r.body.decision === 'ALLOW')).toHaveLength(1);
  const consumed = await pool.query("SELECT count(*)::int AS n FROM approvals WHERE id = $1 AND status = 'consumed'", [asked.body.approval_id]);
  expect(consumed.rows[0].n).toBe(1);
});

test('a flag override made on one server reaches the other within a second', async () => {
  const call = { agent: 'deployer', tool: 'monitor_drift', arguments: { model_id: 'm-2' } };
  const before = await check(b, agentToken, call);
  expect(before.body.decision).toBe('ALLOW');
  const started = Date.now();
  const put = await fetch(`${a.url}/api/v1/flags/drift_monitoring`, { method: 'PUT', headers: bearer(PG_ADMIN_TOKEN), body: JSON.stringify({ value: false, reason: 'pg e2e' }) });
  expect(put.status, await put.clone().text()).toBe(200);
  let seenAfter = Infinity;
  while (Date.now() - started < 5_000) {
    const flag = (await (await fetch(`${b.url}/api/v1/flags/drift_monitoring`, { headers: bearer(PG_ADMIN_TOKEN) })).json()) as { value: boolean };
    if (flag.value === false) {
      seenAfter = Date.now() - started;
      break;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  expect(seenAfter).toBeLessThan(1_000);
  const after = await check(b, agentToken, call);
  expect(after.body).toMatchObject({ decision: 'DENY', rule_source: 'flag:drift_monitoring' });
  const back = await fetch(`${b.url}/api/v1/flags/drift_monitoring`, { method: 'DELETE', headers: bearer(PG_ADMIN_TOKEN), body: JSON.stringify({ reason: 'pg e2e done' }) });
  expect(back.status).toBe(200);
});

test('the console works on PostgreSQL: signed in on one server, every page read from the other', async ({ page }) => {
  // A denial of its own to find on the pages: which denials the tests before leave depends on who won their races.
  const denied = await check(a, agentToken, { agent: 'deployer', tool: 'export_raw_data', arguments: { dataset_id: 'ds-console' } });
  expect(denied.body.decision).toBe('DENY');
  await signIn(page, a);
  // The session cookie is for 127.0.0.1, whatever the port: the same session on server B.
  const checks: [string, RegExp][] = [
    ['/denials', /export_raw_data|deploy_serving/],
    ['/approvals', /deploy_serving/],
    ['/audit', /auth\.login\.succeeded/],
    ['/transparency', /drift_monitoring/],
    ['/reports', /report/i],
    ['/notifications', /notification/i],
  ];
  for (const [path, text] of checks) {
    const res = await page.goto(`${b.url}${path}`);
    expect(res?.status(), path).toBe(200);
    await expect(page.locator('main')).toContainText(text);
  }
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto(`${b.url}/denials`);
  await expect(page.locator('main')).toContainText(/export_raw_data|deploy_serving/);
  await page.screenshot({ path: test.info().outputPath('denials-on-postgres-1440.png'), fullPage: false });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${b.url}/approvals`);
  await page.screenshot({ path: test.info().outputPath('approvals-on-postgres-390.png'), fullPage: false });
});

test('a server killed with SIGKILL under DENY load loses no denial it acknowledged; the other serves on and takes over', async () => {
  const acknowledged: string[] = [];
  let cut = 0;
  let stop = false;
  /** Resolves once `server` has acknowledged `count` more denials than when asked (the moments of the test: answers, not time). */
  const waiters: { prefix: string; count: number; done: () => void }[] = [];
  const acknowledgedBy = (prefix: string) => acknowledged.filter((id) => id.startsWith(prefix)).length;
  const answers = (prefix: string, more: number) =>
    new Promise<void>((done) => waiters.push({ prefix, count: acknowledgedBy(prefix) + more, done }));
  const client = async (server: PgServer, name: string) => {
    for (let i = 0; !stop; i++) {
      const id = `${name}-${i}`;
      try {
        const r = await check(server, agentToken, { agent: 'deployer', tool: 'export_raw_data', arguments: { dataset_id: id }, tool_call_id: id });
        if (r.status === 200 && r.body.decision === 'DENY') acknowledged.push(id);
        for (const w of waiters) if (acknowledgedBy(w.prefix) >= w.count) w.done();
      } catch {
        cut++; // the server died under this request: no answer, no promise made
        if (server === a) return;
      }
    }
  };
  const load = [client(a, 'a0'), client(a, 'a1'), client(a, 'a2'), client(b, 'b0'), client(b, 'b1')];
  // A is killed in the middle of its load, after 60 answers; B then serves on for 30 more.
  await answers('a', 60);
  await a.kill('SIGKILL');
  await answers('b', 30);
  stop = true;
  await Promise.all(load);
  expect(acknowledged.filter((id) => id.startsWith('a')).length).toBeGreaterThan(20);
  expect(acknowledged.filter((id) => id.startsWith('b')).length).toBeGreaterThan(20);
  const stored = new Set((await pool.query<{ id: string }>('SELECT tool_call_id AS id FROM permission_denials WHERE tool_call_id IS NOT NULL')).rows.map((r) => r.id));
  const lost = acknowledged.filter((id) => !stored.has(id));
  expect(lost, `${lost.length} of ${acknowledged.length} acknowledged denials lost (${cut} requests cut by the kill)`).toEqual([]);

  // B stays ready, and leads the sweeper and the signer within a few seconds of A's end.
  const ready = (await (await fetch(`${b.url}/api/v1/ready`)).json()) as { status: string; checks: { name: string; ok: boolean; detail?: string }[] };
  expect(ready.status).toBe('ready');
  await expect
    .poll(async () => (await pool.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted")).rows[0].n, { timeout: 10_000 })
    .toBeGreaterThanOrEqual(2);
  await expect
    .poll(async () => (await pool.query<{ size: number }>("SELECT max(size)::int AS size FROM audit_checkpoints WHERE chain = 'permission_denials'")).rows[0]!.size ?? 0, { timeout: 20_000 })
    .toBeGreaterThanOrEqual((await pool.query("SELECT max(id)::int AS n FROM permission_denials")).rows[0].n);
});

test('the audit trail of both servers is one chain that swarm audit verify accepts', async () => {
  const verified = await servers.swarm('audit', 'verify', '--db', servers.env.SWARM_DB!, '--public-key', `${servers.keyDir}/audit-signing-key.pub`);
  expect(verified.code, verified.out).toBe(0);
  expect(verified.out).toMatch(/permission_denials/);
});

test('a server stopped with SIGTERM records its stop and signs what it wrote last, then starts again', async () => {
  const before = (await pool.query("SELECT count(*)::int AS n FROM security_events WHERE type = 'server.stopped'")).rows[0].n as number;
  await b.kill('SIGTERM');
  const stops = (await pool.query("SELECT count(*)::int AS n FROM security_events WHERE type = 'server.stopped'")).rows[0].n as number;
  expect(stops).toBe(before + 1);
  // It led the signer (A is gone): its last checkpoint covers its own stop.
  const [head, signed] = await Promise.all([
    pool.query("SELECT max(id)::int AS n FROM security_events"),
    pool.query("SELECT max(size)::int AS n FROM audit_checkpoints WHERE chain = 'security_events'"),
  ]);
  expect(signed.rows[0].n).toBe(head.rows[0].n);
  await b.start();
  expect((await check(b, agentToken, { agent: 'deployer', tool: 'monitor_drift', arguments: {} })).body.decision).toBe('ALLOW');
});

test('with the database gone, checks fail closed, readiness says why, pages say so calmly', async ({ page }) => {
  await signIn(page, b);
  cluster.stop();
  const ready = await fetch(`${b.url}/api/v1/ready`);
  const body = (await ready.json()) as { reason?: string };
  expect(ready.status, JSON.stringify(body)).toBe(503);
  expect(body.reason, JSON.stringify(body)).toMatch(/database: .*not available/);
  const refused = await check(b, agentToken, { agent: 'deployer', tool: 'export_raw_data', arguments: { dataset_id: 'gone' } });
  expect(refused.status, b.log().slice(-3000)).toBe(503);
  expect(refused.body.decision).toBeUndefined();
  // The monitoring sees the outage instead of going blind: /metrics answers, the database gauge at 0.
  const metrics = await fetch(`${b.url}/metrics`, { headers: { authorization: `Bearer ${PG_METRICS_TOKEN}` } });
  expect(metrics.status).toBe(200);
  const text = await metrics.text();
  expect(text).toMatch(/^swarm_database_up 0$/m);
  expect(text).toMatch(/swarm_decisions_total/);
  const res = await page.goto(`${b.url}/approvals`);
  expect(res?.status()).toBeGreaterThanOrEqual(500);
  await expect(page.getByRole('heading', { name: 'This page could not be loaded' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Try again' })).toBeVisible();
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: test.info().outputPath('outage-390.png') });
});
