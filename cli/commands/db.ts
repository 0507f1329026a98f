/**
 * swarm db backup|check|migrate|copy: running the database.
 *   backup FILE [--force]   an online backup (SQLite's backup API): a consistent copy while servers keep writing;
 *                           the public verifier key goes beside it (`swarm audit verify --db FILE --public-key` trusts
 *                           only the key it is given or the pinned ones, never one found beside a file)
 *   check [--json]          integrity_check, foreign keys, migrations applied, and the audit chains verified
 *   migrate [--db FILE|URL] apply the committed migrations (SQLite or PostgreSQL)
 *   copy --from FILE --to URL [--public-key FILE]   move a SQLite trail to an empty PostgreSQL database, then verify it
 */
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { migrationsFolder, openDatabase } from '@/db/client';
import { DatabaseUnavailable, migratePostgres, openPool, pgMigrationsFolder } from '@/db/pg/client';
import { copySqliteToPostgres, CopyRefused } from '@/db/pg/copy';
import { SqliteDatabase } from '@/db/dialect';
import { SqliteCheckpointer, hasSigningKey, keyDirFor, loadSigningKey, trustedVerifierKeys } from '@/lib/audit/trail/checkpoints';
import { verifyAudit, type VerifyReport } from '@/lib/audit/trail/verify';
import { expectPositionals, parseCommand, parseOptions, runSubcommand } from '@/cli/args';
import { dbLocation, dbPath, type CliContext } from '@/cli/context';
import { CliError, UsageError } from '@/cli/errors';
import { printJson } from '@/cli/format';
import { formatVerifyReport } from './audit';
import { messageOf, isError } from '@/lib/errors';

export function dbCommand(ctx: CliContext, sub: string | undefined, args: string[]): number | Promise<number> {
  return runSubcommand<number | Promise<number>>(ctx, 'db', sub, args, { backup, check, migrate: migrateCommand, copy });
}

function openExisting(file: string, readonly: boolean): Database.Database {
  if (!existsSync(file)) throw new CliError(`there is no database at ${file}.`);
  const db = new Database(file, { readonly, fileMustExist: true });
  db.pragma('busy_timeout = 10000');
  return db;
}

async function backup(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, { force: { type: 'boolean' } });
  const [target] = expectPositionals(positionals, ['FILE']);
  const source = dbPath(ctx.env);
  const out = resolve(target!);
  if (out === resolve(source)) throw new CliError('the backup must go to another file than the database itself.');
  if (existsSync(out) && !values.force) throw new CliError(`${target} exists; give --force to replace it.`);
  const db = openExisting(source, false);
  const partial = `${out}.partial-${process.pid}`;
  mkdirSync(dirname(out), { recursive: true });
  let pages = 0;
  try {
    // The backup API copies one committed state of the database (the audit chains in it are whole); a step that sees
    // another connection's write starts over. Servers write all the time, so after the first step the rest is copied
    // in one step, under one read snapshot of the WAL: writers are not blocked and the copy cannot be overtaken.
    await db.backup(partial, {
      progress: ({ totalPages }) => {
        pages = totalPages;
        return 2_000_000_000;
      },
    });
  } catch (error) {
    rmSync(partial, { force: true });
    throw new CliError(`the backup failed: ${messageOf(error)}`);
  } finally {
    db.close();
  }
  // A single self-contained file: the copy in rollback-journal mode, no -wal or -shm beside it.
  const copy = new Database(partial);
  const integrity = copy.pragma('quick_check', { simple: true });
  copy.pragma('journal_mode = DELETE');
  // The rows the copy ends with go under a checkpoint of its own head (a true prefix of the live chain, signed with
  // the installation's key when this process has it): verified later, the copy has no tail left unsigned.
  const keyDir = keyDirFor(source, ctx.env);
  if (integrity === 'ok' && hasSigningKey(keyDir)) new SqliteCheckpointer(new SqliteDatabase(copy), loadSigningKey(keyDir)).checkpoint();
  copy.close();
  if (integrity !== 'ok') {
    rmSync(partial, { force: true });
    throw new CliError(`the copy does not pass quick_check: ${String(integrity)}`);
  }
  for (const suffix of ['-wal', '-shm', '-journal']) rmSync(`${out}${suffix}`, { force: true });
  renameSync(partial, out);
  // The public verifier key beside the copy (never the private key), unless one is there already.
  const key = trustedVerifierKeys(keyDir, ctx.env);
  const keyHere = join(keyDirFor(out, {}), 'audit-signing-key.pub');
  let keyNote = '';
  if (key && !existsSync(keyHere)) {
    copyFileSync(join(keyDir, 'audit-signing-key.pub'), keyHere);
    keyNote = ` The public verifier key is beside it (${keyHere}).`;
  } else if (key && existsSync(keyHere) && readFileSync(keyHere, 'utf8').trim() !== key) {
    keyNote = ` Note: ${keyHere} is another installation's key; verify with --public-key.`;
  }
  ctx.io.out(`Backed up ${source} to ${target} (${pages} pages).${keyNote} Check it with: swarm audit verify --db ${target} --public-key <the installation's key, kept elsewhere>\n`);
  return 0;
}

