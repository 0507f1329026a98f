/**
 * The dialect port: the one way a store reaches its database, whichever it is. A store is written once against it,
 * in portable SQL (Drizzle's `sql` templates: parameters bound, never spliced), and runs on SQLite (better-sqlite3) and
 * on PostgreSQL (node-postgres). What the two databases really do differently lives here and nowhere else:
 *
 * - transactions: SQLite's `BEGIN IMMEDIATE` takes the one writer lock; PostgreSQL's `BEGIN` and, for a key that must
 *   be serialised across servers, `pg_advisory_xact_lock` (`serialise`).
 * - row locking and claiming: `forUpdate` and `skipLocked` are SQL on PostgreSQL and nothing on SQLite (the writer lock
 *   already excludes every other writer).
 * - case-insensitive matching: `ilike` (SQLite's LIKE ignores ASCII case, PostgreSQL's needs ILIKE).
 * - the change feed (`publish`, `changes`): PostgreSQL's NOTIFY and LISTEN; on SQLite a generation counter that another
 *   process's commit moves (PRAGMA data_version), read by a timer.
 *
 * A transaction body is a generator that yields each statement (`yield* tx.all(...)`): on SQLite it is driven
 * synchronously between BEGIN IMMEDIATE and COMMIT, so nothing else of this process runs inside the transaction and no
 * I/O is awaited while the file's writer lock is held (a body that yields a promise there is refused and rolled back:
 * the rule is enforced, not a convention); on PostgreSQL it is driven asynchronously on one connection.
 */
import type Database from 'better-sqlite3';
import type pg from 'pg';
import { sql, type SQL } from 'drizzle-orm';
import { SQLiteSyncDialect } from 'drizzle-orm/sqlite-core';
import { PgDialect } from 'drizzle-orm/pg-core';
import { BoundedCache } from '@/lib/bounded-cache';
import { dedicatedClient, inTransaction } from './pg/client';
import { announceWrite } from './write-intent';

export type DialectName = 'sqlite' | 'postgres';

/** A value a statement answers: at once inside a SQLite transaction, a promise on PostgreSQL. */
export type Step<T> = T | Promise<T>;

/** The statements of a transaction body, used as `const row = yield* tx.one<Row>(sql`...`)`. */
export type TxSteps<T> = Generator<Step<unknown>, T, unknown>;

export interface TxRunner {
  readonly dialect: DialectName;
  all<T>(query: SQL): TxSteps<T[]>;
  one<T>(query: SQL): TxSteps<T | undefined>;
  /** a statement that returns no rows; the number of rows it changed */
  run(query: SQL): TxSteps<number>;
  /** tell every process listening on `channel` once this transaction commits (see SqlDatabase.changes) */
  publish(channel: string): TxSteps<void>;
}

export interface TransactionOptions {
  /**
   * A key whose transactions must run one at a time across every process and server (a user's sign-in attempts, a
   * chain's head): an advisory lock on PostgreSQL; on SQLite the writer lock of BEGIN IMMEDIATE already does it.
   */
  serialise?: string;
  /** a read-only transaction (one consistent snapshot for several reads) */
  readOnly?: boolean;
}

export interface SqlDatabase {
  readonly dialect: DialectName;
  all<T>(query: SQL): Promise<T[]>;
  one<T>(query: SQL): Promise<T | undefined>;
  run(query: SQL): Promise<number>;
  transaction<T>(body: (tx: TxRunner) => TxSteps<T>, options?: TransactionOptions): Promise<T>;
  /**
   * Call `listener` after another process (or this one) publishes on `channel`, within about `pollMs` on SQLite, at
   * once on PostgreSQL; and after a reconnection, for what may have been missed. Returns the function that stops it.
   */
  changes(channel: string, listener: () => void, options?: { pollMs?: number }): Promise<() => Promise<void>>;
  /** `FOR UPDATE` where the database locks rows (PostgreSQL), nothing where a transaction holds the only writer lock */
  readonly forUpdate: SQL;
  /** `FOR UPDATE SKIP LOCKED`: claim rows no other transaction is claiming (nothing on SQLite, as forUpdate) */
  readonly skipLocked: SQL;
  /** `a LIKE b` ignoring ASCII case on both databases */
  ilike(column: SQL, pattern: string): SQL;
}

/** A transaction body on SQLite waited for something: refused, since it would hold the writer lock across the wait. */
export class TransactionWouldWait extends Error {
  readonly code = 'TRANSACTION_WOULD_WAIT';
  constructor() {
    super('A SQLite transaction body waited for a promise: a transaction may only run statements (it holds the writer lock).');
    this.name = 'TransactionWouldWait';
  }
}

function isPromise(v: unknown): v is Promise<unknown> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}

