/**
 * The decision listener: a node:http server on the product's port, in front of Next.js. The decision endpoints that
 * agents and gateways call in a loop are answered here, by the same route cores (authentication, the engine's HTTP
 * check, zod, the engine, the recorder) that Next.js runs for them; everything else (the console, the rest of the API)
 * is passed to the Next.js server on a loopback port, unchanged.
 *
 * Only calls that carry a bearer token take the direct path; a call with a session cookie (the console) goes through
 * Next.js, where the same-origin check lives. Answers are the same either way: the same code builds them.
 */
import { createServer, request as httpRequest, Agent, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { App } from '@/lib/app';
import { timingSafeEqual } from 'node:crypto';
import { Gauge } from 'prom-client';
import type { GroupCall } from '@/lib/decisions/group-commit';
import { BodyTooLarge, bodyText, errorAnswer, INTERNAL_ERROR, MAX_BODY_BYTES, requireRole, route, type ApiAnswer, type ApiRequest, type RouteCore } from '@/lib/http/route';
import { refuseMethod, refusePath, SECURITY_HEADERS } from '@/lib/http/unservable';
import { LISTENER_ONLY_ROUTES, ROUTES } from '@/lib/http/route-table';
import { CLIENT_ADDRESS_HEADER, CLIENT_ADDRESS_PROOF_HEADER, clientAddressProof, resolveClientAddress, type TrustedProxies } from '@/lib/http/client-address';
import { log, logRequest } from '@/lib/ops/log';
import { INTERNAL_METRICS_PATH, INTERNAL_SECRET_ENV, INTERNAL_SECRET_HEADER } from '@/lib/ops/internal';
import { mergedText, processMetrics, PROMETHEUS_CONTENT_TYPE, stateRegistry, type MetricsJson } from '@/lib/ops/metrics';
import { messageOf } from '@/lib/errors';

/** A route answered here: its core, and the largest body it reads (its route() spec's). */
interface DirectRoute {
  core: RouteCore;
  maxBodyBytes: number;
}

/**
 * The routes answered directly, POST only, bearer token only: the entries of the route table marked `decisionListener`
 * (the checks, the AuthZEN evaluations, and the finished reports agents send right after each call).
 */
export const DIRECT_ROUTES: ReadonlyMap<string, DirectRoute> = new Map(
  ROUTES.filter((entry) => entry.decisionListener).map((entry) => {
    const post = entry.methods.POST;
    if (!post) throw new Error(`The route table marks ${entry.path} for the decision listener, which answers only POST, and it has none.`);
    return [entry.path, { core: post.route.core, maxBodyBytes: post.route.spec.maxBodyBytes ?? MAX_BODY_BYTES }];
  }),
);

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);
/** Headers only the listener writes toward Next.js: a client's own copy is never passed on. */
const FROM_LISTENER_ONLY = new Set([CLIENT_ADDRESS_HEADER, CLIENT_ADDRESS_PROOF_HEADER]);

export interface FrontOptions {
  app: App;
  /** where Next.js listens (loopback) */
  upstream: { host: string; port: number };
  /** the secret of this start that the Next.js server's internal metrics route asks for (default: SWARM_INTERNAL_SECRET) */
  internalSecret?: string;
  /**
   * the registries of every listener process, this one's included (a worker asks its primary: lib/server/workers.ts);
   * undefined, or an answer of undefined: this process's registry alone
   */
  processMetrics?: () => Promise<MetricsJson[] | undefined>;
  /** the proxies whose forwarding headers are believed (default: the application's, SWARM_TRUSTED_PROXIES) */
  trustedProxies?: TrustedProxies;
}

/** The decision listener: a node:http server that can also shut down gracefully. */
export interface FrontServer extends Server {
  /**
   * Stop accepting, let the requests in flight finish (decisions queued for a group commit are decided, committed
   * and answered), then close the remaining connections; at most `timeoutMs` (default 10 s) before forcing them.
   */
  shutdown(timeoutMs?: number): Promise<void>;
}

