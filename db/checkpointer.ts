/**
 * Background WAL checkpoints. A commit in WAL mode appends the changed pages to the log; copying them back into the
 * database file (a checkpoint, with its fsyncs) is the expensive part, and SQLite does it inline on every ~1000 pages
 * of commits by default. Long-lived processes (the server, the demo) run it on a worker thread instead and raise the
 * writers' inline threshold to a safety net (see openDatabase's `walAutocheckpointPages`).
 */
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

export interface Checkpointer {
  stop(): Promise<void>;
  /** the worker thread is running (false after it exited or failed) */
  alive(): boolean;
}

export function startCheckpointer(dbPath: string, intervalMs = 100): Checkpointer {
  const file = join(/*turbopackIgnore: true*/ process.cwd(), 'db', 'checkpoint-worker.mjs');
  const worker = new Worker(file, { workerData: { path: dbPath, intervalMs } });
  worker.unref();
  let running = true;
  worker.on('error', (e) => console.error('The WAL checkpointer stopped; writers fall back to inline checkpoints.', e));
  worker.on('exit', () => (running = false));
  worker.on('error', () => (running = false));
  return {
    alive: () => running,
    stop: () =>
      new Promise<void>((resolve) => {
        const done = () => resolve();
        worker.once('message', () => void worker.terminate().then(done, done));
        worker.once('exit', done);
        worker.postMessage('stop');
      }),
  };
}
