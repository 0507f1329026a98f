/**
 * The tamper suite on PostgreSQL (tests/support/tamper-suite.ts), on databases of this file's own in the test run's
 * cluster: copies
 * of a real database (CREATE DATABASE … TEMPLATE) edited as the cluster's superuser would, with the append-only
 * triggers bypassed (session_replication_role = replica), each caught and located by `swarm audit verify --db URL`
 * and GET /api/v1/audit/verify.
 */
import pg from 'pg';
import { dedicatedClient, openPool } from '@/db/pg/client';
import { PgDialect } from 'drizzle-orm/pg-core';
import { boundStatement } from '@/lib/reports/reader';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { tamperSuite, type RawDb, type TamperTarget } from './support/tamper-suite';

const cluster = usePostgres();

const nameOf = (url: string) => new URL(url).pathname.slice(1);

/** A statement on this file's own empty database (not one being copied), as the cluster's superuser. */
async function onCluster(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: cluster.cluster.url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * A new database made from another, as a copy of its files. PostgreSQL refuses while a session is still on the source;
 * one that just disconnected may take a moment to leave, so that one refusal (55006) is tried again, for up to 10 s.
 */
async function createFrom(name: string, source: string): Promise<void> {
  const started = Date.now();
  for (;;) {
    try {
      return await onCluster(`CREATE DATABASE "${name}" TEMPLATE "${source}"`);
    } catch (error) {
      if ((error as { code?: string }).code !== '55006' || Date.now() - started > 10_000) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

const postgres: TamperTarget = {
  name: 'PostgreSQL',
  async create() {
    return cluster.cluster.urlOf(await cluster.freshDatabase('tamper'));
  },
  async copy(db) {
    const name = cluster.databaseName('tamper_copy');
    await createFrom(name, nameOf(db));
    return cluster.cluster.urlOf(name);
  },
  async restore(backup, db) {
    await onCluster(`DROP DATABASE "${nameOf(db)}"`);
    await createFrom(nameOf(db), nameOf(backup));
  },
  async raw(db, fn) {
    // The product's own connection settings (int8 as numbers), so values read here hash as the verifier reads them.
    const pool = openPool({ url: db, max: 1 });
    const client = dedicatedClient(pool);
    await client.connect();
    try {
      // The superuser's way past every trigger of the session: the append-only ones do not fire.
      await client.query('SET session_replication_role = replica');
      // The suite's `?` statements, numbered for PostgreSQL as the report's reader has them numbered.
      const query = (sql: string, params: readonly unknown[]) => {
        const q = new PgDialect().sqlToQuery(boundStatement(sql, params));
        return client.query(q.sql, q.params);
      };
      const raw: RawDb = {
        all: async <T>(sql: string, params: readonly unknown[] = []) => (await query(sql, params)).rows as T[],
        run: async (sql, params = []) => void (await query(sql, params)),
      };
      return await fn(raw);
    } finally {
      await client.end();
      await pool.end();
    }
  },
};

tamperSuite(postgres);