interface CheckReport {
  ok: boolean;
  integrity: string[];
  foreignKeyViolations: { table: string; rowid: number | null; parent: string }[];
  migrations: { expected: number; applied: number; missing: string[] };
  /** the verification of the audit chains, or why it could not run (an unmigrated database) */
  audit: VerifyReport | { ok: false; error: string };
}

/** The migrations a dialect ships (its meta/_journal.json; by default SQLite's, db/migrations), in order. */
function shippedMigrations(folder = migrationsFolder()): { tag: string; when: number }[] {
  return (JSON.parse(readFileSync(join(folder, 'meta', '_journal.json'), 'utf8')) as { entries: { tag: string; when: number }[] }).entries;
}

function check(ctx: CliContext, args: string[]): number {
  const values = parseOptions(args, { json: { type: 'boolean' } });
  const file = dbPath(ctx.env);
  const db = openExisting(file, true);
  let report: CheckReport;
  try {
    const integrity = (db.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check);
    const fk = db.pragma('foreign_key_check') as { table: string; rowid: number | null; parent: string }[];
    const shipped = shippedMigrations();
    const hasTable = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get() !== undefined;
    const applied = hasTable ? (db.prepare('SELECT created_at FROM __drizzle_migrations').all() as { created_at: number }[]).map((r) => Number(r.created_at)) : [];
    const appliedSet = new Set(applied);
    const missing = shipped.filter((m) => !appliedSet.has(m.when)).map((m) => m.tag);
    let audit: CheckReport['audit'];
    try {
      audit = verifyAudit(db, trustedVerifierKeys(keyDirFor(file, ctx.env), ctx.env));
    } catch (error) {
      audit = { ok: false, error: `the chains could not be verified: ${messageOf(error)}` };
    }
    report = {
      ok: integrity.length === 1 && integrity[0] === 'ok' && fk.length === 0 && missing.length === 0 && audit.ok,
      integrity,
      foreignKeyViolations: fk.map((v) => ({ table: v.table, rowid: v.rowid, parent: v.parent })),
      migrations: { expected: shipped.length, applied: applied.length, missing },
      audit,
    };
  } finally {
    db.close();
  }
  if (values.json) return printJson(ctx.io, report, report.ok ? 0 : 1);
  const mark = (ok: boolean) => (ok ? 'ok  ' : 'FAIL');
  const lines = [
    `${mark(report.integrity[0] === 'ok' && report.integrity.length === 1)} integrity_check: ${report.integrity.slice(0, 5).join('; ')}${report.integrity.length > 5 ? ` (+${report.integrity.length - 5} more)` : ''}`,
    `${mark(report.foreignKeyViolations.length === 0)} foreign keys: ${report.foreignKeyViolations.length === 0 ? 'no violations' : report.foreignKeyViolations.slice(0, 5).map((v) => `${v.table} row ${v.rowid} -> ${v.parent}`).join('; ')}`,
    `${mark(report.migrations.missing.length === 0)} migrations: ${report.migrations.applied} of ${report.migrations.expected} applied${report.migrations.missing.length ? `; missing ${report.migrations.missing.join(', ')} (a server start applies them)` : ''}`,
    `${mark(report.audit.ok)} audit chains:`,
    ...('error' in report.audit ? report.audit.error : formatVerifyReport(report.audit)).trimEnd().split('\n').map((l) => `       ${l}`),
  ];
  ctx.io.out(`${lines.join('\n')}\n${report.ok ? 'The database is healthy.' : 'The database has problems (see FAIL above).'}\n`);
  return report.ok ? 0 : 1;
}

