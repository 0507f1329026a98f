/**
 * The decision listener in front of Next.js, over real sockets: decision calls with a bearer token are answered
 * directly, by the same route core Next.js runs (same bodies, same recording); everything else reaches the upstream
 * unchanged. The upstream here is a small node:http server that reports what it received (Next.js itself is covered
 * by the end-to-end tests, which run behind this listener).
 */
import { spawn } from 'node:child_process';
import Database from 'better-sqlite3';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { callRoute, useTempServerEnv } from './support/in-process-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const server = useTempServerEnv('front');

const { createApp, getSqliteApp } = await import('@/lib/app');
const { createFrontServer } = await import('@/lib/server/front');
const check = await import('@/app/api/v1/permissions/check/route');

let front: Server;
let upstream: Server;
let base = '';
let trainer = '';
const seen: { method?: string; url?: string; headers: IncomingHttpHeaders; body: string }[] = [];

const listen = (s: Server) => new Promise<number>((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)));

beforeAll(async () => {
  trainer = await getSqliteApp().auth.createToken({ agent: 'trainer' }, 't');
  upstream = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.writeHead(209, { 'content-type': 'text/plain', 'x-upstream': 'yes' });
      res.end(`upstream saw ${req.method} ${req.url}`);
    });
  });
  const upstreamPort = await listen(upstream);
  front = createFrontServer({ app: getSqliteApp(), upstream: { host: '127.0.0.1', port: upstreamPort } });
  base = `http://127.0.0.1:${await listen(front)}`;
});
afterAll(async () => {
  await new Promise((r) => front.close(r));
  front.closeAllConnections();
  await new Promise((r) => upstream.close(r));
  await getSqliteApp().close();
  server.remove();
});

const body = JSON.stringify({ agent: 'trainer', tool: 'tune_hyperparameters', arguments: { model_id: 'm-1', trials: 900 } });

/** The trainer's check of `tool` (no arguments) through the listener (`at`: another listener of the test). */
const call = (tool: string, at = base) =>
  fetch(`${at}/api/v1/permissions/check`, {
    method: 'POST',
    headers: { authorization: `Bearer ${trainer}`, 'content-type': 'application/json' },
    body: JSON.stringify({ agent: 'trainer', tool, arguments: {} }),
  });

