/**
 * The product's route handlers served over node:http, as the Next.js server serves them (without a build): a request
 * is matched with the route table, turned into a web Request (its body streamed), given to the route's handler with
 * its params, and the Response is written back. What Next.js adds on its way is added here too: x-forwarded-for when
 * the client sent none, and a 500 when it cannot build the Request (TRACE, CONNECT) or decode a param.
 *
 * Behind the decision listener (lib/server/front.ts) this is the whole server but for Next.js's router and pages:
 * tests send one input through both and compare the answers.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { nextHandler } from '@/lib/http/next-handlers';
import { matchRoute } from '@/lib/http/route-match';
import type { HttpMethod } from '@/lib/http/route-table';

function requestOf(req: IncomingMessage): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined) continue;
    for (const value of Array.isArray(v) ? v : [v]) headers.append(k, value);
  }
  // As Next.js's server does (base-server.ts): the socket's address when no proxy named one.
  if (!headers.has('x-forwarded-for') && req.socket.remoteAddress) headers.set('x-forwarded-for', req.socket.remoteAddress);
  const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
  const bodyless = req.method === 'GET' || req.method === 'HEAD';
  return new Request(url, {
    method: req.method,
    headers,
    body: bodyless ? undefined : (Readable.toWeb(req) as ReadableStream<Uint8Array>),
    duplex: 'half',
  } as RequestInit);
}

async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
  // First, as Next.js does: a method the Fetch standard forbids (TRACE, CONNECT) throws here.
  const request = requestOf(req);
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  const match = matchRoute(path);
  const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
  // What the entry's adapter in app/ exports for the method (tests/openapi.test.ts holds the adapters to the table).
  const served = match?.entry.methods[method as HttpMethod];
  if (!match || !served) {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
    return;
  }
  // Next.js decodes each dynamic segment for the params; a segment that does not decode throws (answered 500 below).
  const segments = match.entry.path.split('/').filter(Boolean);
  const given = path.split('/').filter(Boolean);
  const params: Record<string, string> = {};
  segments.forEach((s, i) => {
    if (s.startsWith('{')) params[s.slice(1, -1)] = decodeURIComponent(given[i]!);
  });
  const response = await nextHandler(served.route)(request, { params: Promise.resolve(params) });
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, key) => {
    if (key !== 'set-cookie') headers[key] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  // A stream (the MCP endpoint's server-sent events) is written as it comes, as Next.js does; anything else at once.
  if (headers['content-type'] === 'text/event-stream' && response.body && req.method !== 'HEAD') {
    res.writeHead(response.status, headers);
    res.flushHeaders();
    const body = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
    res.on('close', () => body.destroy());
    body.pipe(res);
    return;
  }
  const bytes = Buffer.from(await response.arrayBuffer());
  res.writeHead(response.status, { ...headers, 'content-length': bytes.length });
  res.end(req.method === 'HEAD' ? undefined : bytes);
}

/** A server of the route handlers; listen on it yourself. */
export function createRouteServer(): Server {
  return createServer((req, res) => {
    answer(req, res).catch((error: unknown) => {
      // Next.js's answer to what it cannot handle at all.
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`Internal Server Error: ${error instanceof Error ? error.message : String(error)}`);
    });
  });
}
