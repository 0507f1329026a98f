/**
 * The decision listener's connections to Next.js: an idle one is closed by the listener (after UPSTREAM_IDLE_MS), before
 * the upstream's own keep-alive timeout could close it under a request. Reusing a connection the upstream is closing
 * at that instant fails with ECONNRESET, which a person saw as "the console server is not answering" between clicks.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTempServerEnv } from './support/in-process-api';

const server = useTempServerEnv('front-upstream-idle', { policy: 'empty' });
const { getSqliteApp } = await import('@/lib/app');
const { createFrontServer, UPSTREAM_IDLE_MS } = await import('@/lib/server/front');

let front: Server;
let upstream: Server;
let base = '';
const sockets: { socket: Socket; opened: number; closed?: number }[] = [];
const listen = (s: Server) => new Promise<number>((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)));

beforeAll(async () => {
  upstream = createServer((_, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('from next'));
  // An upstream that would keep an idle connection a whole minute: any close within seconds is the listener's.
  upstream.keepAliveTimeout = 60_000;
  upstream.on('connection', (socket: Socket) => {
    const entry: { socket: Socket; opened: number; closed?: number } = { socket, opened: Date.now() };
    sockets.push(entry);
    socket.on('close', () => (entry.closed = Date.now()));
  });
  front = createFrontServer({ app: getSqliteApp(), upstream: { host: '127.0.0.1', port: await listen(upstream) } });
  base = `http://127.0.0.1:${await listen(front)}`;
});
afterAll(async () => {
  await new Promise((r) => front.close(r));
  front.closeAllConnections();
  upstream.closeAllConnections();
  await new Promise((r) => upstream.close(r));
  await getSqliteApp().close();
  server.remove();
});

describe('the listener in front of Next.js', () => {
  it('closes an idle upstream connection itself, before the upstream would, and opens a fresh one for the next request', async () => {
    expect(UPSTREAM_IDLE_MS).toBeLessThan(5_000); // Node's default keep-alive timeout, which `next start` keeps
    const first = await fetch(`${base}/denials`);
    expect(await first.text()).toBe('from next');
    expect(sockets).toHaveLength(1);
    // Wait for the event: the listener closes the idle connection.
    await new Promise<void>((resolve) => {
      const s = sockets[0]!;
      if (s.socket.closed) return resolve();
      s.socket.once('close', () => resolve());
    });
    const idle = sockets[0]!.closed! - sockets[0]!.opened;
    expect(idle).toBeGreaterThanOrEqual(UPSTREAM_IDLE_MS - 200);
    expect(idle).toBeLessThan(5_000);
    const second = await fetch(`${base}/denials`);
    expect(second.status).toBe(200);
    expect(sockets).toHaveLength(2);
  }, 15_000);
});
