/**
 * What the report reads, as a port: SQL against the audit tables, the verification of the chains, and the few facts
 * that are not rows (the active profiles, the flags in force, the policy revision, the verifier key). The gatherer
 * (data.ts) is written once against it; SQLite (here) and PostgreSQL (pg-reader.ts) each implement it, so the same
 * trail gives the same report on either database (report-contract.test.ts).
 *
 * Queries are written once, in the SQL both databases speak, with `?` placeholders. The one thing that cannot be said
 * portably is SQLite's planner hint (see `unindexed`).
 */
import type Database from 'better-sqlite3';
import type { Db } from '@/db/client';
import type { App, SwarmApp } from '@/lib/app';
import { keyDirFor, trustedVerifierKeys } from '@/lib/audit/checkpoints';
import { catchUpIfBehind } from '@/lib/audit/denials/rollup';
import { SqliteDatabase } from '@/db/dialect';
import { type VerifyRange, type VerifyReport } from '@/lib/audit/verify';
import { verifyAuditInParallel } from '@/lib/audit/verify-parallel';
import { configuredWitnessed, type WitnessedCheckpoint } from '@/lib/audit/witness';
import type { FlagResolution } from '@/lib/flags/resolve';
import type { ActiveProfiles } from '@/lib/profiles/load';

export type SqlParam = string | number | null;

/** The facts of the installation the report states beside its figures. */
export interface ReportFacts {
  /** the active compliance profiles: the control mapping, retention, masking, the two-person rule */
  profiles: Pick<ActiveProfiles, 'profiles' | 'retention' | 'maskKeys' | 'twoPerson'>;
  /** the policy revision in force now */
  revision(): string;
  /** the flags in force now */
  flags(): FlagResolution;
  /** the installation's public key, the checkpoints are verified with (undefined: none yet) */
  verifierKey(): string | undefined;
  /** the checkpoints the installation's witness folders hold (configuredWitnessed): the trail must extend them */
  witnessed?(): WitnessedCheckpoint[];
}

export interface ReportReader {
  readonly dialect: 'sqlite' | 'postgres';
  readonly facts: ReportFacts;
  /**
   * The rows of one statement (one snapshot of the database: a figure that must agree with itself is one statement).
   * Integers are JS numbers on both databases, counts and sums included.
   */
  all<T>(sql: string, params?: readonly SqlParam[]): Promise<T[]>;
  get<T>(sql: string, params?: readonly SqlParam[]): Promise<T | undefined>;
  /** Verify both chains in full (the range is only counted) against `verifierKey`. */
  verify(verifierKey: string | undefined, range: VerifyRange): Promise<VerifyReport>;
  /**
   * Bring the daily denial counts up to date where this server keeps them, so that the report reads few audit rows.
   * The figures are exact either way: the rows after the counts' high-water mark are read from the audit table.
   */
  refreshDailyCounts(): Promise<void>;
}

/**
 * A column SQLite must not drive the scan with (unary +): the statement's other bound (a time or id range) must.
 * PostgreSQL's planner needs no such hint (and has no unary + for text).
 */
export function unindexed(reader: Pick<ReportReader, 'dialect'>, column: string): string {
  return reader.dialect === 'sqlite' ? `+${column}` : column;
}

export interface SqliteReportReaderOptions extends ReportFacts {
  db: Db;
}

/** The report of a SQLite database, read on its connection. */
export function sqliteDbReportReader(options: SqliteReportReaderOptions): ReportReader {
  const { db } = options;
  const sqlite = db.$client;
  const database = new SqliteDatabase(sqlite);
  // The gatherer runs some statements once per event type: prepared once per report.
  const statements = new Map<string, Database.Statement<unknown[], unknown>>();
  const prepared = (sql: string) => {
    let s = statements.get(sql);
    if (!s) {
      s = sqlite.prepare<unknown[], unknown>(sql);
      statements.set(sql, s);
    }
    return s;
  };
  return {
    dialect: 'sqlite',
    facts: { profiles: options.profiles, revision: options.revision, flags: options.flags, verifierKey: options.verifierKey },
    all: async <T>(sql: string, params: readonly SqlParam[] = []) => prepared(sql).all(...params) as T[],
    get: async <T>(sql: string, params: readonly SqlParam[] = []) => prepared(sql).get(...params) as T | undefined,
    // Long chains on every core (verify-parallel.ts): the report's longest step at a million rows.
    verify: (verifierKey, range) => verifyAuditInParallel(sqlite, verifierKey, { ...range, witnessed: options.witnessed?.() ?? [] }),
    refreshDailyCounts: () => catchUpIfBehind(database),
  };
}

/** The report of a SQLite application: its database, profiles, flags, revision and the key beside its file. */
export function sqliteReportReader(app: SwarmApp): ReportReader {
  return sqliteDbReportReader({
    db: app.db,
    profiles: app.profiles,
    revision: () => app.currentRevision(),
    flags: () => app.flags.resolution(),
    verifierKey: () => trustedVerifierKeys(keyDirFor(app.options.dbPath, app.env), app.env),
    witnessed: () => configuredWitnessed(app.env),
  });
}

/**
 * The reader of an application on either database. PostgreSQL's is loaded only when asked for, so a SQLite server
 * never loads the `pg` driver. Its checkpoints are verified with the key of SWARM_AUDIT_KEY_DIR (every server's
 * signing key lives there), none when it is not set.
 */
export async function reportReaderFor(app: App): Promise<ReportReader> {
  if (app.kind === 'sqlite') return sqliteReportReader(app);
  const { pgReportReader } = await import('./pg-reader');
  return pgReportReader({
    pool: app.pool,
    profiles: app.profiles,
    revision: () => app.currentRevision(),
    flags: () => app.flags.resolution(),
    verifierKey: () => trustedVerifierKeys(app.env.SWARM_AUDIT_KEY_DIR ? keyDirFor(app.options.dbPath, app.env) : undefined, app.env),
    witnessed: () => configuredWitnessed(app.env),
  });
}
