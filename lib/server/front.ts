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
import type { SwarmApp } from '@/lib/app';
import { ROUTE_CORE, type ApiAnswer, type ApiRequest, type RouteCore } from '@/lib/http/route';
import * as check from '@/app/api/v1/permissions/check/route';
import * as batch from '@/app/api/v1/permissions/check/batch/route';
import * as evaluation from '@/app/access/v1/evaluation/route';
import * as evaluations from '@/app/access/v1/evaluations/route';

/** The routes answered directly: POST only, bearer token only. */
export const DIRECT_ROUTES: ReadonlyMap<string, RouteCore> = new Map([
  ['/api/v1/permissions/check', check.POST[ROUTE_CORE]],
  ['/api/v1/permissions/check/batch', batch.POST[ROUTE_CORE]],
  ['/access/v1/evaluation', evaluation.POST[ROUTE_CORE]],
  ['/access/v1/evaluations', evaluations.POST[ROUTE_CORE]],
]);

/** The largest body read here before the route's own limit answers 413 (the batch routes take 4 MiB). */
const READ_LIMIT = 4 * 1024 * 1024;

/** The headers next.config.mjs sets on every answer, so a direct answer is indistinguishable. */
const SECURITY_HEADERS = { 'x-frame-options': 'DENY', 'x-content-type-options': 'nosniff', 'referrer-policy': 'same-origin' };

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

export interface FrontOptions {
  app: SwarmApp;
  /** where Next.js listens (loopback) */
  upstream: { host: string; port: number };
}

function headerOf(headers: IncomingHttpHeaders, name: string): string | null {
  const v = headers[name.toLowerCase()];
  return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
}

/** The body, up to the limit; beyond it the rest is drained and the text is cut (the route answers 413). */
function readText(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= READ_LIMIT + 1) chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function apiRequest(req: IncomingMessage, url: URL): ApiRequest {
  let text: Promise<string> | undefined;
  const body = () => (text ??= readText(req));
  return {
    method: req.method ?? 'GET',
    url,
    // As for proxied requests: what the client said, else the socket's address.
    header: (name) => headerOf(req.headers, name) ?? (name.toLowerCase() === 'x-forwarded-for' ? (req.socket.remoteAddress ?? null) : null),
    text: body,
    toRequest: () => {
      throw new Error('The decision listener serves only routes that need no web Request.');
    },
  };
}

async function send(res: ServerResponse, answer: ApiAnswer): Promise<void> {
  if (answer instanceof Response) {
    const bytes = Buffer.from(await answer.arrayBuffer());
    res.writeHead(answer.status, { ...SECURITY_HEADERS, ...Object.fromEntries(answer.headers), 'content-length': bytes.length });
    res.end(bytes);
    return;
  }
  const json = JSON.stringify(answer.body);
  res.writeHead(answer.status, { ...SECURITY_HEADERS, ...answer.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
  res.end(json);
}

/** Is this request answered here? */
export function isDirect(req: IncomingMessage, pathname: string): boolean {
  return req.method === 'POST' && DIRECT_ROUTES.has(pathname) && /^Bearer\s/i.test(headerOf(req.headers, 'authorization') ?? '');
}

export function createFrontServer(options: FrontOptions): Server {
  const { app, upstream } = options;
  const agent = new Agent({ keepAlive: true, maxSockets: 128 });

  const proxy = (req: IncomingMessage, res: ServerResponse) => {
    const headers: IncomingHttpHeaders = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(k)) headers[k] = v;
    // What the client said, else the socket's address: the routes read the first x-forwarded-for entry.
    headers['x-forwarded-for'] ??= req.socket.remoteAddress ?? undefined;
    headers['x-forwarded-host'] ??= req.headers.host;
    headers['x-forwarded-proto'] ??= 'http';
    const up = httpRequest({ host: upstream.host, port: upstream.port, method: req.method, path: req.url, headers, agent }, (answer) => {
      const out: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
      res.writeHead(answer.statusCode ?? 502, out);
      answer.pipe(res);
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

  const server = createServer((req, res) => {
    const host = req.headers.host ?? 'localhost';
    let url: URL;
    try {
      url = new URL(req.url ?? '/', `http://${host}`);
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (!isDirect(req, url.pathname)) {
      proxy(req, res);
      return;
    }
    const core = DIRECT_ROUTES.get(url.pathname)!;
    core(app, apiRequest(req, url), {})
      .then((answer) => send(res, answer))
      .catch((error: unknown) => {
        console.error('The decision listener failed to answer', error);
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 'INTERNAL', message: 'Something went wrong on the server; it has been logged.' } }));
      });
  });
  server.keepAliveTimeout = 65_000;
  server.on('close', () => agent.destroy());
  return server;
}
