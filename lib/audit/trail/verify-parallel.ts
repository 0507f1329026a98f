/**
 * Verification on every core. Reading a row through better-sqlite3 costs more than hashing it (measured at 1,000,000
 * denials: 6.8 s to read the rows, 11 s with the hashes), and one thread reads one row at a time; so a long chain is cut
 * into consecutive runs of ids, each verified by a worker thread on its own read-only connection
 * (verify-worker.mjs), and the runs are stitched together here: each must begin where the one before ended (its first
 * prev_hash is that run's last row_hash, its first id the next id). The checkpoints are then checked against the heads
 * the runs found, by the same ChainVerifier that verifies row by row.
 *
 * The answer is the row-by-row verifier's report (a test compares them, intact and tampered): when every run is clean
 * and they join, the rows are what that verifier would have seen, and the checkpoints (a key, a signature, a head) are
 * checked by the same code. Anything else in the rows (a run that is not clean, runs that do not join, a worker that
 * cannot start) is verified again row by row (verifyAudit, its rows read by one statement), whose report names the
 * table, the first bad row and what is wrong. Rows appended while the runs are read are not in them, as they would not be in one snapshot; the bounds are read
 * after the checkpoints, so every checkpoint signed covers rows that the runs include.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import { CHAIN_NAMES, type ChainName } from './chain';
import { SqliteDatabase } from '@/db/dialect';
import { chainRowLayout, chainRowsSql, chainVerifierFor, finishAudit, timestampLookup, verifierKeyOf, verifyAudit, verifyReportOf, verifyRowByRow, type ChainReport, type VerifiedRun, type VerifyOptions, type VerifyReport } from './verify';

export interface ParallelOptions {
  /** worker threads at most (default: the cores, up to 4) */
  threads?: number;
  /** rows each worker gets at least; a chain shorter than two runs is verified row by row (default 100,000) */
  minRowsPerThread?: number;
  /** the worker script (tests point it elsewhere to see a worker that cannot start) */
  workerFile?: string;
}

/** The report, and how many worker threads verified rows (0: all of it was verified row by row on this thread). */
export type ParallelVerifyReport = VerifyReport & { threads: number };

const DEFAULT_MIN_ROWS_PER_THREAD = 100_000;

/** Set by lib/server/serve.ts for the Next.js server it starts, whose bundled modules are not beside the worker. */
export const VERIFY_WORKER_ENV = 'SWARM_VERIFY_WORKER_FILE';

/**
 * The worker script: the one beside this module (the CLI, the tests and the decision listener run the source tree), else
 * the one that lib/server/serve.ts names for the Next.js server it starts. Never one found through the working
 * directory: the verdict must not depend on where a command is run. Undefined when there is none: then verification
 * runs row by row.
 */
export function verifyWorkerFile(env: Readonly<Record<string, string | undefined>> = process.env): string | undefined {
  const candidates: string[] = [];
  try {
    candidates.push(join(dirname(fileURLToPath(import.meta.url)), 'verify-worker.mjs'));
  } catch {
    // a bundle without a file URL
  }
  const named = env[VERIFY_WORKER_ENV];
  if (named && isAbsolute(named) && basename(named) === 'verify-worker.mjs') candidates.push(named);
  return candidates.find((file) => existsSync(file));
}

/** Verifications on worker threads run one at a time in a process: several requests at once do not multiply threads. */
let workersFree: Promise<unknown> = Promise.resolve();
function oneAtATime<T>(work: () => Promise<T>): Promise<T> {
  const run = workersFree.then(work, work);
  workersFree = run.catch(() => undefined);
  return run;
}

/**
 * Verify every chain of the SQLite database open on `sqlite` (a file: an in-memory database is verified row by row),
 * long chains on several threads. Same arguments and same report as verifyAudit.
 */
export async function verifyAuditInParallel(
  sqlite: Database.Database,
  verifierKeyText: string | undefined,
  range: VerifyOptions = {},
  options: ParallelOptions = {},
): Promise<ParallelVerifyReport> {
  const rowByRow = (): ParallelVerifyReport => ({ ...verifyAudit(sqlite, verifierKeyText, range), threads: 0 });
  const workerFile = options.workerFile === undefined ? verifyWorkerFile() : existsSync(/* turbopackIgnore: true */ options.workerFile) ? options.workerFile : undefined;
  const maxThreads = Math.max(1, Math.floor(options.threads ?? Math.min(4, availableParallelism())));
  const minRows = Math.max(1, options.minRowsPerThread ?? DEFAULT_MIN_ROWS_PER_THREAD);
  if (maxThreads < 2 || sqlite.memory || workerFile === undefined) return rowByRow();

  const { key, failures } = verifierKeyOf(verifierKeyText);
  const database = new SqliteDatabase(sqlite);
  const chains: ChainReport[] = [];
  let threads = 0;
  for (const chain of CHAIN_NAMES) {
    const verifier = database.transactionSync((tx) => chainVerifierFor(tx, chain, key, failures, range), { readOnly: true });
    const { first, last } = sqlite.prepare<[], { first: number | null; last: number | null }>(`SELECT min(id) AS first, max(id) AS last FROM ${chain}`).get()!;
    const runs = first === null || last === null ? 0 : Math.min(maxThreads, Math.floor((last - first + 1) / minRows));
    if (runs < 2) {
      // A short chain: row by row here, on this connection.
      chains.push(verifyRowByRow(sqlite, verifier));
      continue;
    }
    const verified = await oneAtATime(() => verifyRuns(workerFile, sqlite.name, chain, splitIds(first!, last!, runs), verifier.wantedSizes(), range));
    if (!verified || !verified.every((run) => verifier.absorb(run))) return rowByRow();
    threads = Math.max(threads, runs);
    chains.push(verifier.finish(timestampLookup(sqlite, chain)));
  }
  database.transactionSync((tx) => finishAudit(tx, chains, failures), { readOnly: true });
  return { ...verifyReportOf(chains, failures, verifierKeyText), threads };
}

/** [first, last] cut into `runs` consecutive ranges of ids of (nearly) equal length. */
export function splitIds(first: number, last: number, runs: number): [number, number][] {
  const total = last - first + 1;
  const out: [number, number][] = [];
  let from = first;
  for (let i = 0; i < runs; i++) {
    const size = Math.floor(total / runs) + (i < total % runs ? 1 : 0);
    out.push([from, from + size - 1]);
    from += size;
  }
  return out;
}

/** Each range on its own worker, all at once; undefined when a worker could not run (the caller verifies row by row). */
async function verifyRuns(
  workerFile: string,
  path: string,
  chain: ChainName,
  ranges: readonly [number, number][],
  wanted: readonly number[],
  range: VerifyOptions,
): Promise<VerifiedRun[] | undefined> {
  const at = chainRowLayout(chain);
  const sql = chainRowsSql(chain, true);
  const started = ranges.map(
    ([fromId, toId]) =>
      new Promise<VerifiedRun | undefined>((resolve) => {
        let worker: Worker;
        try {
          worker = new Worker(workerFile, {
            workerData: { path, sql, fromId, toId, at, wanted: wanted.filter((id) => id >= fromId && id <= toId), range: { from: range.from, to: range.to } },
          });
        } catch {
          resolve(undefined);
          return;
        }
        worker.once('message', (run: VerifiedRun) => resolve(run));
        worker.once('error', () => resolve(undefined));
        worker.once('exit', () => resolve(undefined));
      }),
  );
  const runs = await Promise.all(started);
  return runs.every((r): r is VerifiedRun => r !== undefined) ? runs : undefined;
}
