/** The application's import path for every caller: it is built in the composition root, lib/server/app.ts. */
export { App, createApp, getApp, getSqliteApp, openApp, type AppOptions, type BackgroundStatus, type PostgresApp, type SqliteApp, type StartupReport } from './server/app';
