/**
 * Opening the database: one place for the file, the pragmas and the migrations.
 * WAL mode; `synchronous` NORMAL by default (a committed row survives a killed process; a power loss may cost the
 * last transactions), FULL with SWARM_DB_SYNC=full (survives a power loss, slower).
 */
import Database from 'better-sqlite3';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as schema from './schema';

export type Db = BetterSQLite3Database<typeof schema> & { $client: Database.Database };

export type SyncMode = 'normal' | 'full';

export const PAGE_SIZE = 2048;

/**
 * The inline checkpoint threshold of processes that run a background checkpointer: about 200 MB of log with 2 KiB
 * pages. Lower values let a busy moment of the checkpointer push the checkpoint back onto the writers (measured:
 * ~30,000 durable denials/s at 20,000 pages against ~34,000 at 100,000; ~23,000 against ~29,000 beside a busy reader).
 * The log is truncated back to 64 MB once a checkpoint completes.
 */
export const SERVER_WAL_AUTOCHECKPOINT_PAGES = 100_000;

export interface OpenOptions {
  /** file path, or ':memory:' (tests of pure SQL only) */
  path: string;
  sync?: SyncMode;
  /** run migrations (default true) */
  migrate?: boolean;
  /**
   * Pages of log after which a commit checkpoints inline (SQLite's default is 1000). Processes with a background
   * checkpointer raise it to a safety net that only matters if the checkpointer falls far behind.
   */
  walAutocheckpointPages?: number;
}

/** Where the committed migrations live: the source tree's db/migrations (the server and the CLI run from the root). */
export function migrationsFolder(): string {
  const fromCwd = join(process.cwd(), 'db', 'migrations');
  if (process.env.SWARM_MIGRATIONS_DIR) return process.env.SWARM_MIGRATIONS_DIR;
  if (existsSync(fromCwd)) return fromCwd;
  return join(dirname(fileURLToPath(import.meta.url)), 'migrations');
}

export function openDatabase(options: OpenOptions): Db {
  if (options.path !== ':memory:') mkdirSync(dirname(resolve(options.path)), { recursive: true });
  const sqlite = new Database(options.path);
  // 2 KiB pages for a new database (an existing one keeps its size): every denial is its own commit, and a commit writes
  // each page it changed (the row and four index entries) to the log. Measured (bench/denials.ts): about 32,000
  // durable denials/s against 25,000 with 4 KiB pages; full scans of the explorer's free-text search get ~30% slower.
  sqlite.pragma(`page_size = ${PAGE_SIZE}`);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`synchronous = ${options.sync === 'full' ? 'FULL' : 'NORMAL'}`);
  // Another process (the CLI, the demo team) may hold the write lock for a moment: wait instead of failing.
  sqlite.pragma('busy_timeout = 10000');
  sqlite.pragma('foreign_keys = ON');
  if (options.walAutocheckpointPages !== undefined) sqlite.pragma(`wal_autocheckpoint = ${Math.max(0, Math.floor(options.walAutocheckpointPages))}`);
  // After a checkpoint resets the log, give disk space back beyond 64 MB.
  sqlite.pragma('journal_size_limit = 67108864');
  const db = drizzle(sqlite, { schema }) as Db;
  if (options.migrate !== false) migrateDatabase(db);
  return db;
}

export function migrateDatabase(db: Db): void {
  // Two processes starting at once both try to migrate; the loser waits on the busy timeout and finds nothing to do.
  migrate(db, { migrationsFolder: migrationsFolder() });
}
