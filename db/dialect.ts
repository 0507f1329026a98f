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
 * - free text (`textMatch`, `textPage`, `indexText`): SQLite's FTS5 trigram index, filled behind the writes, and a scan
 *   of the rows it does not hold yet; PostgreSQL's own ILIKE over the rows. `jsonLines` writes JSON as a search sees it.
 * - small differences of SQL: the integer part of a number (`truncate`), text in byte order (`bytewise`), a prefix
 *   that keeps the index (`startsWith`), a column the planner must not drive a query by (`unindexed`).
 * - counts kept ahead of reads (`countsAhead`): on SQLite, where a GROUP BY over a million rows takes seconds; on
 *   PostgreSQL counted when read (no write from a read).
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
import { BoundedCache } from '@/lib/permissions/bounded-cache';
import { dedicatedClient, inTransaction } from './pg/client';
import { announceWrite } from './write-intent';
import { brand } from '@/lib/errors';
import { isPromise, type Step } from '@/lib/permissions/steps';

export type DialectName = 'sqlite' | 'postgres';

/** A value a statement answers: at once inside a SQLite transaction, a promise on PostgreSQL (one type, the engine's). */
export type { Step };

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

/**
 * A transaction of the port with the connection it runs on, as its own database sees it: for the modules that stay one
 * per database (the audit chain's append, lib/audit) to write inside a transaction that a store written once opened,
 * so that what they write commits or rolls back with it. Nothing else reaches past the port.
 */
export interface SqliteTx extends TxRunner {
  readonly dialect: 'sqlite';
  readonly client: Database.Database;
}

/** See SqliteTx: a transaction of the port on PostgreSQL, with the pooled connection it holds. */
export interface PostgresTx extends TxRunner {
  readonly dialect: 'postgres';
  readonly client: pg.PoolClient;
}

/** The transaction as SQLite's own (its connection); throws for a transaction of another database. */
export function sqliteTx(tx: TxRunner): SqliteTx {
  if (tx.dialect !== 'sqlite' || !('client' in tx)) throw new Error('This is not a transaction of a SQLite database.');
  return tx as SqliteTx;
}

/** The transaction as PostgreSQL's own (its connection); throws for a transaction of another database. */
export function postgresTx(tx: TxRunner): PostgresTx {
  if (tx.dialect !== 'postgres' || !('client' in tx)) throw new Error('This is not a transaction of a PostgreSQL database.');
  return tx as PostgresTx;
}

/**
 * The advisory lock of a `serialise` key: a number is the lock itself (a key earlier releases took by number, kept so
 * that servers of two releases still exclude each other during a rolling upgrade), a name is hashed.
 */
export function advisoryLockSql(key: string | number): string {
  return typeof key === 'number' ? 'SELECT pg_advisory_xact_lock($1)' : 'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))';
}

export interface TransactionOptions {
  /**
   * A key whose transactions must run one at a time across every process and server (a user's sign-in attempts, a
   * chain's head): an advisory lock on PostgreSQL; on SQLite the writer lock of BEGIN IMMEDIATE already does it.
   */
  serialise?: string | number;
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
  /** the integer part of a number, toward zero (SQLite's CAST AS INTEGER; a PostgreSQL cast would round) */
  truncate(value: SQL): SQL;
  /** text that compares and sorts in byte order, whatever the database's collation (SQLite's BINARY, PostgreSQL's "C") */
  bytewise(text: SQL): SQL;
  /** `column` starts with `prefix`, case and all, in byte order; SQLite reads it as a range of the column's index */
  startsWith(column: SQL, prefix: string): SQL;
  /**
   * The column, for a condition the planner must not drive the query by (SQLite's unary +: a time or id range must
   * drive instead of, say, an agent index that visits every row of that agent). PostgreSQL plans from statistics.
   */
  unindexed(column: SQL): SQL;
  /**
   * Whether aggregates over the audit trail are counted ahead into tables kept beside it (SQLite: one writer, no
   * parallel scan, a GROUP BY over a million rows takes seconds) or counted from the rows when read (PostgreSQL).
   */
  readonly countsAhead: boolean;
  /**
   * A JSON text as a search sees it: every key and value below the root, depth first in document order, one per line,
   * a key quoted and followed by `: `, an object or array shown as `{` or `[`, a scalar as the JSON writes it. NULL for
   * NULL and for a value with nothing below its root; on SQLite the text itself when it is not JSON.
   */
  jsonLines(column: SQL): SQL;
  /**
   * The rows of `index.table` whose text contains `text` ignoring case (at least MIN_TEXT_MATCH characters): through
   * SQLite's index up to where it goes and a scan of the newer rows, so always exact; ILIKE over the rows on PostgreSQL.
   */
  textMatch(index: TextIndex, text: string): SQL;
  /**
   * One page of the rows (the columns `page.select`) that contain `text` and satisfy `page.where`, in key order. SQLite
   * walks its index in key order and stops at the page's end: `key IN (every match)` would first collect every match.
   */
  textPage<T>(index: TextIndex, text: string, page: TextPageOptions): Promise<T[]>;
  /**
   * Bring the free-text index up to the newest rows, at most `maxRows` of them, in one transaction; returns how many it
   * indexed. Several processes may at once: each indexes what the one before left. Nothing to do on PostgreSQL.
   */
  indexText(index: TextIndex, maxRows?: number): Promise<number>;
}

