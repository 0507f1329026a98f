/**
 * Operations (issue 12): readiness, Prometheus metrics through the decision listener, structured request logs and the
 * listener's graceful shutdown. Real SQLite in a temp dir, real sockets; the upstream is a small node:http server
 * standing in for Next.js (it answers the internal metrics route with its own prom-client registry, as Next.js does).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Counter, Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callRoute, useTempServerEnv } from './support/in-process-api';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const SECRET = 'internal-secret-0123456789abcdef';
const server = useTempServerEnv('ops', { policy: 'empty', env: { SWARM_METRICS_TOKEN: METRICS_TOKEN } });

const { getSqliteApp } = await import('@/lib/app');
const { createFrontServer } = await import('@/lib/server/front');
const { refreshLogLevel, setLogSink } = await import('@/lib/ops/log');
const { readiness } = await import('@/lib/ops/ready');
const ready = await import('@/app/api/v1/ready/route');
const health = await import('@/app/api/v1/health/route');
const openapi = await import('@/app/api/v1/openapi.json/route');
const internal = await import('@/app/internal/metrics/route');

let front: Server & { shutdown(t?: number): Promise<void> };
let upstream: Server;
let base = '';
let agentToken = '';
let viewerToken = '';
const upstreamSeen: (string | undefined)[] = [];

/** The registry of the stand-in for the Next.js process: one decision it made itself. */
const nextRegistry = new Registry();
new Counter({ name: 'swarm_decisions_total', help: 'x', labelNames: ['kind', 'decision', 'source_family'], registers: [nextRegistry] }).inc({ kind: 'tool', decision: 'ALLOW', source_family: 'from_next' }, 7);

const listen = (s: Server) => new Promise<number>((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)));

beforeAll(async () => {
  const app = getSqliteApp();
  agentToken = await app.auth.createToken({ agent: 'data_cleaner' }, 'ops test agent');
  await app.auth.createUser('vera', 'viewer');
  viewerToken = await app.auth.createToken({ username: 'vera' }, 'ops test viewer');
  upstream = createServer((req, res) => {
    upstreamSeen.push(req.url);
    if (req.url === '/internal/metrics' && req.headers['x-swarm-internal-secret'] === SECRET) {
      void nextRegistry.getMetricsAsJSON().then((json) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(json)));
      return;
    }
    res.writeHead(404).end();
  });
  const upstreamPort = await listen(upstream);
  front = createFrontServer({ app, upstream: { host: '127.0.0.1', port: upstreamPort }, internalSecret: SECRET });
  base = `http://127.0.0.1:${await listen(front)}`;
});
afterAll(async () => {
  await front.shutdown(1000);
  await new Promise((r) => upstream.close(r));
  await getSqliteApp().close();
  server.remove();
});

/** Prometheus text exposition, parsed: `name{labels}` -> value. */
function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)$/.exec(line);
    expect(m, `a valid sample line: ${line}`).not.toBeNull();
    const labels = m![2] ? [...m![2].slice(1, -1).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => `${l[1]}=${l[2]}`).sort().join(',') : '';
    out.set(`${m![1]}{${labels}}`, Number(m![3]));
  }
  return out;
}

async function scrape(token = METRICS_TOKEN): Promise<Map<string, number>> {
  const r = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseMetrics(await r.text());
}

const check = (tool: string, args: Record<string, unknown> = {}) =>
  fetch(`${base}/api/v1/permissions/check`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agentToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ agent: 'data_cleaner', tool, arguments: args }),
  });

