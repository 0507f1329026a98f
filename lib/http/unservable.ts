/**
 * What every port of the product refuses before a route sees it, in one place so that the decision listener
 * (lib/server/front.ts, the public port) and the Next.js server behind it (lib/server/next-server.ts, on loopback)
 * give the same answer: a method the product does not serve is 405 with an Allow header, and a path that cannot be
 * decoded is 400. Next.js itself cannot build a web Request for TRACE or CONNECT, nor decode `%ZZ` in a dynamic
 * segment, and answered both 500.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isWellEscaped, MALFORMED_PATH } from './route-path';

/** The methods served at all; any other (TRACE, CONNECT, PROPFIND…) is answered 405. */
export const SERVED_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The headers next.config.mjs sets on every answer, so that an answer made here is indistinguishable. */
export const SECURITY_HEADERS = { 'x-frame-options': 'DENY', 'x-content-type-options': 'nosniff', 'referrer-policy': 'same-origin' } as const;

/** A JSON error answer written straight to a Node.js response. */
export function sendError(res: ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
  const json = JSON.stringify({ error: { code, message } });
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'application/json', 'cache-control': 'no-store', ...headers, 'content-length': Buffer.byteLength(json) });
  res.end(json);
}

/** The path of a request line, its query cut off. */
const pathOf = (req: IncomingMessage): string => (req.url ?? '/').split('?')[0] ?? '/';

/**
 * Answers 405 to a method the product does not serve, with the methods the path takes (from the route table, loaded
 * only when one is needed: the Next.js server's process has no other use for it). True when it answered.
 */
export function refuseMethod(req: IncomingMessage, res: ServerResponse): boolean {
  if (SERVED_METHODS.has(req.method ?? '')) return false;
  const message = `${req.method ?? 'This method'} is not served; Allow lists the methods this path takes.`;
  import('./route-match').then(
    ({ allowedMethods }) => sendError(res, 405, 'METHOD_NOT_ALLOWED', message, { allow: allowedMethods(pathOf(req)).join(', ') }),
    () => sendError(res, 405, 'METHOD_NOT_ALLOWED', message),
  );
  return true;
}

/** Answers 400 to a request line that is not a URL, or a path that cannot be decoded. True when it answered. */
export function refusePath(req: IncomingMessage, res: ServerResponse): URL | true {
  let url: URL;
  try {
    url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
  } catch {
    sendError(res, 400, 'BAD_REQUEST', 'The request line does not hold a valid URL.');
    return true;
  }
  if (!isWellEscaped(url.pathname)) {
    // The routes answer this 400 too (lib/http/route.ts): Next.js never meets a path it cannot decode.
    sendError(res, 400, 'BAD_REQUEST', MALFORMED_PATH);
    return true;
  }
  return url;
}
