/**
 * Several decision listeners on one port. One process of Node.js decides on one core; the listener is the part of
 * the server that agents call in a loop, so `npm start` runs it in SWARM_LISTENER_WORKERS processes (default: one per
 * core, at most 4) that share the public port (node:cluster: the starting process accepts the connections and hands
 * them out in turn). Each worker opens the same database and configuration and answers exactly as a single listener
 * does (lib/server/front.ts); everything that is not a decision call is passed to the one Next.js server.
 *
 * The starting process (the primary) keeps its own application for what happens once per server: migrations, the
 * first admin, checkpoints of the WAL, the search index, the demo team. It restarts a worker that dies, stops them
 * gracefully at shutdown (each commits and answers what it holds), and collects their metrics for GET /metrics, so a
 * scrape sees the sum of all of them whichever worker answers it.
 *
 * Concurrency between workers is SQLite's: a group of allowed calls takes no lock (lib/decisions/group-commit.ts opens its transaction at
 * the group's first write), writers take turns on the write lock, and the audit chains and approvals are kept
 * consistent across processes by their own code (chain.ts, approvals/store.ts), as between the listener and Next.js.
 */
import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { log } from '@/lib/ops/log';
import { processMetrics, type MetricsJson } from '@/lib/ops/metrics';

export const WORKERS_ENV = 'SWARM_LISTENER_WORKERS';
/** Set in a worker's environment: where it listens and where Next.js is (the primary chose them). */
export const WORKER_PORT_ENV = 'SWARM_LISTENER_PORT';
export const WORKER_HOST_ENV = 'SWARM_LISTENER_HOST';
export const WORKER_UPSTREAM_ENV = 'SWARM_LISTENER_UPSTREAM_PORT';

const MAX_WORKERS = 64;

/** How many listener processes: SWARM_LISTENER_WORKERS (1 to 64), else one per core, at most 4. */
export function listenerWorkers(env: Readonly<Record<string, string | undefined>> = process.env): number {
  const raw = env[WORKERS_ENV]?.trim();
  if (!raw) return Math.max(1, Math.min(4, availableParallelism()));
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > MAX_WORKERS) {
    throw new Error(`${WORKERS_ENV} must be a whole number from 1 to ${MAX_WORKERS} (the number of decision listener processes), not "${raw}".`);
  }
  return n;
}

/** The messages between the primary and its workers. */
type Message =
  | { swarm: 'metrics-request'; id: number }
  | { swarm: 'metrics-collect'; id: number }
  | { swarm: 'metrics-part'; id: number; json: MetricsJson }
  | { swarm: 'metrics-reply'; id: number; parts: MetricsJson[] }
  | { swarm: 'shutdown'; timeoutMs: number };

function isMessage(m: unknown): m is Message {
  return typeof m === 'object' && m !== null && typeof (m as { swarm?: unknown }).swarm === 'string';
}

/** How long a metrics collection waits for a worker that does not answer (it is then left out of that scrape). */
const COLLECT_TIMEOUT_MS = 2_000;
/** A worker that dies is started again after this pause (a crash loop does not spin). */
const RESTART_DELAY_MS = 1_000;

export interface WorkerPoolOptions {
  count: number;
  port: number;
  host?: string;
  /** the loopback port of the Next.js server */
  upstreamPort: number;
  /** the environment of the workers (SWARM_DB, the configuration, the internal secret of this start) */
  env: NodeJS.ProcessEnv;
}

export interface WorkerPool {
  /** Stop every worker gracefully (each stops accepting, commits and answers what it holds); at most `timeoutMs`. */
  shutdown(timeoutMs?: number): Promise<void>;
}

/**
 * Start the workers and resolve when every one of them listens; reject (and stop the others) when one exits before it
 * listens: its own output says why (a configuration it refuses, a database it cannot open).
 */