describe('the decision listener', () => {
  it('answers a check with a bearer token itself, exactly as the route does, and records the denial', async () => {
    const before = seen.length;
    const r = await fetch(`${base}/api/v1/permissions/check`, { method: 'POST', headers: { authorization: `Bearer ${trainer}`, 'content-type': 'application/json' }, body });
    expect(seen.length).toBe(before);
    expect(r.status).toBe(200);
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.headers.get('x-frame-options')).toBe('DENY');
    expect(r.headers.get('referrer-policy')).toBe('same-origin');
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.headers.get('content-type')).toBe('application/json');
    const text = await r.text();
    expect(Number(r.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    const direct = JSON.parse(text) as { decision_id: string; decision: string; rule_source: string; trace: unknown[] };
    expect(direct).toMatchObject({ decision: 'DENY', rule_source: 'policy:bfsi/tuning-capacity-review', recorded: true });
    expect((await getSqliteApp().denials.query({ limit: 1 })).rows[0]).toMatchObject({ decisionId: direct.decision_id, agentName: 'trainer' });
    // The same request through the Next.js adapter: the same answer but for its own decision id.
    const viaRoute = (await (await callRoute(check.POST, '/api/v1/permissions/check', { method: 'POST', token: trainer, body })).json()) as typeof direct;
    expect({ ...viaRoute, decision_id: 'x' }).toEqual({ ...direct, decision_id: 'x' });
  });

  it('answers errors the same way: 401 for a bad token, 400 with the zod issues, 413 beyond the body limit', async () => {
    const bad = await fetch(`${base}/api/v1/permissions/check`, { method: 'POST', headers: { authorization: 'Bearer nope', 'content-type': 'application/json' }, body });
    expect(bad.status).toBe(401);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('UNAUTHENTICATED');
    const invalid = await fetch(`${base}/api/v1/permissions/check`, { method: 'POST', headers: { authorization: `Bearer ${trainer}`, 'content-type': 'application/json' }, body: '{"agent":"trainer"}' });
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { error: { issues: { path: string }[] } }).error.issues.map((i) => i.path)).toEqual(['tool']);
    const huge = await fetch(`${base}/api/v1/permissions/check`, {
      method: 'POST',
      headers: { authorization: `Bearer ${trainer}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agent: 'trainer', tool: 't', arguments: { x: 'y'.repeat(70_000) } }),
    });
    expect(huge.status).toBe(413);
  });

  it('refuses a token revoked by another connection from the next group on, though each group reads the token generation once', async () => {
    const token = await getSqliteApp().auth.createToken({ agent: 'trainer' }, 'revoked-elsewhere');
    const calls = (n: number) =>
      Promise.all(
        Array.from({ length: n }, () =>
          fetch(`${base}/api/v1/permissions/check`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body }).then((r) => r.status),
        ),
      );
    expect(await calls(8)).toEqual(Array(8).fill(200));
    // As the console or the CLI of another process would: its own connection, the triggers move auth_generation.
    const other = new Database(process.env.SWARM_DB!);
    other.prepare("UPDATE api_tokens SET revoked_at = ? WHERE name = 'revoked-elsewhere'").run(Date.now() / 1000);
    other.close();
    expect(await calls(8)).toEqual(Array(8).fill(401));
    // The other tokens, known from before, still work: only the generation moved, not the answer for them.
    expect((await call('tune_hyperparameters')).status).toBe(200);
  });

  it('passes everything else to the upstream unchanged: pages, other routes, and decision calls without a bearer token', async () => {
    const page = await fetch(`${base}/denials?window=1h`, { headers: { cookie: 'swarm_session=abc' } });
    expect(page.status).toBe(209);
    expect(await page.text()).toBe('upstream saw GET /denials?window=1h');
    expect(page.headers.get('x-upstream')).toBe('yes');
    expect(page.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    const cookieCheck = await fetch(`${base}/api/v1/permissions/check`, { method: 'POST', headers: { cookie: 'swarm_session=abc', 'content-type': 'application/json' }, body });
    expect(cookieCheck.status).toBe(209);
    const last = seen.at(-1)!;
    expect(last).toMatchObject({ method: 'POST', url: '/api/v1/permissions/check', body });
    expect(last.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(last.headers['x-forwarded-host']).toBe(new URL(base).host);
  });

  it('answers here only the exact path of a decision route (a query allowed); a path that needs parsing goes to the upstream', async () => {
    /** A POST with the path exactly as written (fetch would resolve dot segments itself). */
    const raw = (path: string) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const { hostname, port } = new URL(base);
        const r = httpRequest({ hostname, port, path, method: 'POST', headers: { authorization: `Bearer ${trainer}`, 'content-type': 'application/json' } }, (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        });
        r.on('error', reject);
        r.end(body);
      });
    const before = seen.length;
    const withQuery = await raw('/api/v1/permissions/check?from=test');
    expect(withQuery.status).toBe(200);
    expect(JSON.parse(withQuery.text)).toMatchObject({ decision: 'DENY', recorded: true });
    expect(seen.length).toBe(before);
    for (const path of ['/api/v1/permissions/%63heck', '/api/v1/x/../permissions/check', '/api//v1/permissions/check']) {
      expect(await raw(path)).toEqual({ status: 209, text: `upstream saw POST ${path}` });
    }
    expect(seen.length).toBe(before + 3);
  });

  it('commits concurrent decisions together; one that cannot be recorded is undone alone and answered 503', async () => {
    const sqlite = getSqliteApp().db.$client;
    sqlite.exec(`CREATE TEMP TRIGGER fail_me BEFORE INSERT ON permission_denials WHEN NEW.tool_name = 'fail_me' BEGIN SELECT RAISE(ABORT, 'disk full'); END`);
    const before = await getSqliteApp().denials.count();
    try {
      const answers = await Promise.all(['deploy_serving', 'fail_me', 'export_raw_data', 'train_model'].map((tool) => call(tool)));
      expect(answers.map((r) => r.status)).toEqual([200, 503, 200, 200]);
      const bodies = (await Promise.all(answers.map((r) => r.json()))) as { decision?: string; decision_id?: string; error?: { code: string } }[];
      expect(bodies[1]!.error?.code).toBe('AUDIT_UNAVAILABLE');
      expect(bodies.map((b) => b.decision ?? null)).toEqual(['DENY', null, 'DENY', 'ALLOW']);
      // The two denials are in the trail with the ids their callers got; the refused one left nothing.
      expect(await getSqliteApp().denials.count()).toBe(before + 2);
      for (const b of [bodies[0]!, bodies[2]!]) expect((await getSqliteApp().denials.query({ limit: 5 })).rows.some((r) => r.decisionId === b.decision_id)).toBe(true);
    } finally {
      sqlite.exec('DROP TRIGGER fail_me');
    }
  });

  it('answers a batch in the same group as single calls: every decision in order, its denials recorded before the answer', async () => {
    // Without the BFSI profile (which records every decision, so an earlier write would open the group first): the
    // batch's own transaction is the group's first write.
    const plainApp = createApp({ dbPath: process.env.SWARM_DB!, checkpointsElsewhere: true, profile: '' });
    const plain = createFrontServer({ app: plainApp, upstream: { host: '127.0.0.1', port: 1 } });
    const plainBase = `http://127.0.0.1:${await listen(plain)}`;
    try {
      const before = await plainApp.denials.count();
      const batch = (tools: string[]) =>
        fetch(`${plainBase}/api/v1/permissions/check/batch`, {
          method: 'POST',
          headers: { authorization: `Bearer ${trainer}`, 'content-type': 'application/json' },
          body: JSON.stringify({ checks: tools.map((tool) => ({ agent: 'trainer', tool, arguments: {} })) }),
        });
      const answers = await Promise.all([batch(['train_model', 'deploy_serving', 'export_raw_data']), call('deploy_serving', plainBase), batch(['deploy_serving'])]);
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
      const results = ((await answers[0]!.json()) as { results: { decision: string; decision_id: string }[] }).results;
      expect(results.map((r) => r.decision)).toEqual(['ALLOW', 'DENY', 'DENY']);
      expect(((await answers[1]!.json()) as { decision: string }).decision).toBe('DENY');
      expect(((await answers[2]!.json()) as { results: { decision: string }[] }).results.map((r) => r.decision)).toEqual(['DENY']);
      expect(await plainApp.denials.count()).toBe(before + 4);
      const ids = new Set((await plainApp.denials.query({ limit: 10 })).rows.map((r) => r.decisionId));
      for (const r of results.slice(1)) expect(ids.has(r.decision_id)).toBe(true);
    } finally {
      await plain.shutdown();
      plainApp.close();
    }
  });

  it('stores the policy revision again when the group that first named it was rolled back', async () => {
    const sqlite = getSqliteApp().db.$client;
    // A new revision (a flag's value is part of it), first named by a decision that cannot be recorded.
    await getSqliteApp().flags.setOverride('cron_scheduler', false, 'ada', 'maintenance');
    sqlite.exec(`CREATE TEMP TRIGGER fail_me BEFORE INSERT ON permission_denials WHEN NEW.tool_name = 'fail_me' BEGIN SELECT RAISE(ABORT, 'disk full'); END`);
    try {
      expect((await call('fail_me')).status).toBe(503);
    } finally {
      sqlite.exec('DROP TRIGGER fail_me');
    }
    const ok = (await (await call('deploy_serving')).json()) as { decision_id: string };
    const row = (await getSqliteApp().denials.query({ limit: 5 })).rows.find((r) => r.decisionId === ok.decision_id)!;
    expect(row.policyRevision).toMatch(/^rev_/);
    expect(await getSqliteApp().revisions.get(row.policyRevision!)).toMatchObject({ flags: { cron_scheduler: false } });
  });

  it('says so when the upstream is not answering (502), and still decides', async () => {
    const lonely = createFrontServer({ app: getSqliteApp(), upstream: { host: '127.0.0.1', port: 1 } });
    const url = `http://127.0.0.1:${await listen(lonely)}`;
    try {
      const r = await fetch(`${url}/approvals`);
      expect(r.status).toBe(502);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('UNAVAILABLE');
      const decided = await fetch(`${url}/api/v1/permissions/check`, { method: 'POST', headers: { authorization: `Bearer ${trainer}`, 'content-type': 'application/json' }, body });
      expect(decided.status).toBe(200);
    } finally {
      await new Promise((r) => lonely.close(r));
      lonely.closeAllConnections();
    }
  });
  it('takes the write lock only for a group that writes: allowed calls are answered while another process holds it', async () => {
    // Another process holds SQLite's write lock (as another listener worker, or the CLI, may) until told to let go.
    const holder = spawn(
      process.execPath,
      ['-e', `const d = new (require('better-sqlite3'))(process.argv[1]); d.exec('BEGIN IMMEDIATE'); console.log('locked'); process.stdin.once('data', () => { d.exec('COMMIT'); console.log('released'); d.close(); process.exit(0); });`, process.env.SWARM_DB!],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    const said: string[] = [];
    const locked = new Promise<void>((resolve) => holder.stdout.on('data', (c: Buffer) => (said.push(...c.toString().trim().split('\n')), said.includes('locked') && resolve())));
    const exited = new Promise((resolve) => holder.once('exit', resolve));
    // The server's own application in this process has timers that write (checkpoints, the approval sweeper): they
    // would wait for the lock on this one event loop. It is closed; this test is the last of the file.
    getSqliteApp().close();
    // A listener worker's application: no timers of its own that write (the primary checkpoints, indexes and signs).
    // Without the BFSI profile of the other tests, which records every decision (decision_log_all): allowed calls
    // write nothing.
    const workerApp = createApp({ dbPath: process.env.SWARM_DB!, checkpointsElsewhere: true, profile: '' });
    const worker = createFrontServer({ app: workerApp, upstream: { host: '127.0.0.1', port: 1 } });
    const workerBase = `http://127.0.0.1:${await listen(worker)}`;
    await call('train_model', workerBase); // its first decision stores the policy revision in force: a write, before the lock
    await locked;
    const before = await workerApp.denials.count();
    // An allowed call writes nothing: it is answered while the lock is held (were it waiting for the lock, it would
    // wait until the test's timeout).
    const allowed = (await (await call('train_model', workerBase)).json()) as { decision: string };
    expect(allowed.decision).toBe('ALLOW');
    expect(said).not.toContain('released');
    // A denial must be written before its answer: asked while the lock is held, it is answered once the lock is let
    // go, and recorded.
    const denying = call('deploy_serving', workerBase);
    holder.stdin.end('release\n');
    const denied = (await (await denying).json()) as { decision: string; decision_id: string };
    expect(denied.decision).toBe('DENY');
    expect(await workerApp.denials.count()).toBe(before + 1);
    expect((await workerApp.denials.query({ limit: 1 })).rows[0]!.decisionId).toBe(denied.decision_id);
    await exited;
    await worker.shutdown();
    workerApp.close();
  });

});
