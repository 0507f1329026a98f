/**
 * The product's server: the Next.js production server on a loopback port, and the decision listener (front.ts) on
 * the public port in front of it. `npm start`, the end-to-end tests and the HTTP benchmark all start it here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { App } from '@/lib/app';
import { VERIFY_WORKER_ENV } from '@/lib/audit/trail/verify-parallel';
import { INTERNAL_SECRET_ENV } from '@/lib/ops/internal';
import { log } from '@/lib/ops/log';
import { createFrontServer, type FrontServer } from './front';
import { listenerWorkers, startListenerWorkers, type WorkerPool } from './workers';

export interface ServeOptions {
  /** the application the decision listener decides with (long-lived: watchConfig and backgroundCheckpoints on) */
  app: App;
  port: number;
  /** the public interface (default: all) */
  host?: string;
  /** the environment of the Next.js server (SWARM_DB and the rest) */
  env: NodeJS.ProcessEnv;
  /** where the Next.js server's output goes (default: this process's) */
  stdio?: 'inherit' | 'pipe';
  /** the loopback port of the Next.js server (default: a free one) */
  upstreamPort?: number;
  /**
   * decision listener processes (default SWARM_LISTENER_WORKERS, else one per core, at most 4): 1 answers in this
   * process with `app`; more run as workers on the same port (lib/server/workers.ts), each with its own application
   * opened from `env`, and `app` stays this process's (migrations done, checkpoints, background work)
   */
  workers?: number;
}

export interface Serving {
  /** the decision listener in this process (one worker), or the workers' pool */
  front: FrontServer | WorkerPool;
  next: ChildProcess;
  /** the loopback port of the Next.js server */
  upstreamPort: number;
  /**
   * Stop both, gracefully: the front stops accepting and answers what is in flight (queued decisions are committed
   * and answered; at most 10 s), then Next.js (SIGTERM, SIGKILL after 5 s).
   */
  close(): Promise<void>;
}

async function listenHere(options: ServeOptions, upstreamPort: number, internalSecret: string): Promise<FrontServer> {
  const front = createFrontServer({ app: options.app, upstream: { host: '127.0.0.1', port: upstreamPort }, internalSecret });
  await new Promise<void>((resolve, reject) => {
    front.once('error', reject);
    front.listen(options.port, options.host, () => resolve());
  });
  return front;
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
  const workers = options.workers ?? listenerWorkers(options.env);
  const upstreamPort = options.upstreamPort ?? (await freePort());
  // The secret of this start for the Next.js server's internal metrics route (lib/ops/internal.ts).
  const internalSecret = randomBytes(24).toString('base64url');
  process.env.SWARM_PROCESS ??= 'listener';
  // `next start` with the public port's refusals in front (lib/server/next-server.ts): both ports answer alike.
  const next = spawn(process.execPath, [join('bin', 'run.mjs'), join('lib', 'server', 'next-server.ts'), String(upstreamPort), '127.0.0.1'], {
    stdio: ['ignore', options.stdio ?? 'inherit', options.stdio ?? 'inherit'],
    // Next.js telemetry is off unless the operator turns it on explicitly.
    env: {
      NEXT_TELEMETRY_DISABLED: '1',
      ...options.env,
      [INTERNAL_SECRET_ENV]: internalSecret,
      SWARM_PROCESS: 'next',
      // Its bundled modules are not beside the audit verifier's worker script: name it (lib/audit/trail/verify-parallel.ts).
      [VERIFY_WORKER_ENV]: fileURLToPath(new URL('../audit/trail/verify-worker.mjs', import.meta.url)),
      // An application whose last words (its stop, a final checkpoint) are asynchronous handles SIGTERM itself and
      // exits when they are written, instead of Next.js exiting under them.
      ...(options.app.side.handlesSignals ? { NEXT_MANUAL_SIG_HANDLE: '1' } : {}),
    },
  });
  let front: FrontServer | WorkerPool;
  try {
    front = workers > 1 ? await startListenerWorkers({ count: workers, port: options.port, host: options.host, upstreamPort, env: { ...options.env, [INTERNAL_SECRET_ENV]: internalSecret } }) : await listenHere(options, upstreamPort, internalSecret);
  } catch (error) {
    next.kill('SIGTERM');
    throw error;
  }
  log('info', 'decision listener started', { port: options.port, processes: workers, next_port: upstreamPort });
  let closed: Promise<void> | undefined;
  return {
    front,
    next,
    upstreamPort,
    close() {
      closed ??= (async () => {
        log('info', 'shutdown: the decision listener stops accepting and finishes the requests in flight');
        await front.shutdown();
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