describe('GET /api/v1/ready', () => {
  // Moved from e2e/ops.spec.ts (issue 43): what the answer holds is the route handlers', not the build's.
  it('answers without a token, as health and the OpenAPI document do', async () => {
    const r = await callRoute(ready.GET, '/api/v1/ready');
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ status: 'ready' });
    expect((await callRoute(health.GET, '/api/v1/health')).status).toBe(200);
    const doc = await callRoute(openapi.GET, '/api/v1/openapi.json');
    expect(doc.status).toBe(200);
    const body = (await doc.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(body.openapi).toBe('3.1.0');
    expect(Object.keys(body.paths)).toEqual(expect.arrayContaining(['/api/v1/permissions/check', '/api/v1/ready', '/metrics']));
  });

  it('is 200 when the database takes writes, the configuration loaded and the background work runs', async () => {
    const r = await callRoute(ready.GET, '/api/v1/ready');
    const body = (await r.json()) as { status: string; checks: { name: string; ok: boolean }[] };
    expect(r.status).toBe(200);
    expect(body.status).toBe('ready');
    expect(body.checks.map((c) => [c.name, c.ok])).toEqual([['database', true], ['configuration', true], ['rules', true], ['checkpointer', true], ['sweeper', true]]);
  });

  it('is 503 naming the database when it does not take writes', async () => {
    const sqlite = getSqliteApp().db.$client;
    sqlite.pragma('query_only = ON');
    try {
      const r = await callRoute(ready.GET, '/api/v1/ready');
      expect(r.status).toBe(503);
      const body = (await r.json()) as { status: string; reason: string };
      expect(body.status).toBe('not_ready');
      expect(body.reason).toMatch(/^database: the database is not writable: .*readonly/i);
    } finally {
      sqlite.pragma('query_only = OFF');
    }
    expect((await readiness(getSqliteApp())).ready).toBe(true);
  });

  it('is 503 naming the file when a configuration file is malformed, and counts the refused reload', async () => {
    const before = (await scrape()).get('swarm_config_reload_failures_total{}') ?? 0;
    const file = join(server.dir, 'config', 'agents.yaml');
    const good = readFileSync(file, 'utf8');
    writeFileSync(file, 'agents: [unclosed\n');
    try {
      getSqliteApp().agentsFile.reload(true);
      const r = await callRoute(ready.GET, '/api/v1/ready');
      expect(r.status).toBe(503);
      const body = (await r.json()) as { reason: string };
      expect(body.reason).toContain('configuration:');
      expect(body.reason).toContain('agents.yaml');
      const after = await scrape();
      expect(after.get('swarm_config_reload_failures_total{}')).toBe(before + 1);
      expect(after.get('swarm_config_files_refused{}')).toBe(1);
    } finally {
      writeFileSync(file, good);
      getSqliteApp().agentsFile.reload(true);
    }
    expect((await callRoute(ready.GET, '/api/v1/ready')).status).toBe(200);
  });
});

describe('GET /metrics on the decision listener', () => {
  it('is refused without the metrics token or an admin (401, 403 recorded as a denial)', async () => {
    expect((await fetch(`${base}/metrics`)).status).toBe(401);
    const denied = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${viewerToken}` } });
    expect(denied.status).toBe(403);
    const body = (await denied.json()) as { error: { rule_source: string; decision_id: string } };
    expect(body.error.rule_source).toBe('rbac:admin');
    expect((await getSqliteApp().denials.query({ limit: 5 })).rows.some((r) => r.decisionId === body.error.decision_id && r.httpPath === '/metrics')).toBe(true);
    expect((await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer wrong-token' } })).status).toBe(401);
    // An admin token is enough.
    await scrape(server.adminToken);
  });

  it('counts the decisions made through it, merged with the Next.js process, with latencies and state', async () => {
    const before = await scrape();
    const answers = await Promise.all([check('deploy_serving'), check('deploy_serving'), check('deploy_serving'), check('clean_dataset', { dataset_id: 'ds_1' })]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    const decisions = (await Promise.all(answers.map((a) => a.json()))) as { decision: string; rule_source: string }[];
    expect(decisions.map((d) => d.decision)).toEqual(['DENY', 'DENY', 'DENY', 'ALLOW']);
    const after = await scrape();
    const key = 'swarm_decisions_total{decision=DENY,kind=tool,source_family=agent_allowlist}';
    expect((after.get(key) ?? 0) - (before.get(key) ?? 0)).toBe(3);
    const allowed = 'swarm_decisions_total{decision=ALLOW,kind=tool,source_family=agent_allowlist}';
    expect((after.get(allowed) ?? 0) - (before.get(allowed) ?? 0)).toBe(1);
    // The HTTP decisions of the route wrapper count too.
    expect(after.get('swarm_decisions_total{decision=ALLOW,kind=http,source_family=rbac}') ?? after.get('swarm_decisions_total{decision=ALLOW,kind=http,source_family=default}')).toBeGreaterThan(0);
    // The stand-in Next.js process's own count is merged in.
    expect(after.get('swarm_decisions_total{decision=ALLOW,kind=tool,source_family=from_next}')).toBe(7);
    expect(after.get('swarm_next_metrics_up{}')).toBe(1);
    expect(upstreamSeen).toContain('/internal/metrics');
    // Histograms: the decision latency and the denial writes moved with the calls.
    const count = (m: Map<string, number>, k: string) => m.get(k) ?? 0;
    expect(count(after, 'swarm_decision_duration_seconds_count{kind=tool}') - count(before, 'swarm_decision_duration_seconds_count{kind=tool}')).toBe(4);
    expect(count(after, 'swarm_denial_write_duration_seconds_count{}') - count(before, 'swarm_denial_write_duration_seconds_count{}')).toBeGreaterThanOrEqual(3);
    expect(after.get('swarm_decision_duration_seconds_bucket{kind=tool,le=+Inf}')).toBe(after.get('swarm_decision_duration_seconds_count{kind=tool}'));
    // State read at scrape time.
    for (const name of ['swarm_approvals_pending{}', 'swarm_approvals_oldest_pending_age_seconds{}', 'swarm_wal_size_bytes{}', 'swarm_audit_chain_head_age_seconds{chain=permission_denials}', 'swarm_audit_checkpoint_age_seconds{chain=security_events}']) {
      expect(after.has(name), name).toBe(true);
    }
    expect(after.get('swarm_wal_size_bytes{}')).toBeGreaterThan(0);
  });

  it('reports pending approvals and the age of the oldest', async () => {
    const app = getSqliteApp();
    await app.approvals.request({ gate: 'deploy', agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: 'm-ops', env: 'prod' }, requestedBy: 'agent:deployer', ruleSource: 'hitl:deploy', reason: 'test', expiresInSeconds: 3600 });
    const m = await scrape();
    expect(m.get('swarm_approvals_pending{}')).toBeGreaterThanOrEqual(1);
    expect(m.get('swarm_approvals_oldest_pending_age_seconds{}')).toBeGreaterThanOrEqual(0);
  });

  it('still answers when the Next.js process does not report (only this process then)', async () => {
    const lonely = createFrontServer({ app: getSqliteApp(), upstream: { host: '127.0.0.1', port: 1 }, internalSecret: SECRET });
    const url = `http://127.0.0.1:${await listen(lonely)}`;
    try {
      const r = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(r.status).toBe(200);
      expect(parseMetrics(await r.text()).get('swarm_next_metrics_up{}')).toBe(0);
    } finally {
      await lonely.shutdown(100);
    }
  });

  it('never passes /internal/ on to Next.js, and the internal route wants the secret of this start', async () => {
    const seen = upstreamSeen.length;
    expect((await fetch(`${base}/internal/metrics`, { headers: { 'x-swarm-internal-secret': SECRET } })).status).toBe(404);
    expect(upstreamSeen.length).toBe(seen);
    process.env.SWARM_INTERNAL_SECRET = SECRET;
    try {
      expect((await internal.GET(new Request('http://localhost/internal/metrics'))).status).toBe(404);
      expect((await internal.GET(new Request('http://localhost/internal/metrics', { headers: { 'x-swarm-internal-secret': 'nope' } }))).status).toBe(404);
      const ok = await internal.GET(new Request('http://localhost/internal/metrics', { headers: { 'x-swarm-internal-secret': SECRET } }));
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as { name: string }[]).map((m) => m.name)).toContain('swarm_decisions_total');
    } finally {
      delete process.env.SWARM_INTERNAL_SECRET;
    }
  });
});