/** `swarm db migrate [--db FILE|URL]`: apply the committed migrations; servers do it at start, this does it ahead. */
async function migrateCommand(ctx: CliContext, args: string[]): Promise<number> {
  const values = parseOptions(args, { db: { type: 'string' } });
  const where = dbLocation(ctx.env, values.db);
  if (where.kind === 'sqlite') {
    openDatabase({ path: where.path }).$client.close();
    ctx.io.out(`${where.path}: migrated (${shippedMigrations().length} migrations in this version).\n`);
    return 0;
  }
  const pool = openPool({ url: where.url, max: 2 });
  try {
    await migratePostgres(pool, where.url);
  } catch (error) {
    if (isError(error, DatabaseUnavailable)) throw new CliError(error.message);
    throw error;
  } finally {
    await pool.end();
  }
  ctx.io.out(`${where.shown}: migrated (${shippedMigrations(pgMigrationsFolder()).length} migrations in this version).\n`);
  return 0;
}

/** `swarm db copy --from FILE.db --to postgres://...`: the whole trail, ids and hashes unchanged, then verified there. */
async function copy(ctx: CliContext, args: string[]): Promise<number> {
  const values = parseOptions(args, { from: { type: 'string' }, to: { type: 'string' }, 'public-key': { type: 'string' }, json: { type: 'boolean' } });
  if (!values.from || !values.to) throw new UsageError('give --from FILE.db (the SQLite database) and --to postgres://USER:PASSWORD@HOST:5432/DB (an empty database).');
  const from = dbLocation(ctx.env, values.from);
  const to = dbLocation(ctx.env, values.to);
  if (from.kind !== 'sqlite') throw new UsageError('--from is a SQLite database file.');
  if (to.kind !== 'postgres') throw new UsageError('--to is a PostgreSQL URL: postgres://USER:PASSWORD@HOST:5432/DB.');
  if (!existsSync(from.path)) throw new CliError(`there is no database at ${from.path}.`);
  const key = values['public-key'] ? readFileSync(values['public-key'], 'utf8') : trustedVerifierKeys(keyDirFor(from.path, ctx.env), ctx.env);
  const pool = openPool({ url: to.url, max: 2, statementTimeoutMs: 600_000 });
  let report;
  try {
    await migratePostgres(pool, to.url);
    report = await copySqliteToPostgres(from.path, pool, key);
  } catch (error) {
    if (isError(error, DatabaseUnavailable) || isError(error, CopyRefused)) throw new CliError(error.message);
    throw error;
  } finally {
    await pool.end();
  }
  const ok = report.target.ok && report.headsMatch;
  if (values.json) return printJson(ctx.io, { ok, ...report }, ok ? 0 : 1);
  const lines = [`Copied ${from.path} to ${to.shown}:`, ...report.tables.filter((t) => t.rows > 0).map((t) => `  ${t.table}: ${t.rows} rows`)];
  if (!report.source.ok) lines.push('Note: the source itself does not verify (see swarm audit verify --db FILE); its rows were copied as they are.');
  lines.push(`On PostgreSQL: ${formatVerifyReport(report.target, {}).trim()}`);
  lines.push(report.headsMatch ? 'Both chains end at the same row and hash as in the source.' : 'FAILED: the chains on PostgreSQL do not end where the source ends.');
  ctx.io.out(`${lines.join('\n')}\n`);
  return ok ? 0 : 1;
}