/** One step of a transaction body, typed: yields the statement's answer and returns it. */
function* step<T>(value: Step<T>): TxSteps<T> {
  return (yield value) as T;
}

// ---------------------------------------------------------------------------------------------------------------- SQLite

const sqliteDialect = new SQLiteSyncDialect();
/** Statements kept prepared per connection, by their text (the stores' queries are a bounded set of texts). */
const MAX_PREPARED = 500;

/** better-sqlite3 binds numbers, strings, bigints, buffers and null; a boolean is stored as 0 or 1. */
const sqliteParam = (p: unknown): unknown => (typeof p === 'boolean' ? (p ? 1 : 0) : p);

class SqliteRunner {
  private readonly prepared = new BoundedCache<string, Database.Statement>(MAX_PREPARED);

  constructor(readonly client: Database.Database) {}

  private statement(query: SQL): { stmt: Database.Statement; params: unknown[] } {
    const q = sqliteDialect.sqlToQuery(query);
    let stmt = this.prepared.get(q.sql);
    if (!stmt) {
      stmt = this.client.prepare(q.sql);
      this.prepared.set(q.sql, stmt);
    }
    return { stmt, params: q.params.map(sqliteParam) };
  }

  all<T>(query: SQL): T[] {
    const { stmt, params } = this.statement(query);
    return stmt.all(...params) as T[];
  }

  one<T>(query: SQL): T | undefined {
    const { stmt, params } = this.statement(query);
    return stmt.get(...params) as T | undefined;
  }

  run(query: SQL): number {
    const { stmt, params } = this.statement(query);
    announceWrite(this.client);
    return stmt.run(...params).changes;
  }
}

export class SqliteDatabase implements SqlDatabase {
  readonly dialect = 'sqlite' as const;
  readonly forUpdate = sql``;
  readonly skipLocked = sql``;
  private readonly runner: SqliteRunner;

  constructor(readonly client: Database.Database) {
    this.runner = new SqliteRunner(client);
  }

  async all<T>(query: SQL): Promise<T[]> {
    return this.runner.all<T>(query);
  }

  /** The rows at once: only for the composition root, which opens a SQLite application synchronously. */
  allSync<T>(query: SQL): T[] {
    return this.runner.all<T>(query);
  }

  async one<T>(query: SQL): Promise<T | undefined> {
    return this.runner.one<T>(query);
  }

  async run(query: SQL): Promise<number> {
    return this.runner.run(query);
  }

  ilike(column: SQL, pattern: string): SQL {
    return sql`${column} LIKE ${pattern} ESCAPE '\\'`;
  }

  async transaction<T>(body: (tx: TxRunner) => TxSteps<T>, options: TransactionOptions = {}): Promise<T> {
    return this.transactionSync(body, options);
  }

  /**
   * The transaction, run to its end before this returns (the sync fast path and the async stores share it). Called
   * inside a transaction already open on this connection (a store's synchronous listener), it is a savepoint of it:
   * its failure rolls back only its own statements, and what it wrote commits or rolls back with the outer one.
   */
  transactionSync<T>(body: (tx: TxRunner) => TxSteps<T>, options: TransactionOptions = {}): T {
    const client = this.client;
    const r = this.runner;
    const tx: TxRunner = {
      dialect: 'sqlite',
      all: (q) => step(r.all(q)),
      one: (q) => step(r.one(q)),
      run: (q) => step(r.run(q)),
      // Every commit moves PRAGMA data_version for the other connections: that is the signal (see changes()).
      publish: () => step(undefined),
    };
    const nested = client.inTransaction;
    const begin = nested ? `SAVEPOINT swarm_tx` : options.readOnly ? 'BEGIN' : 'BEGIN IMMEDIATE';
    client.prepare(begin).run();
    try {
      const steps = body(tx);
      let next = steps.next();
      while (!next.done) {
        if (isPromise(next.value)) throw new TransactionWouldWait();
        next = steps.next(next.value);
      }
      client.prepare(nested ? 'RELEASE swarm_tx' : 'COMMIT').run();
      return next.value;
    } catch (error) {
      if (client.inTransaction) client.prepare(nested ? 'ROLLBACK TO swarm_tx' : 'ROLLBACK').run();
      if (nested && client.inTransaction) client.prepare('RELEASE swarm_tx').run();
      throw error;
    }
  }

  async changes(_channel: string, listener: () => void, options: { pollMs?: number } = {}): Promise<() => Promise<void>> {
    // data_version changes when another connection commits to the file (this connection's own writes call the listener
    // through their own code path: the store that wrote knows).
    const version = this.client.prepare('PRAGMA data_version').pluck();
    let seen = version.get() as number;
    const timer = setInterval(() => {
      try {
        const now = version.get() as number;
        if (now !== seen) {
          seen = now;
          listener();
        }
      } catch {
        // A closed database: the owner stops the feed as it closes.
      }
    }, options.pollMs ?? 250);
    timer.unref();
    return async () => clearInterval(timer);
  }
}

