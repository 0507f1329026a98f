/**
 * Every input a clear answer, through the decision listener and through the route handlers Next.js runs alike: the
 * listener (lib/server/front.ts) over real sockets, in front of the route handlers served as Next.js serves them
 * (route-server.ts); and the same handlers called in process. Shared by tests/inputs.test.ts (SQLite) and
 * tests/pg-inputs.test.ts (PostgreSQL): the environment names the database before this module is imported.
 */
import { connect } from 'node:net';
import { request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '@/lib/app';
import type { FrontServer } from '@/lib/server/front';
import { callRoute, type RouteHandler } from './in-process-api';
import { createRouteServer } from './route-server';

const { createFrontServer } = await import('@/lib/server/front');
const { CLIENT_ADDRESS_HEADER, CLIENT_ADDRESS_PROOF_HEADER, parseTrustedProxies } = await import('@/lib/http/client-address');
const { refreshLogLevel, setLogSink } = await import('@/lib/ops/log');
const { ROUTES } = await import('@/lib/http/route-table');
const check = await import('@/app/api/v1/permissions/check/route');
const batch = await import('@/app/api/v1/permissions/check/batch/route');
const flag = await import('@/app/api/v1/flags/[name]/route');
const evaluation = await import('@/app/access/v1/evaluation/route');

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

export interface Sent {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  /** the body: one string (with its content-length), or parts sent chunked */
  body?: string | Buffer | (string | Buffer)[];
}

const listen = (s: Server) => new Promise<number>((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)));

/** One request on its own connection, the path exactly as written; the answer, even if the server stops reading. */
export function send(port: number, r: Sent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const parts = r.body === undefined ? [] : Array.isArray(r.body) ? r.body : [r.body];
    const headers: Record<string, string | number> = { ...r.headers };
    if (!Array.isArray(r.body) && r.body !== undefined) headers['content-length'] = Buffer.byteLength(r.body);
    let answered = false;
    const req = httpRequest({ host: '127.0.0.1', port, method: r.method ?? 'GET', path: r.path, headers, agent: false }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    // A server that answers before the body is sent closes the connection: the rest cannot be written, as expected.
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    const write = (i: number): void => {
      if (i === parts.length) return void req.end();
      if (req.write(parts[i]!)) return write(i + 1);
      req.once('drain', () => write(i + 1));
    };
    write(0);
  });
}

/**
 * The suite. `app` is the application the listener decides with (the route handlers open the server's own from the
 * environment); `admin` an admin token.
 */
