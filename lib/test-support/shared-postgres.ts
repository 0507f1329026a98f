/**
 * The one PostgreSQL cluster of a unit test run, as the test files' processes reach it.
 *
 * The global setup (shared-postgres-setup.ts) only chooses the cluster's folder and stops the cluster at the end: it is
 * started by the first test file that asks for it, so a run of SQLite files alone never pays for initdb. That file's
 * process takes the folder's `cluster` entry as a lock (mkdir succeeds once), starts the cluster in it, migrates a
 * template database once and writes `ready.json`; the others wait for that file (or for `failed.txt`, whose message
 * they throw: "PostgreSQL is not installed …" reaches every file that needs the cluster, none is skipped).
 * Every test file then makes its databases from the template (use-postgres.ts).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { migratePostgres, openPool } from '@/db/pg/client';
import { startPostgres } from './postgres';

declare module 'vitest' {
  export interface ProvidedContext {
    /** the folder of this run's PostgreSQL cluster (shared-postgres-setup.ts) */
    swarmPostgresRun: string;
  }
}

export interface SharedCluster {
  port: number;
  /** a migrated database nobody connects to, the template of every test file's migrated databases */
  template: string;
  /** the cluster's maintenance database, where databases are created */
  maintenanceUrl: string;
}

export const TEMPLATE_DATABASE = 'swarm_template';
/** initdb under a loaded 2-core machine took 8 s; waiting longer than this means the starter is gone */
const START_LIMIT_MS = 120_000;

let cluster: Promise<SharedCluster> | undefined;

/** This run's cluster, started by whichever test file asks first. */
export function sharedCluster(): Promise<SharedCluster> {
  cluster ??= reach();
  return cluster;
}

async function reach(): Promise<SharedCluster> {
  const root = inject('swarmPostgresRun');
  if (!root) throw new Error('usePostgres() needs the run’s cluster: vitest.config.ts names lib/test-support/shared-postgres-setup.ts in globalSetup.');
  const ready = join(root, 'ready.json');
  const failed = join(root, 'failed.txt');
  if (takeLock(join(root, 'cluster'))) {
    try {
      const started = await start(join(root, 'cluster'));
      // Written whole, then renamed: a waiting process never reads half of it.
      writeFileSync(`${ready}.tmp`, JSON.stringify(started));
      renameSync(`${ready}.tmp`, ready);
      return started;
    } catch (error) {
      writeFileSync(failed, error instanceof Error ? error.message : String(error));
      throw error;
    }
  }
  const since = performance.now();
  for (;;) {
    if (existsSync(ready)) return JSON.parse(readFileSync(ready, 'utf8')) as SharedCluster;
    if (existsSync(failed)) throw new Error(readFileSync(failed, 'utf8'));
    if (performance.now() - since > START_LIMIT_MS) throw new Error(`The run's PostgreSQL cluster (${root}) was not ready within ${START_LIMIT_MS / 1000} s.`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** true for the one process that creates `dir` */
function takeLock(dir: string): boolean {
  try {
    mkdirSync(dir);
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === 'EEXIST') return false;
    throw error;
  }
}

async function start(dir: string): Promise<SharedCluster> {
  // 300 connections: test files run side by side on one cluster, each with a few pools.
  const started = await startPostgres({ dir, maxConnections: 300 });
  const admin = new pg.Client({ connectionString: started.url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
    const pool = openPool({ url: started.urlOf(TEMPLATE_DATABASE), max: 1 });
    try {
      await migratePostgres(pool, TEMPLATE_DATABASE);
    } finally {
      await pool.end();
    }
    // A copy is refused while anyone is connected to its template: nobody may connect from now on.
    await admin.query(`ALTER DATABASE ${TEMPLATE_DATABASE} ALLOW_CONNECTIONS false`);
  } finally {
    await admin.end();
  }
  return { port: started.port, template: TEMPLATE_DATABASE, maintenanceUrl: started.url };
}