/** Does the request carry the metrics token (SWARM_METRICS_TOKEN)? */
function hasMetricsToken(req: IncomingMessage, token: string | undefined): boolean {
  if (!token) return false;
  const m = /^Bearer\s+(\S+)$/i.exec(headerOf(req.headers, 'authorization') ?? '');
  if (!m) return false;
  const a = Buffer.from(m[1]!);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function headerOf(headers: IncomingHttpHeaders, name: string): string | null {
  const v = headers[name.toLowerCase()];
  return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
}

/** A body as read here: its text, or that it is larger than the route reads (the route then answers 413). */
type Body = { text: string; tooLarge: false } | { text: ''; tooLarge: true };
const TOO_LARGE: Body = { text: '', tooLarge: true };

/**
 * The body's text, read up to `limit` bytes. A body declared or found larger is not read on (the route answers 413 and
 * the connection is closed after it: see send): nothing is cut and decided, and nothing unbounded is read. (Decoding
 * never makes a text shorter than its bytes, so a body too large here is too large for the route on Next.js.)
 */
function readText(req: IncomingMessage, limit: number): Promise<Body> {
  return new Promise((resolve, reject) => {
    if (Number(req.headers['content-length']) > limit) return resolve(TOO_LARGE);
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        req.off('data', onData).off('end', onEnd).pause();
        resolve(TOO_LARGE);
        return;
      }
      chunks.push(c);
    };
    // Decoded as on Next.js (bodyText), so that a byte order mark is decided alike (docs/api.md, "Who answers").
    const onEnd = () => resolve({ text: bodyText(Buffer.concat(chunks, size)), tooLarge: false });
    req.on('data', onData).on('end', onEnd).on('error', reject);
  });
}

/**
 * A request as the route core sees it (a decision call: its path is the exact path of a decision route), its URL parsed
 * only if asked for. A class: its methods are shared, not closures made for every request.
 */
class ListenerRequest implements ApiRequest {
  readonly method: string;

  constructor(
    private readonly req: IncomingMessage,
    readonly path: string,
    private readonly body: Body,
    readonly clientAddress: string | undefined,
    private parsed?: URL,
  ) {
    this.method = req.method ?? 'GET';
  }

  get url(): URL {
    return (this.parsed ??= new URL(this.req.url ?? this.path, `http://${this.req.headers.host ?? 'localhost'}`));
  }

  header(name: string): string | null {
    return headerOf(this.req.headers, name);
  }

  text(): Promise<string> {
    return this.body.tooLarge ? Promise.reject(new BodyTooLarge()) : Promise.resolve(this.body.text);
  }

  toRequest(): Request {
    throw new Error('The decision listener serves only routes that need no web Request.');
  }
}

/**
 * Send an answer. When the request's body was not read to its end (it was too large), the connection is closed after
 * the answer: the rest of the body is never read, and a next request on the connection cannot be mistaken for it (a
 * client that stopped sending would otherwise wait for the keep-alive timeout).
 */
async function send(res: ServerResponse, answer: ApiAnswer): Promise<void> {
  const close = !res.req.complete;
  if (answer instanceof Response) {
    const bytes = Buffer.from(await answer.arrayBuffer());
    res.writeHead(answer.status, { ...SECURITY_HEADERS, ...Object.fromEntries(answer.headers), 'content-length': bytes.length, ...(close ? { connection: 'close' } : {}) });
    res.end(bytes);
    return;
  }
  const json = JSON.stringify(answer.body);
  res.writeHead(answer.status, [...headList(answer.headers), 'content-length', String(Buffer.byteLength(json)), ...(close ? ['connection', 'close'] : [])]);
  res.end(json);
}

/**
 * The headers of a JSON answer but its length, as a flat list [name, value, ...]: Node.js writes a list measurably
 * faster than an object (two listeners side by side: a tenth less CPU per answer with the same six headers). Kept per
 * headers object a route answers with (the routes answer most with one constant object).
 */
const headLists = new WeakMap<Record<string, string>, string[]>();
function headList(headers: Record<string, string>): string[] {
  let list = headLists.get(headers);
  if (!list) {
    list = Object.entries({ ...SECURITY_HEADERS, ...headers, 'content-type': 'application/json' }).flat();
    headLists.set(headers, list);
  }
  return list;
}

/**
 * The route core that answers this request here, if any: a POST with a bearer token to the exact path of a decision
 * route. The path is compared as sent (up to the query), without parsing the address: a path that only parsing would
 * make one of these (dot segments, escapes) is not one of them, and goes to Next.js like any other request.
 */
export function directCore(req: IncomingMessage): (DirectRoute & { path: string }) | undefined {
  if (req.method !== 'POST') return undefined;
  const raw = req.url ?? '';
  const q = raw.indexOf('?');
  const path = q < 0 ? raw : raw.slice(0, q);
  const route = DIRECT_ROUTES.get(path);
  if (!route || !/^Bearer\s/i.test(headerOf(req.headers, 'authorization') ?? '')) return undefined;
  return { ...route, path };
}


const UNRECORDED = errorAnswer(503, 'AUDIT_UNAVAILABLE', 'The request was refused because it could not be recorded in the audit trail. Try again; if it persists, the server needs attention.');

/**
 * A decision call, handed to the decision service (app.decisions.callGroups(): lib/decisions/group-commit.ts), which
 * decides it with the calls that come with it and says when its answer may leave: after the commit that holds what it
 * decided. A class: its methods are shared, not closures made for every request.
 */
class Pending implements GroupCall<ApiAnswer> {
  constructor(
    private readonly app: App,
    private readonly core: RouteCore,
    private readonly request: ApiRequest,
    private readonly res: ServerResponse,
  ) {}