/** The shortest text a trigram index can look up (SQLite's FTS5 trigram tokenizer); shorter text is the caller's LIKE. */
export const MIN_TEXT_MATCH = 3;

/**
 * What free text searches: a table with an integer key, the text of each row in named columns. On SQLite a contentless
 * FTS5 table (trigram tokenizer) with the same column names holds that text by the row's key, and a one-row table
 * (id 0, indexed_up_to) says how far it goes; both are created by a migration.
 */
export interface TextIndex {
  table: string;
  key: string;
  /** the searched text of a row, by column: SQL over the table's own columns, qualified by the table's name */
  columns: readonly { name: string; text: SQL }[];
  /** SQLite: the FTS5 table and its progress table */
  fts: string;
  progress: string;
}

export interface TextPageOptions {
  /** the columns of a row to return */
  select: SQL;
  /** the other conditions of the page, over the table's columns qualified by its name */
  where?: SQL;
  order: 'asc' | 'desc';
  limit: number;
}

/** `text` as a LIKE pattern that matches it literally anywhere (%, _ and the escape character itself escaped). */
export function likeContains(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** An FTS5 query matching `text` literally (one quoted string: with the trigram tokenizer, a case-insensitive substring). */
export function ftsPhrase(text: string): string {
  return `"${text.replace(/"/g, '""')}"`;
}

const keyOf = (index: TextIndex): SQL => sql`${sql.identifier(index.table)}.${sql.identifier(index.key)}`;
const orderOf = (order: 'asc' | 'desc'): SQL => (order === 'asc' ? sql`ASC` : sql`DESC`);
const andWhere = (where: SQL | undefined): SQL => (where ? sql` AND ${where}` : sql``);

/** Any of the index's columns LIKE `pattern` (escaped with `\`), through `like` (LIKE or ILIKE). */
function anyColumnLike(index: TextIndex, pattern: string, like: (column: SQL, pattern: string) => SQL): SQL {
  return sql`(${sql.join(
    index.columns.map((c) => like(c.text, pattern)),
    sql` OR `,
  )})`;
}

/** A prefix as a range: [prefix, the prefix with its last code unit the next one), exactly the values that start with it. */
function prefixRange(prefix: string): [string, string] | undefined {
  const last = prefix.charCodeAt(prefix.length - 1);
  // A surrogate or the last code unit has no next one that keeps UTF-8 order: the caller compares the prefix itself.
  if (prefix.length === 0 || (last >= 0xd800 && last <= 0xdfff) || last === 0xffff) return undefined;
  return [prefix, prefix.slice(0, -1) + String.fromCharCode(last + 1)];
}

/** A transaction body on SQLite waited for something: refused, since it would hold the writer lock across the wait. */
export class TransactionWouldWait extends Error {
  static readonly kind = 'TransactionWouldWait';
  readonly code = 'TRANSACTION_WOULD_WAIT';
  constructor() {
    super('A SQLite transaction body waited for a promise: a transaction may only run statements (it holds the writer lock).');
    brand(this, TransactionWouldWait);
  }
}

/**
 * One step of a transaction body, typed: yields the statement's answer and returns it. Also how a body waits for a
 * per-database module's answer (at once on SQLite, a promise on PostgreSQL): `yield* step(recorder.recordWithin(tx, e))`.
 */
export function* step<T>(value: Step<T>): TxSteps<T> {
  return (yield value) as T;
}

// ---------------------------------------------------------------------------------------------------------------- SQLite

const sqliteDialect = new SQLiteSyncDialect();
/** Statements kept prepared per connection, by their text (the stores' queries are a bounded set of texts). */
const MAX_PREPARED = 500;

/** better-sqlite3 binds numbers, strings, bigints, buffers and null; a boolean is stored as 0 or 1. */
const sqliteParam = (p: unknown): unknown => (typeof p === 'boolean' ? (p ? 1 : 0) : p);

export class SqliteDatabase implements SqlDatabase {
  readonly dialect = 'sqlite' as const;
  readonly forUpdate = sql``;
  readonly skipLocked = sql``;
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

  async all<T>(query: SQL): Promise<T[]> {
    return this.allSync<T>(query);
  }

  /** The rows at once: for the composition root, which opens a SQLite application synchronously, and transactions. */
  allSync<T>(query: SQL): T[] {
    const { stmt, params } = this.statement(query);
    return stmt.all(...params) as T[];
  }

  async one<T>(query: SQL): Promise<T | undefined> {
    return this.oneSync<T>(query);
  }

  private oneSync<T>(query: SQL): T | undefined {
    const { stmt, params } = this.statement(query);
    return stmt.get(...params) as T | undefined;
  }

  async run(query: SQL): Promise<number> {
    return this.runSync(query);
  }

  private runSync(query: SQL): number {
    const { stmt, params } = this.statement(query);
    announceWrite(this.client);
    return stmt.run(...params).changes;
  }

  ilike(column: SQL, pattern: string): SQL {
    return sql`${column} LIKE ${pattern} ESCAPE '\\'`;
  }

  readonly countsAhead = true;

  truncate(value: SQL): SQL {
    return sql`CAST(${value} AS INTEGER)`;
  }

  bytewise(text: SQL): SQL {
    return text;
  }

  startsWith(column: SQL, prefix: string): SQL {
    const range = prefixRange(prefix);
    if (!range) return sql`substr(${column}, 1, ${[...prefix].length}) = ${prefix}`;
    return sql`(${column} >= ${range[0]} AND ${column} < ${range[1]})`;
  }

  unindexed(column: SQL): SQL {
    return sql`+${column}`;
  }

  jsonLines(column: SQL): SQL {
    // The expression of the migration that built the search index (db/migrations/0006_denial_search.sql).
    return sql`CASE WHEN ${column} IS NULL THEN NULL WHEN json_valid(${column}) THEN (
      SELECT group_concat(
        CASE WHEN typeof(j.key) = 'text' THEN json_quote(j.key) || ': ' ELSE '' END ||
        CASE j.type WHEN 'object' THEN '{' WHEN 'array' THEN '[' WHEN 'text' THEN json_quote(j.value)
          WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' WHEN 'null' THEN 'null' ELSE CAST(j.value AS TEXT) END,
        char(10))
      FROM json_tree(${column}) AS j WHERE j.key IS NOT NULL
    ) ELSE ${column} END`;
  }

  /** The rows the index does not hold yet whose text contains `pattern` (LIKE, escaped with `\`). */
  private unindexedMatch(index: TextIndex, pattern: string): SQL {
    const indexedUpTo = sql`(SELECT indexed_up_to FROM ${sql.identifier(index.progress)} WHERE id = 0)`;
    return sql`(${keyOf(index)} > ${indexedUpTo} AND ${anyColumnLike(index, pattern, (c, p) => this.ilike(c, p))})`;
  }

  textMatch(index: TextIndex, text: string): SQL {
    const fts = sql.identifier(index.fts);
    return sql`(${keyOf(index)} IN (SELECT rowid FROM ${fts} WHERE ${fts} MATCH ${ftsPhrase(text)}) OR ${this.unindexedMatch(index, likeContains(text))})`;
  }

  async textPage<T>(index: TextIndex, text: string, page: TextPageOptions): Promise<T[]> {
    const fts = sql.identifier(index.fts);
    const table = sql.identifier(index.table);
    const key = keyOf(index);
    const dir = orderOf(page.order);
    const indexed = this.allSync<{ k: number }>(
      sql`SELECT ${key} AS k FROM ${fts} CROSS JOIN ${table} ON ${key} = ${fts}.rowid
          WHERE ${fts} MATCH ${ftsPhrase(text)}${andWhere(page.where)} ORDER BY ${fts}.rowid ${dir} LIMIT ${page.limit}`,
    );
    // The rows written since the index last moved (a second's worth in a running server): scanned, then merged.
    const recent = this.allSync<{ k: number }>(
      sql`SELECT ${key} AS k FROM ${table} WHERE ${this.unindexedMatch(index, likeContains(text))}${andWhere(page.where)} ORDER BY ${key} ${dir} LIMIT ${page.limit}`,
    );
    const keys = [...new Set([...indexed, ...recent].map((r) => r.k))].sort((a, b) => (page.order === 'asc' ? a - b : b - a)).slice(0, page.limit);
    if (keys.length === 0) return [];
    return this.allSync<T>(
      sql`SELECT ${page.select} FROM ${table} WHERE ${key} IN (${sql.join(
        keys.map((k) => sql`${k}`),
        sql`, `,
      )}) ORDER BY ${key} ${dir}`,
    );
  }

  async indexText(index: TextIndex, maxRows = 5_000): Promise<number> {
    const table = sql.identifier(index.table);
    const progress = sql.identifier(index.progress);
    const key = keyOf(index);
    return this.transactionSync(function* (tx: TxRunner): TxSteps<number> {
      const from = (yield* tx.one<{ n: number }>(sql`SELECT indexed_up_to AS n FROM ${progress} WHERE id = 0`))?.n ?? 0;
      const last = yield* tx.one<{ n: number | null }>(sql`SELECT max(k) AS n FROM (SELECT ${key} AS k FROM ${table} WHERE ${key} > ${from} ORDER BY ${key} LIMIT ${maxRows})`);
      const upTo = last?.n ?? null;
      if (upTo === null) return 0;
      const names = sql.join(
        index.columns.map((c) => sql.identifier(c.name)),
        sql`, `,
      );
      const texts = sql.join(
        index.columns.map((c) => c.text),
        sql`, `,
      );
      const n = yield* tx.run(sql`INSERT INTO ${sql.identifier(index.fts)} (rowid, ${names}) SELECT ${key}, ${texts} FROM ${table} WHERE ${key} > ${from} AND ${key} <= ${upTo}`);
      yield* tx.run(sql`UPDATE ${progress} SET indexed_up_to = ${upTo} WHERE id = 0`);
      return n;
    });
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
    const tx: SqliteTx = {
      dialect: 'sqlite',
      client,
      all: (q) => step(this.allSync(q)),
      one: (q) => step(this.oneSync(q)),
      run: (q) => step(this.runSync(q)),
      // Every commit moves PRAGMA data_version for the other connections: that is the signal (see changes()).
      publish: () => step(undefined),
    };
    // A write intent (db/write-intent.ts): a transaction opened while the decision listener decides a group joins the
    // group's transaction (as a savepoint of it) instead of committing on its own.
    if (!options.readOnly) announceWrite(client);
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
function pgRunner(client: pg.PoolClient): PostgresTx {
  return {
    dialect: 'postgres',
    client,
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

  readonly countsAhead = false;

  truncate(value: SQL): SQL {
    return sql`trunc(${value})::bigint`;
  }

  bytewise(text: SQL): SQL {
    return sql`${text} COLLATE "C"`;
  }

  startsWith(column: SQL, prefix: string): SQL {
    return sql`starts_with(${column}, ${prefix})`;
  }

  unindexed(column: SQL): SQL {
    return column;
  }

  jsonLines(column: SQL): SQL {
    // As SQLite's json_tree gives it: a recursive walk of objects and arrays, ordered by the path of ordinals.
    return sql`(SELECT string_agg(
        CASE WHEN a.key IS NULL THEN '' ELSE to_json(a.key)::text || ': ' END ||
        CASE json_typeof(a.value) WHEN 'object' THEN '{' WHEN 'array' THEN '[' ELSE a.value::text END,
        chr(10) ORDER BY a.path)
      FROM (
        WITH RECURSIVE tree(path, key, value) AS (
          SELECT ARRAY[]::bigint[], NULL::text, ${column}::json
          UNION ALL
          SELECT tree.path || e.ord, e.key, e.value FROM tree CROSS JOIN LATERAL (
            SELECT o.key, o.value, o.ord FROM json_each(CASE WHEN json_typeof(tree.value) = 'object' THEN tree.value END) WITH ORDINALITY AS o(key, value, ord)
            UNION ALL
            SELECT NULL, i.value, i.ord FROM json_array_elements(CASE WHEN json_typeof(tree.value) = 'array' THEN tree.value END) WITH ORDINALITY AS i(value, ord)
          ) AS e
        )
        SELECT * FROM tree WHERE cardinality(tree.path) > 0
      ) AS a)`;
  }

  textMatch(index: TextIndex, text: string): SQL {
    // In the index's column order: PostgreSQL evaluates OR from the left, so with the costly text last (the arguments'
    // JSON walk) a row found by a cheap column skips it.
    return anyColumnLike(index, likeContains(text), (c, p) => this.ilike(c, p));
  }

  async textPage<T>(index: TextIndex, text: string, page: TextPageOptions): Promise<T[]> {
    const key = keyOf(index);
    return this.all<T>(
      sql`SELECT ${page.select} FROM ${sql.identifier(index.table)} WHERE ${this.textMatch(index, text)}${andWhere(page.where)}
          ORDER BY ${key} ${orderOf(page.order)} LIMIT ${page.limit}`,
    );
  }

  async indexText(): Promise<number> {
    return 0;
  }

  transaction<T>(body: (tx: TxRunner) => TxSteps<T>, options: TransactionOptions = {}): Promise<T> {
    return inTransaction(
      this.pool,
      async ({ client }) => {
        if (options.serialise !== undefined) await client.query(advisoryLockSql(options.serialise), [options.serialise]);
        return drivePg(body(pgRunner(client)));
      },
      this.url,
      options.readOnly ? 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' : 'BEGIN',
    );
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
