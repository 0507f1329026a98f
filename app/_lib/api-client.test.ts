/**
 * The console's API client against a real HTTP server (node:http on a free port): the answer parsed with its schema,
 * and every way a request can fail turned into the one error shape (status, code, message, the server's issues).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApiError, apiDelete, apiGet, apiPost, errorSentence, NOT_REACHED, NOT_UNDERSTOOD, SESSION_ENDED } from './api-client';

const seen: { method: string; url: string; headers: Record<string, string | string[] | undefined>; body: string }[] = [];
let server: Server;
let base = '';

/** Each path answers one way; the request is kept for the tests to look at. */
function answer(path: string): { status: number; body: string; type?: string } {
  if (path === '/ok') return { status: 200, body: JSON.stringify({ n: 1, extra: 'dropped' }) };
  if (path === '/echo') return { status: 200, body: JSON.stringify({ n: 2 }) };
  if (path === '/invalid') {
    const issues = [{ in: 'query', path: 'limit', message: 'Too small: expected number to be >=1', code: 'too_small' }];
    return { status: 400, body: JSON.stringify({ error: { code: 'INVALID_REQUEST', message: 'The request is not valid.', issues } }) };
  }
  if (path === '/signed-out') return { status: 401, body: JSON.stringify({ error: { code: 'UNAUTHENTICATED', message: 'Sign in first.' } }) };
  if (path === '/html') return { status: 502, body: '<html>Bad gateway</html>', type: 'text/html' };
  return { status: 200, body: JSON.stringify({ n: 'not a number' }) };
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const a = answer(req.url ?? '');
      res.writeHead(a.status, { 'content-type': a.type ?? 'application/json' }).end(a.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const n = z.object({ n: z.number() });
const failure = (p: Promise<unknown>) => p.then(() => expect.fail('expected an ApiError'), (e: unknown) => e as ApiError);

describe('the console API client', () => {
  it('parses the answer with its schema, and asks for JSON without a cache', async () => {
    expect(await apiGet(`${base}/ok`, n)).toEqual({ n: 1 });
    const req = seen.at(-1)!;
    expect(req.method).toBe('GET');
    expect(req.headers.accept).toBe('application/json');
    expect(req.headers['x-swarm-background']).toBeUndefined();
  });

  it('sends a body as JSON, and marks a background request', async () => {
    await apiPost(`${base}/echo`, { reason: 'r' }, n, { background: true });
    expect(seen.at(-1)).toMatchObject({ method: 'POST', body: '{"reason":"r"}', headers: { 'content-type': 'application/json', 'x-swarm-background': '1' } });
    await apiDelete(`${base}/echo`, { reason: 'gone' }, n);
    expect(seen.at(-1)).toMatchObject({ method: 'DELETE', body: '{"reason":"gone"}' });
  });

  it("keeps the server's code, message and zod issues, and says them in one sentence", async () => {
    const e = await failure(apiGet(`${base}/invalid`, n));
    expect(e).toBeInstanceOf(ApiError);
    expect(e).toMatchObject({ status: 400, code: 'INVALID_REQUEST', message: 'The request is not valid.' });
    expect(e.issues).toEqual([{ in: 'query', path: 'limit', message: 'Too small: expected number to be >=1', code: 'too_small' }]);
    expect(e.detail).toBe('The request is not valid. (limit: Too small: expected number to be >=1)');
    expect(errorSentence(e)).toBe(e.detail);
  });

  it('says an ended session as such', async () => {
    const e = await failure(apiGet(`${base}/signed-out`, n));
    expect(e).toMatchObject({ status: 401, code: 'UNAUTHENTICATED', message: 'Sign in first.' });
    expect(errorSentence(e)).toBe(SESSION_ENDED);
  });

  it('turns an answer that is not the API (a proxy page) and one of the wrong shape into clear errors', async () => {
    expect(await failure(apiGet(`${base}/html`, n))).toMatchObject({ status: 502, code: 'HTTP_502', message: 'The server answered 502.' });
    expect(await failure(apiGet(`${base}/wrong-shape`, n))).toMatchObject({ status: 200, code: 'UNREADABLE_ANSWER', message: NOT_UNDERSTOOD });
  });

  it('says a server that cannot be reached, and passes an abort on as it is', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(await failure(apiGet(`http://127.0.0.1:${port}/ok`, n))).toMatchObject({ status: 0, code: 'UNREACHABLE', message: NOT_REACHED });

    const controller = new AbortController();
    controller.abort();
    const aborted = await apiGet(`${base}/ok`, n, { signal: controller.signal }).catch((e: unknown) => e);
    expect(aborted).not.toBeInstanceOf(ApiError);
    expect((aborted as Error).name).toBe('AbortError');
  });
});