  run(): Promise<ApiAnswer> {
    return this.core(this.app, this.request, {});
  }

  failure(error: unknown): ApiAnswer {
    console.error('The decision listener failed to answer', error);
    return INTERNAL_ERROR;
  }

  failed(answer: ApiAnswer): boolean {
    return !(answer instanceof Response) && answer.status >= 500;
  }

  settle(answer: ApiAnswer | undefined): void {
    send(this.res, answer ?? UNRECORDED).catch(() => this.res.destroy());
  }
}

/** Below the upstream's keep-alive timeout (5 s), so the listener never reuses a connection Next.js is closing. */
export const UPSTREAM_IDLE_MS = 4_000;

export function createFrontServer(options: FrontOptions): FrontServer {
  const { app, upstream } = options;
  // Idle connections to Next.js are dropped after 4 s, before its server closes them (Node's default keep-alive timeout
  // of 5 s, which `next start` keeps): a request sent on a connection the upstream is closing at that instant fails
  // with ECONNRESET, and a person saw "the console server is not answering" between two clicks. Requests in flight are
  // not cut by this timeout; only sockets left idle are.
  const agent = new Agent({ keepAlive: true, maxSockets: 128, timeout: UPSTREAM_IDLE_MS });
  const internalSecret = options.internalSecret ?? process.env[INTERNAL_SECRET_ENV];
  const addressProof = internalSecret ? clientAddressProof(internalSecret) : undefined;
  /** The client's address: the one rule of lib/http/client-address.ts, on this socket. */
  const trusted = options.trustedProxies ?? app.trustedProxies;
  const clientOf = (req: IncomingMessage): string | undefined => resolveClientAddress(req.socket.remoteAddress, headerOf(req.headers, 'x-forwarded-for'), trusted);

  /** The Next.js server's registry, or undefined when it does not answer (then only this process is reported). */
  const upstreamMetrics = (): Promise<MetricsJson | undefined> =>
    new Promise((resolve) => {
      if (!internalSecret) return resolve(undefined);
      const up = httpRequest(
        { host: upstream.host, port: upstream.port, method: 'GET', path: INTERNAL_METRICS_PATH, headers: { [INTERNAL_SECRET_HEADER]: internalSecret }, agent, timeout: 2_000 },
        (answer) => {
          const chunks: Buffer[] = [];
          answer.on('data', (c: Buffer) => chunks.push(c));
          answer.on('end', () => {
            try {
              resolve(answer.statusCode === 200 ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as MetricsJson) : undefined);
            } catch {
              resolve(undefined);
            }
          });
          answer.on('error', () => resolve(undefined));
        },
      );
      up.on('timeout', () => up.destroy());
      up.on('error', () => resolve(undefined));
      up.end();
    });

  /** GET /metrics: this process's registry, the Next.js server's, and the state read from the database, merged. */
  const metricsText = async (): Promise<string> => {
    const ownMetrics = async () => (await options.processMetrics?.()) ?? [(await processMetrics().registry.getMetricsAsJSON()) as MetricsJson];
    const [own, next] = await Promise.all([ownMetrics(), upstreamMetrics()]);
    const state = await stateRegistry(app);
    const up = new Gauge({ name: 'swarm_next_metrics_up', help: '1 when the Next.js server reported its metrics to this scrape.', registers: [state] });
    up.set(next ? 1 : 0);
    return mergedText([...own, ...(next ? [next] : []), (await state.getMetricsAsJSON()) as MetricsJson]);
  };
  const metricsCore = route({ role: requireRole(LISTENER_ONLY_ROUTES['/metrics']!.GET!) }, async () =>
    new Response(await metricsText(), { headers: { 'content-type': PROMETHEUS_CONTENT_TYPE, 'cache-control': 'no-store' } }),
  ).core;

  const serveMetrics = (req: IncomingMessage, res: ServerResponse, url: URL) => {
    const started = performance.now();
    const done = (answer: ApiAnswer) => send(res, answer).catch(() => res.destroy());
    if (hasMetricsToken(req, app.env.SWARM_METRICS_TOKEN)) {
      metricsText().then(
        (text) => {
          void done(new Response(text, { headers: { 'content-type': PROMETHEUS_CONTENT_TYPE, 'cache-control': 'no-store' } }));
          logRequest({ method: 'GET', route: '/metrics', status: 200, durationMs: performance.now() - started, principal: 'metrics-token', ip: clientOf(req) });
        },
        (error: unknown) => {
          log('error', 'metrics failed', { error: messageOf(error) });
          void done(INTERNAL_ERROR);
        },
      );
      return;
    }
    // Anyone else: an admin token or session, decided (and a refusal recorded) like any admin route.
    readText(req, MAX_BODY_BYTES).then(
      (body) => metricsCore(app, new ListenerRequest(req, url.pathname, body, clientOf(req), url), {}).then(done, () => done(INTERNAL_ERROR)),
      () => res.destroy(),
    );
  };

  const proxy = (req: IncomingMessage, res: ServerResponse) => {
    const headers: IncomingHttpHeaders = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(k) && !FROM_LISTENER_ONLY.has(k)) headers[k] = v;
    const peer = req.socket.remoteAddress;
    // As every proxy does: the peer appended to the chain (Next.js goes by the address below, never by the chain).
    const chain = headerOf(req.headers, 'x-forwarded-for');
    if (peer) headers['x-forwarded-for'] = chain ? `${chain}, ${peer}` : peer;
    // The host and scheme a client names are believed only from a trusted proxy, as its address is.
    const trustedPeer = peer !== undefined && trusted.has(peer);
    if (!trustedPeer || headers['x-forwarded-host'] === undefined) headers['x-forwarded-host'] = req.headers.host;
    if (!trustedPeer || headers['x-forwarded-proto'] === undefined) headers['x-forwarded-proto'] = 'http';
    // The client's address, resolved here where the socket is, and the proof Next.js checks before it believes it.
    const client = clientOf(req);
    if (client !== undefined && addressProof !== undefined) {
      headers[CLIENT_ADDRESS_HEADER] = client;
      headers[CLIENT_ADDRESS_PROOF_HEADER] = addressProof;
    }
    const up = httpRequest({ host: upstream.host, port: upstream.port, method: req.method, path: req.url, headers, agent }, (answer) => {
      const out: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
      // Answered before the whole body arrived (a 413 for a body over the route's limit, told by its length): the rest
      // is not passed on, and the connection is closed after the answer, as the listener does for its own routes. Left
      // open, a client that stopped sending the body would have its next request taken for the rest of it, and wait
      // for the keep-alive timeout.
      const unread = !req.complete;
      if (unread) out.connection = 'close';
      res.writeHead(answer.statusCode ?? 502, out);
      answer.pipe(res);
      if (unread) {
        res.once('finish', () => {
          req.unpipe(up);
          up.destroy();
        });
      }
    });
    up.on('error', (error) => {
      if (res.headersSent) {
        res.destroy(error);
        return;
      }
      const json = JSON.stringify({ error: { code: 'UNAVAILABLE', message: 'The console server is not answering yet; try again in a moment.' } });
      res.writeHead(502, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json), 'retry-after': '1' });
      res.end(json);
    });
    req.pipe(up);
  };

  let inFlight = 0;
  const server = createServer((req, res) => {
    inFlight++;
    res.once('close', () => inFlight--);
    // The same refusals as the Next.js server's own port (lib/http/unservable.ts).
    if (refuseMethod(req, res)) return;
    // A before_tool_call webhook or shell hook is waited for outside any transaction: such calls go through Next.js,
    // where each decision commits on its own, instead of holding this listener's group commit open.
    const direct = directCore(req);
    if (direct && !app.hooks.beforeMayWait()) {
      readText(req, direct.maxBodyBytes).then(
        (body) => commits.add(new Pending(app, direct.core, new ListenerRequest(req, direct.path, body, clientOf(req)), res)),
        () => res.destroy(),
      );
      return;
    }
    const url = refusePath(req, res);
    if (url === true) return;
    if (url.pathname === '/metrics' && (req.method === 'GET' || req.method === 'HEAD')) {
      serveMetrics(req, res, url);
      return;
    }
    if (url.pathname === '/internal' || url.pathname.startsWith('/internal/')) {
      // The Next.js server's internal routes are for this process only.
      res.writeHead(404, { ...SECURITY_HEADERS, 'content-type': 'text/plain' }).end('Not found');
      return;
    }
    proxy(req, res);
  });
  // Where the decision calls go: the decision service decides them (in groups, one commit each, on SQLite).
  const commits = app.decisions.callGroups<ApiAnswer>();
  server.keepAliveTimeout = 65_000;
  server.on('close', () => {
    agent.destroy();
    commits.close();
  });
  let shutting: Promise<void> | undefined;
  const shutdown = (timeoutMs = 10_000): Promise<void> => {
    shutting ??= new Promise<void>((resolve) => {
      const deadline = Date.now() + timeoutMs;
      server.close(() => resolve());
      const tick = () => {
        // Idle keep-alive connections go at once; busy ones when their answer has left.
        server.closeIdleConnections();
        if (inFlight === 0 || Date.now() >= deadline) {
          if (inFlight > 0) log('warn', 'shutdown: closing connections with requests still in flight', { in_flight: inFlight });
          server.closeAllConnections();
          return;
        }
        setTimeout(tick, 10);
      };
      tick();
    });
    return shutting;
  };
  return Object.assign(server, { shutdown });
}
