/**
 * The application of a process, opened on the database its options name (lib/server/sqlite.ts and
 * lib/server/postgres.ts build its side of lib/server/app.ts), and the server's one application (getApp). Callers import
 * these from lib/app.ts.
 */
import { parseDbLocation } from '@/db/location';
import type { App as AppOn, AppOptions, DatabaseSide } from './app';
import { createApp, type SqliteSide } from './sqlite';
import type { PostgresSide } from './postgres';

/** An application on either database, or, given its side, on one. */
export type App<S extends DatabaseSide = SqliteSide | PostgresSide> = AppOn<S>;
/** An application on SQLite (tests, the demo team, SQLite-only tools): opened synchronously. */
export type SqliteApp = AppOn<SqliteSide>;
/** An application on PostgreSQL. */
export type PostgresApp = AppOn<PostgresSide>;
export { createApp };

/**
 * The application SWARM_DB names: PostgreSQL for a postgres:// URL (asynchronous: it connects, migrates and loads
 * the flag overrides), SQLite otherwise.
 */
export async function openApp(options: AppOptions): Promise<App> {
  if (parseDbLocation(options.dbPath).kind === 'postgres') {
    // Loaded only when asked for: a SQLite process never loads the PostgreSQL driver.
    const { openPostgres } = await import('./postgres');
    const app = await openPostgres(options);
    await app.startChangeControl();
    return app;
  }
  const app = createApp(options);
  await app.startChangeControl();
  return app;
}

const GLOBAL_KEY = Symbol.for('swarm-permissions.app');
const SQLITE_KEY = Symbol.for('swarm-permissions.sqlite-app');
type GlobalWithApp = typeof globalThis & { [GLOBAL_KEY]?: Promise<App>; [SQLITE_KEY]?: SqliteApp };

function serverOptions(): AppOptions {
  return {
    dbPath: process.env.SWARM_DB ?? 'data/swarm.db',
    watchConfig: true,
    backgroundCheckpoints: true,
    sweepApprovals: true,
    enforcePolicyTests: true,
    server: true,
  };
}

/**
 * The server's one application, from the environment (SWARM_DB, SWARM_CONFIG_DIR, SWARM_POLICY_FILE). On SQLite it
 * is opened at once; on PostgreSQL the first request waits for the connection, and a start that failed (the database
 * unreachable) is tried again by the next request rather than remembered.
 */
export function getApp(): Promise<App> {
  const g = globalThis as GlobalWithApp;
  if (!g[GLOBAL_KEY]) {
    const options = serverOptions();
    if (parseDbLocation(options.dbPath).kind === 'sqlite') {
      const app = createApp(options);
      g[SQLITE_KEY] = app;
      // Nothing but SQLite statements: done before the next I/O event, so before the first request is read.
      g[GLOBAL_KEY] = app.bootstrap().then(() => app);
    } else {
      const opening = (async () => {
        const app = await openApp(options);
        await app.bootstrap();
        return app;
      })();
      g[GLOBAL_KEY] = opening;
      opening.catch(() => {
        if (g[GLOBAL_KEY] === opening) delete g[GLOBAL_KEY];
      });
    }
  }
  return g[GLOBAL_KEY];
}

/** The server's application when SWARM_DB is a SQLite file, synchronously (tests and SQLite-only tools). */
export function getSqliteApp(): SqliteApp {
  if (parseDbLocation(process.env.SWARM_DB ?? 'data/swarm.db').kind !== 'sqlite') throw new Error('SWARM_DB is not a SQLite file.');
  // (a start that fails is reported to getApp()'s callers)
  getApp().catch(() => undefined);
  return (globalThis as GlobalWithApp)[SQLITE_KEY]!;
}