export async function startListenerWorkers(options: WorkerPoolOptions): Promise<WorkerPool> {
  if (!cluster.isPrimary) throw new Error('Listener workers are started by the primary process.');
  cluster.setupPrimary({
    // The worker is TypeScript, run as the server itself is (npm start): from a bundle of its sources, or through tsx.
    exec: fileURLToPath(new URL('../../bin/run.mjs', import.meta.url)),
    args: ['lib/server/listener-worker.ts'],
    execArgv: [],
  });
  const env: NodeJS.ProcessEnv = {
    ...options.env,
    SWARM_PROCESS: 'listener',
    [WORKER_PORT_ENV]: String(options.port),
    [WORKER_HOST_ENV]: options.host ?? '',
    [WORKER_UPSTREAM_ENV]: String(options.upstreamPort),
  };
  const workers = new Set<Worker>();
  let stopping = false;
  let nextId = 1;
  const collections = new Map<number, { parts: MetricsJson[]; waiting: Set<Worker>; done: () => void }>();

  /** Every worker's registry and this process's, for the worker that serves a scrape. */
  const collect = async (): Promise<MetricsJson[]> => {
    const id = nextId++;
    const parts: MetricsJson[] = [(await processMetrics().registry.getMetricsAsJSON()) as MetricsJson];
    const waiting = new Set([...workers].filter((w) => w.isConnected()));
    if (waiting.size === 0) return parts;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, COLLECT_TIMEOUT_MS);
      collections.set(id, { parts, waiting, done: () => (clearTimeout(timer), resolve()) });
      for (const w of waiting) w.send({ swarm: 'metrics-collect', id } satisfies Message);
    });
    collections.delete(id);
    return parts;
  };

  const onMessage = (worker: Worker, m: unknown) => {
    if (!isMessage(m)) return;
    if (m.swarm === 'metrics-request') {
      void collect().then((parts) => {
        if (worker.isConnected()) worker.send({ swarm: 'metrics-reply', id: m.id, parts } satisfies Message);
      });
    } else if (m.swarm === 'metrics-part') {
      const c = collections.get(m.id);
      if (!c || !c.waiting.delete(worker)) return;
      c.parts.push(m.json);
      if (c.waiting.size === 0) c.done();
    }
  };

  const fork = (): { worker: Worker; listening: Promise<void> } => {
    const worker = cluster.fork(env);
    workers.add(worker);
    worker.on('message', (m: unknown) => onMessage(worker, m));
    const listening = new Promise<void>((resolve, reject) => {
      worker.once('listening', () => resolve());
      worker.once('exit', (code, signal) => reject(new Error(`A decision listener worker stopped before it listened (${signal ?? `exit ${code}`}).`)));
    });
    worker.once('exit', (code, signal) => {
      workers.delete(worker);
      for (const c of collections.values()) if (c.waiting.delete(worker) && c.waiting.size === 0) c.done();
      if (stopping) return;
      log('error', 'a decision listener worker stopped; starting another', { pid: worker.process.pid, exit: signal ?? code });
      setTimeout(() => {
        if (!stopping) fork().listening.catch((error: unknown) => log('error', 'a decision listener worker could not start', { error: String(error) }));
      }, RESTART_DELAY_MS).unref();
    });
    return { worker, listening };
  };

  const started = Array.from({ length: options.count }, fork);
  const pool: WorkerPool = {
    async shutdown(timeoutMs = 10_000) {
      stopping = true;
      const all = [...workers];
      await Promise.all(
        all.map(
          (w) =>
            new Promise<void>((resolve) => {
              if (w.isDead()) return resolve();
              // The worker answers what it holds within timeoutMs; a little more before it is killed.
              const kill = setTimeout(() => w.process.kill('SIGKILL'), timeoutMs + 2_000);
              w.once('exit', () => {
                clearTimeout(kill);
                resolve();
              });
              if (w.isConnected()) w.send({ swarm: 'shutdown', timeoutMs } satisfies Message);
              else w.process.kill('SIGTERM');
            }),
        ),
      );
    },
  };
  try {
    await Promise.all(started.map((s) => s.listening));
  } catch (error) {
    await pool.shutdown(2_000);
    throw error;
  }
  return pool;
}

/**
 * In a worker: ask the primary for every process's registry (its own included, answered through the same channel).
 * Undefined when this process is not a worker or the primary does not answer.
 */
export function askPrimaryForMetrics(): Promise<MetricsJson[] | undefined> {
  if (!cluster.isWorker || !process.send || !process.connected) return Promise.resolve(undefined);
  const id = Math.floor(Math.random() * 2 ** 31);
  return new Promise((resolve) => {
    const onReply = (m: unknown) => {
      if (!isMessage(m) || m.swarm !== 'metrics-reply' || m.id !== id) return;
      done(m.parts);
    };
    const timer = setTimeout(() => done(undefined), COLLECT_TIMEOUT_MS + 1_000);
    const done = (parts: MetricsJson[] | undefined) => {
      clearTimeout(timer);
      process.off('message', onReply);
      resolve(parts);
    };
    process.on('message', onReply);
    process.send!({ swarm: 'metrics-request', id } satisfies Message);
  });
}

/**
 * In a worker: answer the primary's metrics collections, and shut down when it says so (or when it is gone).
 * `shutdown` stops the listener and closes the application; the process exits after it.
 */
export function serveThePrimary(shutdown: (timeoutMs: number) => Promise<void>): void {
  let stopping = false;
  const stop = (timeoutMs: number) => {
    if (stopping) return;
    stopping = true;
    void shutdown(timeoutMs)
      .catch((error: unknown) => log('error', 'a decision listener worker did not stop cleanly', { error: String(error) }))
      .finally(() => process.exit(0));
  };
  process.on('message', (m: unknown) => {
    if (!isMessage(m)) return;
    if (m.swarm === 'metrics-collect') {
      void processMetrics()
        .registry.getMetricsAsJSON()
        .then((json) => {
          if (process.connected) process.send?.({ swarm: 'metrics-part', id: m.id, json: json as MetricsJson } satisfies Message);
        });
    } else if (m.swarm === 'shutdown') stop(m.timeoutMs);
  });
  // The primary is gone (killed): nobody hands out connections any more; finish what is here and stop.
  process.on('disconnect', () => stop(10_000));
  // Ctrl-C reaches every process of the terminal's group: the primary decides when the workers stop.
  process.on('SIGINT', () => undefined);
  process.on('SIGTERM', () => stop(10_000));
}
