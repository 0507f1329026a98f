/**
 * PostgreSQL for a vitest file: databases of its own on the run's one cluster (shared-postgres.ts). Every database
 * name carries a tag of this file, so files running side by side never meet; a migrated database is a copy of the
 * run's template (CREATE DATABASE … TEMPLATE, a file copy), not a fresh migration.
 *
 * What is shared across files is the cluster's: roles, and what a query of pg_stat_activity or pg_locks sees. A test
 * that creates a role names it after one of its databases; one that terminates connections or counts locks limits
 * itself to its own database (`datname = current_database()`). A test that stops PostgreSQL starts a cluster of its
 * own (startPostgres, postgres.ts).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { openPool } from '@/db/pg/client';
import { requirePostgresBin, run, type PgServer } from './postgres';
import { sharedCluster, type SharedCluster } from './shared-postgres';

/**
 * For a vitest file: the run's cluster reached before its tests, and connection pools on it that are closed after
 * them. `pool()` stands for one server's pool; several pools are several servers.
 */
export function usePostgres() {
  // Lower-case letters and digits: names are used unquoted in the tests' SQL.
  const tag = randomBytes(5).toString('hex');
  let shared: SharedCluster | undefined;
  let server: PgServer | undefined;
  let dir: string | undefined;
  let home: string | undefined;
  const pools: pg.Pool[] = [];
  let databases = 0;

  beforeAll(async () => {
    shared = await sharedCluster();
    dir = mkdtempSync(join(tmpdir(), 'swarm-pg-file-'));
  }, 150_000);
  afterAll(async () => {
    for (const p of pools.splice(0)) await p.end();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const reached = (): SharedCluster => {
    if (!shared) throw new Error('The cluster is reached in beforeAll: use it inside a test or a hook.');
    return shared;
  };
  const urlOf = (database: string) => `postgres://swarm@127.0.0.1:${reached().port}/${database}`;
  /** this file's empty database, made when first asked for (many files never use it) */
  const homeDatabase = (): string => {
    if (!home) {
      const name = handle.databaseName('swarm');
      run(requirePostgresBin(), 'createdb', ['-h', '127.0.0.1', '-p', String(reached().port), '-U', 'swarm', name]);
      home = name;
    }
    return home;
  };
  async function create(statement: string): Promise<void> {
    const admin = new pg.Client({ connectionString: reached().maintenanceUrl });
    await admin.connect();
    try {
      await admin.query(statement);
    } finally {
      await admin.end();
    }
  }

  const handle = {
    /**
     * Where this file's databases are: `url` is its own empty database (as a cluster's `swarm` database was when each
     * file started a cluster), `dir` a folder of its own, removed after its tests.
     */
    get cluster(): PgServer {
      reached();
      server ??= {
        get url() {
          return urlOf(homeDatabase());
        },
        port: reached().port,
        dir: dir!,
        urlOf,
      };
      return server;
    },
    /** a pool on `database` (default: this file's own empty database, `cluster.url`) */
    pool(database?: string, max = 4): pg.Pool {
      const p = openPool({ url: urlOf(database ?? homeDatabase()), max, connectionTimeoutMs: 5_000 });
      pools.push(p);
      return p;
    },
    /** a name for a database of this file's own, not yet created (for a test that creates it in its own way) */
    databaseName(prefix = 'db'): string {
      return `${prefix}_${tag}_${++databases}`;
    },
    /** a new, migrated database; its name */
    async freshDatabase(prefix = 'db'): Promise<string> {
      const name = handle.databaseName(prefix);
      await create(`CREATE DATABASE ${name} TEMPLATE ${reached().template}`);
      return name;
    },
    /** a new database with no tables yet (for a test of migrating); its name */
    async emptyDatabase(prefix = 'db'): Promise<string> {
      const name = handle.databaseName(prefix);
      await create(`CREATE DATABASE ${name}`);
      return name;
    },
  };
  return handle;
}
