/**
 * PostgreSQL: a connection pool with limits and timeouts, the committed migrations applied at start (once, whichever
 * of several servers starts first), and errors that say what is wrong instead of a driver's stack.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { redactedUrl } from '@/db/location';
import * as schema from './schema';
import { brand, isError } from '@/lib/errors';

export type PgDb = NodePgDatabase<typeof schema> & { $client: pg.Pool };

export interface PgPoolOptions {
  url: string;
  /** connections at most (default 10, or SWARM_PG_POOL_MAX) */
  max?: number;
  /** how long to wait for a connection, ms (default 5,000) */
  connectionTimeoutMs?: number;
  /** a statement that runs longer is cancelled, ms (default 10,000) */
  statementTimeoutMs?: number;
  /** an idle connection is closed after, ms (default 30,000) */
  idleTimeoutMs?: number;
  /** application_name seen in pg_stat_activity */
  applicationName?: string;
}

/** int8 columns (ids, counts) as JS numbers: exact below 2^53, refused above rather than silently rounded. */
function int8(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new RangeError(`A bigint value ${text} is beyond what this server can represent exactly.`);
  return n;
}
/**
 * numeric (what sum() of int8 answers, and avg()) as a JS number, as SQLite answers the same statement: an integer
 * exactly or refused (as int8), a fraction as the nearest double. No column of the schema is numeric.
 */
function numeric(text: string): number {
  return /^-?\d+$/.test(text) ? int8(text) : Number(text);
}
const INT8 = 20;
const NUMERIC = 1700;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8 ? int8 : oid === NUMERIC ? numeric : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/** The database cannot be reached or refused us: a clear reason, with the URL shown without its password. */
export class DatabaseUnavailable extends Error {
  static readonly kind = 'DatabaseUnavailable';
  readonly code = 'DATABASE_UNAVAILABLE';
  constructor(url: string, cause: unknown) {
    const why = cause instanceof Error ? ((cause as { code?: string }).code ? `${(cause as { code?: string }).code}: ${cause.message}` : cause.message) : String(cause);
    super(`PostgreSQL at ${redactedUrl(url)} is not available (${why}).`, { cause });
    brand(this, DatabaseUnavailable);
  }
}

export function openPool(options: PgPoolOptions): pg.Pool {
  const env = process.env;
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max ?? (Number(env.SWARM_PG_POOL_MAX) || 10),
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 5_000,
    idleTimeoutMillis: options.idleTimeoutMs ?? 30_000,
    statement_timeout: options.statementTimeoutMs ?? 10_000,
    application_name: options.applicationName ?? 'swarm-permissions',
    types,
  });
  // An idle connection that the server drops (a restart, a failover) must not crash the process: the pool replaces it.
  pool.on('error', (error) => console.error(`PostgreSQL connection lost (${error.message}); the pool reconnects.`));
  return pool;
}

/**
 * A connection of its own, with the pool's settings but outside it: for what holds a connection for the life of the
 * server (listening for flag changes, an advisory lock of leadership), so that SWARM_PG_POOL_MAX stays the number of
 * connections that serve requests. The caller connects it and ends it.
 */
export function dedicatedClient(pool: pg.Pool): pg.Client {
  const { max: _max, idleTimeoutMillis: _idle, ...settings } = pool.options as pg.PoolConfig;
  return new pg.Client(settings);
}

export function pgDatabase(pool: pg.Pool): PgDb {
  return drizzle(pool, { schema }) as PgDb;
}

/** The committed PostgreSQL migrations (db/pg/migrations), from the source tree the server and the CLI run in. */
export function pgMigrationsFolder(): string {
  const fromCwd = join(process.cwd(), 'db', 'pg', 'migrations');
  if (process.env.SWARM_PG_MIGRATIONS_DIR) return process.env.SWARM_PG_MIGRATIONS_DIR;
  if (existsSync(fromCwd)) return fromCwd;
  return join(dirname(fileURLToPath(import.meta.url)), 'migrations');
}

/** Any 64-bit key, fixed: the lock that lets one process migrate while the others wait. */
const MIGRATION_LOCK = 7_318_221_905_001;

/**
 * Apply the migrations not yet applied. Several servers starting at once take a session advisory lock first: one
 * migrates, the others wait and then find nothing to do. A database whose migrations are all applied is left alone
 * without asking for any right beyond reading the migrations table, so the servers can run as a role that does not
 * own the tables (docs/deployment.md); a role that cannot apply a pending migration is told to run them as the owner.
 * Throws DatabaseUnavailable when the database cannot be reached.
 */
