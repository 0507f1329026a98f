/**
 * swarm db backup|check: running the database.
 *   backup FILE [--force]   an online backup (SQLite's backup API): a consistent copy while servers keep writing;
 *                           the public verifier key goes beside it, so that `swarm audit verify --db FILE` checks it
 *   check [--json]          integrity_check, foreign keys, migrations applied, and the audit chains verified
 */
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { migrationsFolder } from '@/db/client';
import { keyDirFor, readLocalVerifierKey } from '@/lib/audit/checkpoints';
import { verifyAudit, type VerifyReport } from '@/lib/audit/verify';
import { expectPositionals, parseCommand } from '@/cli/args';
import { dbPath, type CliContext } from '@/cli/context';
import { CliError, UsageError } from '@/cli/errors';
import { formatVerifyReport } from './audit';

export function dbCommand(ctx: CliContext, sub: string | undefined, args: string[]): number | Promise<number> {
  switch (sub) {
    case 'backup':
      return backup(ctx, args);
    case 'check':
      return check(ctx, args);
    default:
      throw new UsageError(sub ? `unknown command "db ${sub}".` : 'missing subcommand: swarm db backup|check.', [], true);
  }
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
    throw new CliError(`the backup failed: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    db.close();
  }
  // A single self-contained file: the copy in rollback-journal mode, no -wal or -shm beside it.
  const copy = new Database(partial);
  const integrity = copy.pragma('quick_check', { simple: true });
  copy.pragma('journal_mode = DELETE');
  copy.close();
  if (integrity !== 'ok') {
    rmSync(partial, { force: true });
    throw new CliError(`the copy does not pass quick_check: ${String(integrity)}`);
  }
  for (const suffix of ['-wal', '-shm', '-journal']) rmSync(`${out}${suffix}`, { force: true });
  renameSync(partial, out);
  // The public verifier key beside the copy (never the private key), unless one is there already.
  const key = readLocalVerifierKey(keyDirFor(source, ctx.env));
  const keyHere = join(keyDirFor(out, {}), 'audit-signing-key.pub');
  let keyNote = '';
  if (key && !existsSync(keyHere)) {
    copyFileSync(join(keyDirFor(source, ctx.env), 'audit-signing-key.pub'), keyHere);
    keyNote = ` The public verifier key is beside it (${keyHere}).`;
  } else if (key && existsSync(keyHere) && readFileSync(keyHere, 'utf8').trim() !== key) {
    keyNote = ` Note: ${keyHere} is another installation's key; verify with --public-key.`;
  }
  ctx.io.out(`Backed up ${source} to ${target} (${pages} pages).${keyNote} Check it with: swarm audit verify --db ${target}\n`);
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

/** The migrations this version ships (db/migrations/meta/_journal.json), in order. */
function shippedMigrations(): { tag: string; when: number }[] {
  const file = join(migrationsFolder(), 'meta', '_journal.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { entries: { tag: string; when: number }[] }).entries;
}

function check(ctx: CliContext, args: string[]): number {
  const { values, positionals } = parseCommand(args, { json: { type: 'boolean' } });
  expectPositionals(positionals, []);
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
      audit = verifyAudit(db, readLocalVerifierKey(keyDirFor(file, ctx.env)));
    } catch (error) {
      audit = { ok: false, error: `the chains could not be verified: ${error instanceof Error ? error.message : String(error)}` };
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
  if (values.json) {
    ctx.io.out(`${JSON.stringify(report, null, 2)}\n`);
    return report.ok ? 0 : 1;
  }
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
