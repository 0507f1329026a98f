/**
 * The product's server: the Next.js production server on a loopback port, and the decision listener (front.ts) on
 * the public port in front of it. `npm start`, the end-to-end tests and the HTTP benchmark all start it here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import type { Server } from 'node:http';
import type { SwarmApp } from '@/lib/app';
import { createFrontServer } from './front';

export interface ServeOptions {
  /** the application the decision listener decides with (long-lived: watchConfig and backgroundCheckpoints on) */
  app: SwarmApp;
  port: number;
  /** the public interface (default: all) */
  host?: string;
  /** the environment of the Next.js server (SWARM_DB and the rest) */
  env: NodeJS.ProcessEnv;
  /** where the Next.js server's output goes (default: this process's) */
  stdio?: 'inherit' | 'pipe';
  /** the loopback port of the Next.js server (default: a free one) */
  upstreamPort?: number;
}

export interface Serving {
  front: Server;
  next: ChildProcess;
  /** the loopback port of the Next.js server */
  upstreamPort: number;
  /** stop both: the front first, then Next.js (SIGTERM, SIGKILL after 5 s) */
  close(): Promise<void>;
}

/** A free port on the loopback interface. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => (port ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

export async function serve(options: ServeOptions): Promise<Serving> {
  const upstreamPort = options.upstreamPort ?? (await freePort());
  const nextBin = join('node_modules', 'next', 'dist', 'bin', 'next');
  const next = spawn(process.execPath, [nextBin, 'start', '-p', String(upstreamPort), '-H', '127.0.0.1'], {
    stdio: ['ignore', options.stdio ?? 'inherit', options.stdio ?? 'inherit'],
    env: options.env,
  });
  const front = createFrontServer({ app: options.app, upstream: { host: '127.0.0.1', port: upstreamPort } });
  await new Promise<void>((resolve, reject) => {
    front.once('error', reject);
    front.listen(options.port, options.host, () => resolve());
  });
  let closed: Promise<void> | undefined;
  return {
    front,
    next,
    upstreamPort,
    close() {
      closed ??= (async () => {
        const frontClosed = new Promise<void>((resolve) => front.close(() => resolve()));
        front.closeAllConnections();
        await frontClosed;
        if (next.exitCode === null && next.signalCode === null) {
          const exited = new Promise<void>((resolve) => next.once('exit', () => resolve()));
          next.kill('SIGTERM');
          const timer = setTimeout(() => next.kill('SIGKILL'), 5_000);
          await exited;
          clearTimeout(timer);
        }
      })();
      return closed;
    },
  };
}