// ------------------------------------------------------------------------------------------------------------ PostgreSQL

const pgDialect = new PgDialect();

/** A channel name is an identifier in LISTEN: only what cannot need quoting. */
function channelName(channel: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`"${channel}" is not a channel name (lower case letters, digits and _).`);
  return channel;
}

async function pgQuery<T>(client: pg.Pool | pg.PoolClient, query: SQL): Promise<pg.QueryResult<T & pg.QueryResultRow>> {
  const q = pgDialect.sqlToQuery(query);
  return client.query<T & pg.QueryResultRow>(q.sql, q.params);
}

/** The statements of a transaction on one connection. */
function pgRunner(client: pg.PoolClient): TxRunner {
  return {
    dialect: 'postgres',
    all: <R>(q: SQL) => step(pgQuery<R>(client, q).then((r) => r.rows as R[])),
    one: <R>(q: SQL) => step(pgQuery<R>(client, q).then((r) => r.rows[0] as R | undefined)),
    run: (q) => step(pgQuery(client, q).then((r) => r.rowCount ?? 0)),
    publish: (channel) => step(client.query('SELECT pg_notify($1, $2)', [channelName(channel), '']).then(() => undefined)),
  };
}

async function drivePg<T>(steps: TxSteps<T>): Promise<T> {
  let next = steps.next();
  while (!next.done) {
    let value: unknown;
    try {
      value = await next.value;
    } catch (error) {
      next = steps.throw(error);
      continue;
    }
    next = steps.next(value);
  }
  return next.value;
}

export class PostgresDatabase implements SqlDatabase {
  readonly dialect = 'postgres' as const;
  readonly forUpdate = sql` FOR UPDATE`;
  readonly skipLocked = sql` FOR UPDATE SKIP LOCKED`;

  constructor(
    readonly pool: pg.Pool,
    /** SWARM_DB, for the message of a database that cannot be reached (without its password) */
    private readonly url = '',
  ) {}

  async all<T>(query: SQL): Promise<T[]> {
    return (await pgQuery<T>(this.pool, query)).rows;
  }

  async one<T>(query: SQL): Promise<T | undefined> {
    return (await pgQuery<T>(this.pool, query)).rows[0];
  }

  async run(query: SQL): Promise<number> {
    return (await pgQuery(this.pool, query)).rowCount ?? 0;
  }

  ilike(column: SQL, pattern: string): SQL {
    return sql`${column} ILIKE ${pattern} ESCAPE '\\'`;
  }

  transaction<T>(body: (tx: TxRunner) => TxSteps<T>, options: TransactionOptions = {}): Promise<T> {
    return inTransaction(
      this.pool,
      async ({ client }) => {
        if (options.serialise !== undefined) await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [options.serialise]);
        return drivePg(body(pgRunner(client)));
      },
      this.url,
      options.readOnly ? 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' : 'BEGIN',
    );
  }

  /**
   * Run a body on a connection that is already inside a transaction (a store that still holds its own, as the
   * approval store's listeners do): its statements commit or roll back with that transaction. The counterpart of
   * SqliteDatabase.transactionSync called inside an open transaction.
   */
  within<T>(client: pg.PoolClient, body: (tx: TxRunner) => TxSteps<T>): Promise<T> {
    return drivePg(body(pgRunner(client)));
  }

  /**
   * LISTEN on a connection of its own, outside the pool (held for the life of the feed). A connection that drops is
   * tried again every second; the listener is called once it is back, for what changed meanwhile.
   */
  async changes(channel: string, listener: () => void): Promise<() => Promise<void>> {
    const name = channelName(channel);
    let stopped = false;
    let client: pg.Client | undefined;
    let retry: NodeJS.Timeout | undefined;
    const connect = async (): Promise<void> => {
      const c = dedicatedClient(this.pool);
      c.on('notification', (n) => {
        if (n.channel === name) listener();
      });
      c.on('error', () => {
        if (client === c) client = undefined;
        void c.end().catch(() => undefined);
        again();
      });
      try {
        await c.connect();
        await c.query(`LISTEN ${name}`);
      } catch (error) {
        void c.end().catch(() => undefined);
        throw error;
      }
      if (stopped) {
        await c.end().catch(() => undefined);
        return;
      }
      client = c;
    };
    const again = (): void => {
      if (stopped || retry) return;
      retry = setTimeout(() => {
        retry = undefined;
        void connect().then(listener, again);
      }, 1_000);
      retry.unref();
    };
    await connect();
    return async () => {
      stopped = true;
      if (retry) clearTimeout(retry);
      const c = client;
      client = undefined;
      if (c) await c.end().catch(() => undefined);
    };
  }
}