export function inputsSuite(name: string, app: () => Promise<App>, admin: () => string): void {
  let upstream: Server;
  let front: FrontServer;
  let port = 0;
  let viewer = '';
  let agent = '';

  beforeAll(async () => {
    const a = await app();
    if (!(await a.auth.findUser('vera'))) await a.auth.createUser('vera', 'viewer', 'viewer-password');
    viewer = await a.auth.createToken({ username: 'vera' }, 'inputs');
    agent = await a.auth.createToken({ agent: 'trainer' }, 'inputs');
    upstream = createRouteServer();
    const upstreamPort = await listen(upstream);
    front = createFrontServer({ app: a, upstream: { host: '127.0.0.1', port: upstreamPort } });
    port = await listen(front);
  }, 60_000);
  let trustingPort = 0;
  let trusting: FrontServer;
  beforeAll(async () => {
    // The same server behind a proxy at 10.x that the configuration trusts (127.0.0.1 stands for the proxy's socket).
    trusting = createFrontServer({ app: await app(), upstream: { host: '127.0.0.1', port: (upstream.address() as AddressInfo).port }, trustedProxies: parseTrustedProxies('127.0.0.1/32, 10.0.0.0/8') });
    trustingPort = await listen(trusting);
  });
  afterAll(async () => {
    await trusting.shutdown(2_000);
    await front.shutdown(2_000);
    await new Promise((r) => upstream.close(r));
    upstream.closeAllConnections();
  });

  const json = (a: Answer) => JSON.parse(a.text) as { error?: { code: string; message: string }; decision?: unknown; rule_source?: string; decision_id?: string };
  const viaNext = (handler: RouteHandler, url: string, init: Parameters<typeof callRoute>[2]) => callRoute(handler, url, init);

  describe(`every input a clear answer (${name})`, () => {
    it('answers a malformed session cookie 401 on every guarded route, as no session, and the public routes as usual', async () => {
      const cookie = 'swarm_session=%E0%A4%A';
      // every method of every route that declares a role above anonymous (the public ones are listed in tests/routes.test.ts)
      const guarded = ROUTES.flatMap((r) =>
        Object.entries(r.methods)
          .filter(([, m]) => m.route.spec.role.role !== 'anonymous')
          .map(([method]) => ({ method, path: r.path.replace('{id}', 'apr_AAAAAAAAAAAAAAAA').replace('{name}', 'batch_runner') })),
      );
      expect(guarded.length).toBeGreaterThan(20);
      for (const c of guarded) {
        const body = c.method === 'GET' ? undefined : '{}';
        const listener = await send(port, { method: c.method, path: c.path, headers: { cookie, 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' }, body });
        expect({ ...c, status: listener.status }).toEqual({ ...c, status: 401 });
        expect(json(listener).error?.message).toBe('The token or session is not valid (expired, revoked or unknown).');
      }
      const viaRoute = await viaNext(flag.GET as RouteHandler, '/api/v1/flags/batch_runner', { headers: { cookie }, params: { name: 'batch_runner' } });
      expect(viaRoute.status).toBe(401);
      expect((await send(port, { path: '/api/v1/health', headers: { cookie } })).status).toBe(200);
    });

    it('answers a path whose escapes do not decode 400, on the listener and in the route alike', async () => {
      for (const path of ['/api/v1/flags/%ZZ', '/api/v1/flags/%E0%A4%A', '/api/v1/permissions/denials/%', '/denials/%zz']) {
        const listener = await send(port, { path, headers: { authorization: `Bearer ${admin()}` } });
        expect({ path, status: listener.status, code: json(listener).error?.code }).toEqual({ path, status: 400, code: 'BAD_REQUEST' });
      }
      const viaRoute = await viaNext(flag.GET as RouteHandler, '/api/v1/flags/%ZZ', { token: admin(), params: { name: '%ZZ' } });
      expect(viaRoute.status).toBe(400);
      expect(((await viaRoute.json()) as { error: { message: string } }).error.message).toBe(json(await send(port, { path: '/api/v1/flags/%ZZ', headers: { authorization: `Bearer ${admin()}` } })).error?.message);
    });

    it('answers TRACE, CONNECT and other methods it does not serve 405 with Allow', async () => {
      const flags = await send(port, { method: 'TRACE', path: '/api/v1/flags/batch_runner', headers: { authorization: `Bearer ${admin()}` } });
      expect(flags.status).toBe(405);
      expect(flags.headers.allow).toBe('GET, PUT, DELETE, HEAD, OPTIONS');
      expect(json(flags).error?.code).toBe('METHOD_NOT_ALLOWED');
      const page = await send(port, { method: 'TRACE', path: '/denials' });
      expect([page.status, page.headers.allow]).toEqual([405, 'GET, HEAD, POST']);
      expect((await send(port, { method: 'PROPFIND', path: '/api/v1/permissions/check' })).headers.allow).toBe('POST, OPTIONS');
    });

    it('takes a body that starts with a UTF-8 byte order mark as JSON.parse-compatible parsers do, alike on both', async () => {
      const body = `\uFEFF${JSON.stringify({ agent: 'trainer', tool: 'train_model', arguments: { dataset_id: 'ds-1', algorithm: 'xgb' } })}`;
      const listener = await send(port, { method: 'POST', path: '/api/v1/permissions/check', headers: { authorization: `Bearer ${agent}`, 'content-type': 'application/json' }, body });
      const next = await viaNext(check.POST as RouteHandler, '/api/v1/permissions/check', { method: 'POST', token: agent, body });
      expect(listener.status).toBe(200);
      expect(next.status).toBe(200);
      const a = json(listener);
      const b = (await next.json()) as typeof a;
      expect({ ...a, decision_id: null }).toEqual({ ...b, decision_id: null });
      expect(a.decision).toBe('ALLOW');
      // Two marks: the first is dropped, the second is not JSON, on both (Node.js's own text() would drop both).
      const twice = `\uFEFF${body}`;
      const l2 = await send(port, { method: 'POST', path: '/api/v1/permissions/check', headers: { authorization: `Bearer ${agent}`, 'content-type': 'application/json' }, body: twice });
      const n2 = await viaNext(check.POST as RouteHandler, '/api/v1/permissions/check', { method: 'POST', token: agent, body: twice });
      expect([l2.status, n2.status]).toEqual([400, 400]);
    });

    it('answers a chunked body over the limit 413, never cut and decided, and closes the connection it did not read', async () => {
      const checks = JSON.stringify({ checks: [{ agent: 'trainer', tool: 'train_model', arguments: { dataset_id: 'ds-1', algorithm: 'xgb' } }] });
      // Valid JSON in the first 4 MiB, then white space: cut at 4 MiB, it would parse and be decided.
      const pad = Buffer.alloc(64 * 1024, 0x20);
      const parts = [checks, ...Array.from({ length: 80 }, () => pad)];
      const listener = await send(port, { method: 'POST', path: '/api/v1/permissions/check/batch', headers: { authorization: `Bearer ${agent}`, 'content-type': 'application/json' }, body: parts });
      expect(listener.status).toBe(413);
      expect(listener.headers.connection).toBe('close');
      const stream = new ReadableStream<Uint8Array>({
        start(c) {
          for (const p of parts) c.enqueue(typeof p === 'string' ? new TextEncoder().encode(p) : new Uint8Array(p));
          c.close();
        },
      });
      const next = await viaNext(batch.POST as RouteHandler, '/api/v1/permissions/check/batch', { method: 'POST', token: agent, body: stream, duplex: 'half' } as Parameters<typeof callRoute>[2]);
      expect(next.status).toBe(413);
      expect(json(listener).error).toEqual(((await next.json()) as { error: unknown }).error);
      // The single check takes 64 KiB: 100 KiB chunked is 413 too, with the same message on both.
      const small = [JSON.stringify({ agent: 'trainer', tool: 'train_model', arguments: {} }), Buffer.alloc(100 * 1024, 0x20)];
      const l2 = await send(port, { method: 'POST', path: '/api/v1/permissions/check', headers: { authorization: `Bearer ${agent}`, 'content-type': 'application/json' }, body: small });
      expect([l2.status, json(l2).error?.message]).toEqual([413, 'The body is larger than 65536 bytes.']);
    });

    it('answers a body declared larger than the route reads at once and closes the connection, directly or proxied', async () => {
      for (const [path, method, token] of [
        ['/api/v1/permissions/check', 'POST', agent],
        ['/api/v1/flags/batch_runner', 'PUT', admin()],
      ] as const) {
        // Headers and the first byte of a 10 MB body, then nothing: the client waits for the answer before sending more.
        const socket = connect(port, '127.0.0.1');
        let received = '';
        socket.on('data', (c: Buffer) => (received += c.toString('latin1')));
        const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
        socket.write(`${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n{`);
        // The server closes the connection after its answer; a second request could only be taken for the body.
        await Promise.race([closed, new Promise((_, reject) => setTimeout(() => reject(new Error(`${method} ${path}: the connection stayed open: ${received.slice(0, 200)}`)), 5_000))]);
        expect(received).toMatch(/^HTTP\/1\.1 413 /);
        expect(received.toLowerCase()).toContain('connection: close');
        // A new connection is answered at once.
        expect((await send(port, { path: '/api/v1/health' })).status).toBe(200);
      }
    });

    it('evaluates an AuthZEN http path as the router routes it: a spelling of a route gets its role', async () => {
      const evaluate = (path: string, method = 'PUT') => ({ subject: { type: 'user', id: 'vera' }, action: { name: method }, resource: { type: 'http', id: path } });
      const plain = evaluate('/api/v1/flags/batch_runner');
      const viaListener = (body: unknown) => send(port, { method: 'POST', path: '/access/v1/evaluation', headers: { authorization: `Bearer ${viewer}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const reference = JSON.parse((await viaListener(plain)).text) as { decision: boolean; context: { rule_source: string } };
      expect(reference).toMatchObject({ decision: false, context: { rule_source: 'rbac:admin' } });
      for (const path of ['/api/v1/./flags/batch_runner', '/API/V1/FLAGS/batch_runner', '/api//v1/flags/batch_runner/', '/api/v1/%66lags/batch_runner', '/api/v1/x/../flags/batch_runner', '/api/v1/%2e/flags/batch_runner', '/api\\v1\\flags\\batch_runner']) {
        const listener = await viaListener(evaluate(path));
        const next = await viaNext(evaluation.POST as RouteHandler, '/access/v1/evaluation', { method: 'POST', token: viewer, body: JSON.stringify(evaluate(path)) });
        for (const a of [JSON.parse(listener.text), await next.json()] as { decision: boolean; context: { rule_source: string } }[]) {
          expect({ path, decision: a.decision, rule: a.context.rule_source }).toEqual({ path, decision: false, rule: 'rbac:admin' });
        }
      }
      // HEAD is answered by GET's handler: it asks GET's role (auditor for the denials).
      const head = JSON.parse((await viaListener(evaluate('/api/v1/permissions/denials', 'HEAD'))).text) as { decision: boolean; context: { rule_source: string } };
      expect(head).toMatchObject({ decision: false, context: { rule_source: 'rbac:auditor' } });
      const malformed = await viaListener(evaluate('/api/v1/flags/%ZZ'));
      expect(malformed.status).toBe(400);
    });
  });

  describe(`client addresses (${name})`, () => {
    const login = (at: number, username: string, headers: Record<string, string>) =>
      send(at, { method: 'POST', path: '/api/v1/auth/login', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ username, password: 'not-the-password' }) });
    const allowedCheck = (at: number, headers: Record<string, string>) =>
      send(at, {
        method: 'POST',
        path: '/api/v1/permissions/check',
        headers: { authorization: `Bearer ${agent}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ agent: 'trainer', tool: 'train_model', arguments: { dataset_id: 'ds-1', algorithm: 'xgb' } }),
      });
    /** The address of the newest failed sign-in, and of the allowed decision `id` (the BFSI profile logs those). */
    const failedSignInIp = async () => (await (await app()).securityEvents.ofType('auth.login.failed', 1))[0]?.ip;
    const decisionIp = async (id: string | undefined) => (await (await app()).securityEvents.list({ decisionId: id })).rows[0]?.ip;

    it('is the socket’s by default, whatever X-Forwarded-For or a forged proof say: in the trail and the log, on both transports', async () => {
      const lines: string[] = [];
      const restore = setLogSink((line) => lines.push(line));
      const level = process.env.SWARM_LOG_LEVEL;
      process.env.SWARM_LOG_LEVEL = 'info';
      refreshLogLevel();
      try {
        const invented = { 'x-forwarded-for': '203.0.113.9', [CLIENT_ADDRESS_HEADER]: '198.51.100.66', [CLIENT_ADDRESS_PROOF_HEADER]: 'forged' };
        expect((await login(port, 'vera', invented)).status).toBe(401);
        expect(await failedSignInIp()).toBe('127.0.0.1');
        const decided = json(await allowedCheck(port, invented));
        expect(decided.decision).toBe('ALLOW');
        expect(await decisionIp(decided.decision_id)).toBe('127.0.0.1');
        const line = lines.map((l) => JSON.parse(l) as { route?: string; ip?: string; decision_id?: string }).find((l) => l.decision_id === decided.decision_id);
        expect(line).toMatchObject({ route: '/api/v1/permissions/check', ip: '127.0.0.1' });
      } finally {
        if (level === undefined) delete process.env.SWARM_LOG_LEVEL;
        else process.env.SWARM_LOG_LEVEL = level;
        refreshLogLevel();
        restore();
      }
      // Next.js on its own believes no header: an address it cannot prove is no address.
      const direct = await callRoute(check.POST as RouteHandler, '/api/v1/permissions/check', {
        method: 'POST',
        token: agent,
        headers: { 'x-forwarded-for': '203.0.113.9', [CLIENT_ADDRESS_HEADER]: '198.51.100.66', [CLIENT_ADDRESS_PROOF_HEADER]: 'forged' },
        body: JSON.stringify({ agent: 'trainer', tool: 'train_model', arguments: { dataset_id: 'ds-1', algorithm: 'xgb' } }),
      });
      expect(await decisionIp(((await direct.json()) as { decision_id: string }).decision_id)).toBeNull();
    });

    it('walks X-Forwarded-For from the right past trusted proxies, alike for the listener’s answers and Next.js’s', async () => {
      const chain = { 'x-forwarded-for': '198.51.100.1, 203.0.113.5, 10.1.1.1' };
      expect((await login(trustingPort, 'vera', chain)).status).toBe(401);
      expect(await failedSignInIp()).toBe('203.0.113.5');
      expect(await decisionIp(json(await allowedCheck(trustingPort, chain)).decision_id)).toBe('203.0.113.5');
      // What a trusted proxy says of the host and scheme is believed; from anyone else it is not.
      const forwarded = { 'x-forwarded-host': 'pdp.example', 'x-forwarded-proto': 'https' };
      const trusted = JSON.parse((await send(trustingPort, { path: '/.well-known/authzen-configuration', headers: forwarded })).text) as { policy_decision_point: string };
      const untrusted = JSON.parse((await send(port, { path: '/.well-known/authzen-configuration', headers: forwarded })).text) as { policy_decision_point: string };
      expect(trusted.policy_decision_point).toBe('https://pdp.example');
      expect(untrusted.policy_decision_point).toBe(`http://127.0.0.1:${port}`);
    });

    it('keeps password spraying with a new X-Forwarded-For each attempt throttled by the one real address', async () => {
      const took: number[] = [];
      for (let i = 0; i < 6; i++) {
        const started = performance.now();
        const r = await login(port, `sprayed${i}`, { 'x-forwarded-for': `203.0.113.${100 + i}` });
        took.push(performance.now() - started);
        expect(r.status).toBe(401);
        expect(await failedSignInIp()).toBe('127.0.0.1');
      }
      // Each user name is new, so only the address slows the spray down: from the fourth failure from it on.
      expect(took.at(-1)).toBeGreaterThanOrEqual(250);
    });
  });
}
