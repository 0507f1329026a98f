/** The application's import path for every caller: the App of the composition root (lib/server/app.ts), opened by lib/server/open.ts. */
export { createApp, getApp, getSqliteApp, openApp, type App, type PostgresApp, type SqliteApp } from './server/open';
export type { AppOptions, BackgroundStatus, StartupReport } from './server/app';