export async function migratePostgres(pool: pg.Pool, url: string): Promise<void> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw new DatabaseUnavailable(url, error);
  }
  const unguard = guardClient(client);
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      const pending = await pendingMigrations(client);
      if (pending.length === 0) return;
      try {
        await migrate(drizzle(client), { migrationsFolder: pgMigrationsFolder() });
      } catch (error) {
        const cause = (error as { cause?: { code?: string } }).cause ?? (error as { code?: string });
        if (cause?.code === '42501') {
          throw new Error(
            `${pending.length} database migration${pending.length > 1 ? 's are' : ' is'} not applied (${pending.join(', ')}) and this role may not apply ${pending.length > 1 ? 'them' : 'it'}: run npx swarm db migrate --db <the owner's URL>, then start the servers again.`,
            { cause: error },
          );
        }
        throw error;
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    unguard();
    client.release();
  }
}

/** The committed migrations the database has not applied yet (their tags), as drizzle's migrator decides it. */
async function pendingMigrations(client: pg.ClientBase): Promise<string[]> {
  const journal = JSON.parse(readFileSync(join(pgMigrationsFolder(), 'meta', '_journal.json'), 'utf8')) as { entries: { tag: string; when: number }[] };
  const exists = await client.query<{ t: string | null }>("SELECT to_regclass('drizzle.__drizzle_migrations')::text AS t");
  if (!exists.rows[0]?.t) return journal.entries.map((e) => e.tag);
  const last = await client.query<{ at: string | null }>('SELECT max(created_at)::text AS at FROM drizzle.__drizzle_migrations');
  const appliedUpTo = Number(last.rows[0]?.at ?? 0);
  return journal.entries.filter((e) => e.when > appliedUpTo).map((e) => e.tag);
}

/**
 * One transaction on one connection (`client`: the dialect port's statements and the audit chain writer alike), so that
 * a state change and its audit rows commit together or not at all.
 */
export interface PgTx {
  client: pg.PoolClient;
}

/**
 * Run `fn` in one transaction; rolled back when it throws. A connection that cannot be had is DatabaseUnavailable.
 * `begin`: the statement that opens it (a read-only snapshot for verification, say).
 */
export async function inTransaction<T>(pool: pg.Pool, fn: (tx: PgTx) => Promise<T>, url = '', begin = 'BEGIN'): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw new DatabaseUnavailable(url || 'the configured database', error);
  }
  // A connection that failed under the transaction is destroyed, not handed back to the pool for the next caller.
  let broken = false;
  const unguard = guardClient(client, () => (broken = true));
  try {
    await client.query(begin);
    const out = await fn({ client });
    await client.query('COMMIT');
    return out;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => (broken = true));
    throw isConnectionError(error) ? new DatabaseUnavailable(url || 'the configured database', error) : error;
  } finally {
    unguard();
    client.release(broken);
  }
}

/**
 * Listen for the errors of a checked-out connection: one that dies between two statements emits 'error', which would
 * end the process if nobody listened (the next statement fails and says why). Returns the function that stops listening.
 */
export function guardClient(client: pg.PoolClient, onError: (error: Error) => void = () => {}): () => void {
  client.on('error', onError);
  return () => client.off('error', onError);
}

/** The connection itself failed (as opposed to a statement that was refused). */
function isConnectionError(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  return (
    e?.code === 'ECONNRESET' ||
    e?.code === 'ECONNREFUSED' ||
    e?.code === 'ENOTFOUND' ||
    e?.code === 'ETIMEDOUT' ||
    // admin shutdown, crash shutdown, cannot connect now; class 08: connection exceptions
    /^57P0[123]$/.test(e?.code ?? '') ||
    /^08/.test(e?.code ?? '') ||
    /Connection terminated|connection.*(closed|ended)|timeout exceeded when trying to connect/i.test(e?.message ?? '')
  );
}

/** PostgreSQL could not be reached (or went away) while serving a request: a 503, not a 500. */
export function isDatabaseUnreachable(error: unknown): boolean {
  // Drizzle wraps the driver's error (DrizzleQueryError, its cause): look through the causes.
  for (let e = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (isError(e, DatabaseUnavailable) || isConnectionError(e)) return true;
  }
  return false;
}
