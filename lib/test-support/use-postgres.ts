/** The PostgreSQL cluster of a vitest file (see postgres.ts for the cluster itself). */
import type pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { migratePostgres, openPool } from '@/db/pg/client';
import { startPostgres, type PgCluster } from './postgres';

/**
 * For a vitest file: a cluster started before its tests and stopped after them, and connection pools on it that are
 * closed before the cluster stops. `pool()` stands for one server's pool; several pools are several servers.
 */
export function usePostgres() {
  let cluster: PgCluster | undefined;
  const pools: pg.Pool[] = [];
  let databases = 0;
  beforeAll(async () => {
    cluster = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    for (const p of pools.splice(0)) await p.end();
    cluster?.stop();
  });
  const handle = {
    get cluster(): PgCluster {
      if (!cluster) throw new Error('The cluster starts in beforeAll: use it inside a test or a hook.');
      return cluster;
    },
    /** a pool on `database` (default: the cluster's `swarm` database) */
    pool(database = 'swarm', max = 4): pg.Pool {
      const p = openPool({ url: handle.cluster.urlOf(database), max, connectionTimeoutMs: 5_000 });
      pools.push(p);
      return p;
    },
    /** a new, migrated database; its name */
    async freshDatabase(prefix = 'db'): Promise<string> {
      const name = `${prefix}_${++databases}`;
      handle.cluster.createDatabase(name);
      const p = openPool({ url: handle.cluster.urlOf(name), max: 1 });
      try {
        await migratePostgres(p, name);
      } finally {
        await p.end();
      }
      return name;
    },
  };
  return handle;
}
