/**
 * What the report reads, as a port: SQL against the audit tables, the verification of the chains, and the few facts
 * that are not rows (the active profiles, the flags in force, the policy revision, the verifier key). The gatherer
 * (data.ts) is written once against it, and so is the reader (over the dialect port, db/dialect.ts): the same trail
 * gives the same report on either database (report-contract.test.ts).
 *
 * Queries are written once, in the SQL both databases speak, with `?` placeholders (bound by the dialect, never
 * spliced). The one thing that cannot be said portably is SQLite's planner hint (see `unindexed`). What differs is
 * not SQL: each database's chains are verified by a verifier of its own, and only SQLite keeps daily denial counts.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '@/db/client';
import type { DialectName, SqlDatabase } from '@/db/dialect';
import { trustedVerifierKeys } from '@/lib/audit/trail/checkpoints';
import { catchUpIfBehind } from '@/lib/audit/denials/rollup';
import { verifyTrail, type VerifyOptions, type VerifyRange, type VerifyReport } from '@/lib/audit/trail/verify';
import { verifyAuditInParallel } from '@/lib/audit/trail/verify-parallel';
import { configuredWitnessed, signedSizes, type WitnessedCheckpoint } from '@/lib/audit/trail/witness';
import type { ChainName } from '@/lib/audit/trail/chain';
import type { FlagResolution } from '@/lib/flags/resolve';
import type { ActiveProfiles } from '@/lib/profiles/load';

export type SqlParam = string | number | null;

/** The facts of the installation the report states beside its figures. */
export interface ReportFacts {
  /** the active compliance profiles: the control mapping, retention, masking, the two-person rule, the decision log's sampling */
  profiles: Pick<ActiveProfiles, 'profiles' | 'retention' | 'maskKeys' | 'twoPerson' | 'tokens' | 'decisionLog' | 'changeControl'>;
  /** the policy revision in force now */
  revision(): string;
  /** the flags in force now */
  flags(): FlagResolution;
  /** the installation's public key, the checkpoints are verified with (undefined: none yet) */
  verifierKey(): string | undefined;
  /** the checkpoints the installation's witness folders hold (configuredWitnessed): the trail must extend them */
  witnessed?(): WitnessedCheckpoint[];
  /** what the key folder remembers signing (signedSizes): rows up to there have hashes */
  signedUpTo?(): Partial<Record<ChainName, number>>;
}

export interface ReportReader {
  readonly dialect: DialectName;
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

/** The trail of one database, as the reader reads it: its statements, and what is not a statement. */
export interface ReportTrail {
  database: SqlDatabase;
  /** verify both chains with this database's verifier */
  verifyChains(verifierKey: string | undefined, options: VerifyOptions): Promise<VerifyReport>;
  /** count new denials into the daily table, where this database keeps one */
  refreshDailyCounts(): Promise<void>;
}

/**
 * A column SQLite must not drive the scan with (unary +): the statement's other bound (a time or id range) must.
 * PostgreSQL's planner needs no such hint (and has no unary + for text).
 */
export function unindexed(reader: Pick<ReportReader, 'dialect'>, column: string): string {
  return reader.dialect === 'sqlite' ? `+${column}` : column;
}

/**
 * A statement with `?` placeholders as a dialect's statement, each `?` a bound parameter (`?` on SQLite, `$n` on
 * PostgreSQL). A `?` inside a string literal is text, not a placeholder.
 */
export function boundStatement(text: string, params: readonly unknown[] = []): SQL {
  const chunks: SQL[] = [];
  let at = 0;
  let n = 0;
  for (const m of text.matchAll(/'(?:[^']|'')*'|\?/g)) {
    if (m[0] !== '?') continue;
    if (n >= params.length) throw new Error(`The statement has more placeholders than its ${params.length} parameters: ${text}`);
    chunks.push(sql.raw(text.slice(at, m.index)), sql`${params[n++]}`);
    at = m.index + 1;
  }
  if (n !== params.length) throw new Error(`The statement has ${n} placeholders for ${params.length} parameters: ${text}`);
  chunks.push(sql.raw(text.slice(at)));
  return sql.join(chunks);
}

/** The report's reader of one database's trail. */
export function reportReader(trail: ReportTrail, facts: ReportFacts): ReportReader {
  const { database } = trail;
  return {
    dialect: database.dialect,
    facts: { profiles: facts.profiles, revision: facts.revision, flags: facts.flags, verifierKey: facts.verifierKey },
    all: <T>(text: string, params?: readonly SqlParam[]) => database.all<T>(boundStatement(text, params)),
    get: <T>(text: string, params?: readonly SqlParam[]) => database.one<T>(boundStatement(text, params)),
    verify: (verifierKey, range) => trail.verifyChains(verifierKey, { ...range, witnessed: facts.witnessed?.() ?? [], signedUpTo: facts.signedUpTo?.() ?? {} }),
    refreshDailyCounts: trail.refreshDailyCounts,
  };
}

/** A SQLite file's trail: long chains verified on every core (verify-parallel.ts, the report's longest step at a million rows). */
export function sqliteTrail(db: Db, database: SqlDatabase): ReportTrail {
  return {
    database,
    verifyChains: (verifierKey, options) => verifyAuditInParallel(db.$client, verifierKey, options),
    refreshDailyCounts: async () => catchUpIfBehind(database),
  };
}

/** A PostgreSQL database's trail (no daily counts are kept there yet: the report reads the rows after their zero high-water mark). */
export function postgresTrail(database: SqlDatabase): ReportTrail {
  return {
    database,
    verifyChains: (verifierKey, options) => verifyTrail(database, verifierKey, options),
    refreshDailyCounts: async () => {},
  };
}

/** What the reader of an application takes from it (the application gives itself): its database's side, the facts and where the keys are. */
export interface ReportSource {
  readonly side: { reportTrail(): ReportTrail; verifierKeyDir(): string | undefined };
  readonly profiles: ReportFacts['profiles'];
  currentRevision(): string;
  readonly flags: { resolution(): FlagResolution };
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly options: { readonly dbPath?: string };
}

/**
 * The reader of an application on either database. On PostgreSQL the checkpoints are verified with the key of
 * SWARM_AUDIT_KEY_DIR (every server's signing key lives there), none when it is not set.
 */
export function reportReaderFor(app: ReportSource): ReportReader {
  const keyDir = app.side.verifierKeyDir();
  return reportReader(app.side.reportTrail(), {
    profiles: app.profiles,
    revision: () => app.currentRevision(),
    flags: () => app.flags.resolution(),
    verifierKey: () => trustedVerifierKeys(keyDir, app.env),
    witnessed: () => configuredWitnessed(app.env),
    signedUpTo: () => (keyDir === undefined ? {} : signedSizes(keyDir, app.options.dbPath)),
  });
}