describe('structured logs', () => {
  it('writes one JSON line per API request with route, status, duration and decision id, at the level asked for', async () => {
    const lines: { level: string; line: Record<string, unknown> }[] = [];
    const restore = setLogSink((line, level) => lines.push({ level, line: JSON.parse(line) as Record<string, unknown> }));
    const level = process.env.SWARM_LOG_LEVEL;
    process.env.SWARM_LOG_LEVEL = 'info';
    refreshLogLevel();
    try {
      const r = await check('deploy_serving');
      const body = (await r.json()) as { decision_id: string };
      await fetch(`${base}/api/v1/permissions/check`, { method: 'POST', headers: { authorization: 'Bearer nope', 'content-type': 'application/json' }, body: '{}' });
      const requests = lines.filter((l) => l.line.msg === 'request');
      expect(requests).toHaveLength(2);
      expect(requests[0]!.line).toMatchObject({ level: 'info', method: 'POST', route: '/api/v1/permissions/check', status: 200, decision_id: body.decision_id, principal: 'agent:data_cleaner' });
      expect(typeof requests[0]!.line.duration_ms).toBe('number');
      expect(typeof requests[0]!.line.time).toBe('string');
      expect(requests[1]!.line).toMatchObject({ level: 'warn', status: 401 });
      // SWARM_LOG_LEVEL=error keeps only errors.
      process.env.SWARM_LOG_LEVEL = 'error';
      refreshLogLevel();
      lines.length = 0;
      await check('deploy_serving');
      expect(lines).toHaveLength(0);
    } finally {
      if (level === undefined) delete process.env.SWARM_LOG_LEVEL;
      else process.env.SWARM_LOG_LEVEL = level;
      refreshLogLevel();
      restore();
    }
  });
});

describe('graceful shutdown of the listener', () => {
  it('stops accepting, answers and records the checks in flight, then closes', async () => {
    const app = getSqliteApp();
    const own = createFrontServer({ app, upstream: { host: '127.0.0.1', port: 1 } });
    const url = `http://127.0.0.1:${await listen(own)}`;
    const before = await app.denials.count();
    let arrived = 0;
    let shutdown: Promise<void> | undefined;
    own.on('request', () => {
      if (++arrived === 20) shutdown = own.shutdown(5000);
    });
    const calls = Array.from({ length: 20 }, () =>
      fetch(`${url}/api/v1/permissions/check`, {
        method: 'POST',
        headers: { authorization: `Bearer ${agentToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ agent: 'data_cleaner', tool: 'deploy_serving', arguments: {} }),
      }),
    );
    const answers = await Promise.all(calls);
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    await shutdown;
    expect(await app.denials.count()).toBe(before + 20);
    await expect(fetch(`${url}/api/v1/health`)).rejects.toThrow();
  });
});
