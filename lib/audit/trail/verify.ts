/**
 * Verification of the evidence: recompute both hash chains row by row and check every signed checkpoint against them.
 * Reports what CloudTrail's validate-logs reports: rows checked, checkpoints valid, the range found; and on failure the
 * table, the first bad row id and what is wrong (changed, missing, out of order, tail truncated after a checkpoint,
 * bad signature, checkpoint key unknown). Reads only: it opens the database file as it is, triggers or not.
 */
import type Database from 'better-sqlite3';
import { sql } from 'drizzle-orm';
import { SqliteDatabase, step, type SqlDatabase, type TxRunner, type TxSteps } from '@/db/dialect';
import type { AuditArchiveRow, AuditCheckpointRow } from '@/db/schema';
import { CHAIN_COLUMNS, CHAIN_NAMES, chainHash, encodeRow, GENESIS_HASH, type ChainName } from './chain';
import { isArchiveCheckpoint, openCheckpointWithAny, originOf, parseVerifierKeys, ROWS_PAGE, rowsAfter, type ParsedVerifierKey } from './checkpoints';
import type { WitnessedCheckpoint } from './witness';
import { bundleHashesAt, type ArchiveBundle } from './archive';

export type Problem =
  | 'changed'
  | 'missing'
  | 'out of order'
  | 'unchained'
  | 'tail truncated after a checkpoint'
  | 'bad signature'
  | 'checkpoint key unknown'
  | 'checkpoint does not match'
  | 'checkpoint missing'
  | 'not covered by a checkpoint'
  | 'archive not signed'
  | 'archive does not match'
  | 'archive not recorded in the trail'
  | 'rolled back behind a witnessed checkpoint'
  | 'rewritten behind a witnessed checkpoint'
  | 'archive not shown to extend a witnessed checkpoint'
  | 'witness unreadable';

export interface Failure {
  table: string;
  /** the first bad row (or checkpoint) id */
  id: number;
  problem: Problem;
  message: string;
}

export interface ChainReport {
  chain: ChainName;
  rowsChecked: number;
  /** rows written before tamper evidence existed (before the chain begins); not covered */
  legacyRows: number;
  archivedUpTo: number | null;
  firstId: number | null;
  lastId: number | null;
  firstTimestamp: number | null;
  lastTimestamp: number | null;
  checkpoints: number;
  checkpointsValid: number;
  headHash: string | null;
  /** the newest row under a valid signed checkpoint (or a verified archive); null: none */
  coveredUpTo: number | null;
  /** the rows after it, not yet under any signed checkpoint (null: none) */
  uncovered: { firstId: number; rows: number; oldestTimestamp: number | null; ageSeconds: number | null } | null;
  /** witnessed checkpoints checked against this chain, the newest of them (row id), and how many the trail is not shown to extend */
  witnessed: { checked: number; newest: number | null; notExtended: number };
  /** the rows of the requested time range (the whole chain is verified either way) */
  inRange: { rows: number; firstId: number | null; lastId: number | null };
}

/** A requested time range, seconds since the epoch; either end may be open. */
export interface VerifyRange {
  from?: number;
  to?: number;
}

/**
 * How long a row may wait for its first checkpoint: twice the interval at which a server signs (10 s). Older rows
 * outside every checkpoint mean checkpoints were removed, or nothing signed since they were written.
 */
export const COVERAGE_SECONDS = 20;

/**
 * How far ahead of this clock a row not yet under a checkpoint may be dated (the clocks of several servers differ a
 * little). Later than that, its date cannot be believed: whoever can edit the file could otherwise make rows it took
 * out of every checkpoint look just written.
 */
export const FUTURE_SECONDS = 60;

/** What else a verification takes: the time it judges coverage at, and the checkpoints witnesses hold. */
export interface VerifyOptions extends VerifyRange {
  /** seconds since the epoch (default: now) */
  now?: number;
  /** checkpoints kept by witnesses (swarm audit verify --witness): the trail must extend every one */
  witnessed?: readonly WitnessedCheckpoint[];
  /**
   * the newest size of each chain this installation's key folder remembers signing (readSignedHeads): a row up to it
   * without a hash is no row from before the chain began, but one whose hashes were removed
   */
  signedUpTo?: Partial<Record<ChainName, number>>;
  /**
   * archive bundles at hand (swarm audit verify --archive FILE): what shows that an archive's head extends the witnessed
   * checkpoints it covers when no witness holds a checkpoint at or after its last row
   */
  archiveBundles?: readonly ArchiveBundle[];
}

/** An archive record, as the verifier reads it (its note: the signed checkpoint of the archived prefix's last row). */
export type ArchiveRecord = Pick<AuditArchiveRow, 'id' | 'upToId' | 'headHash' | 'note' | 'archivedAt' | 'file'>;

/** The newest archive record of a chain (verification of what remains starts after it). */
function* newestArchive(tx: TxRunner, chain: ChainName): TxSteps<ArchiveRecord | undefined> {
  return yield* tx.one<ArchiveRecord>(
    sql`SELECT id, up_to_id AS "upToId", head_hash AS "headHash", note, archived_at AS "archivedAt", file FROM audit_archives WHERE chain = ${chain} ORDER BY up_to_id DESC, id DESC LIMIT 1`,
  );
}

/** Every checkpoint id, to find one that is missing: ids are given gapless, 1, 2, 3… (both chains share them). */
export function checkGapless(ids: readonly number[], failures: Failure[]): void {
  let expected = 1;
  for (const id of ids) {
    if (id !== expected) {
      failures.push({
        table: 'audit_checkpoints',
        id: expected,
        problem: 'checkpoint missing',
        message: `checkpoint ${expected} is missing (the next one found is ${id}): checkpoints are numbered without gaps, so one was removed`,
      });
      return;
    }
    expected++;
  }
}

/**
 * Every archive record must be recorded in the chained trail too: a retention.archived event naming its chain, last
 * row and head. (Unless a later archive of security_events may have carried that event away with it.)
 */
export function checkArchivesRecorded(
  chains: readonly ChainReport[],
  archives: ReadonlyMap<ChainName, ArchiveRecord>,
  events: readonly { detailJson: string | null }[],
  failures: Failure[],
): void {
  const named = new Set<string>();
  for (const e of events) {
    try {
      const detail = JSON.parse(e.detailJson ?? '{}') as { chains?: { chain?: string; upToId?: number | null; headHash?: string | null }[] };
      for (const c of detail.chains ?? []) if (c.upToId != null && c.headHash) named.add(`${c.chain}:${c.upToId}:${c.headHash}`);
    } catch {
      // a detail that is not JSON names nothing
    }
  }
  const eventsArchivedAt = archives.get('security_events')?.archivedAt ?? 0;
  for (const report of chains) {
    const a = archives.get(report.chain);
    if (!a || named.has(`${report.chain}:${a.upToId}:${a.headHash}`)) continue;
    if (report.chain !== 'security_events' && eventsArchivedAt > a.archivedAt) continue;
    if (failures.some((f) => f.table === 'audit_archives')) continue;
    failures.push({
      table: 'audit_archives',
      id: a.id,
      problem: 'archive not recorded in the trail',
      message: `archive record ${a.id} (${report.chain} up to row ${a.upToId}) has no retention.archived event in the chained trail: it was not written by swarm audit archive`,
    });
  }
}

export interface VerifyReport {
  ok: boolean;
  chains: ChainReport[];
  failures: Failure[];
  keyUsed: string | null;
}

/**
 * Verify every chain of the SQLite database open on `sqlite`, in one read-only transaction: the steps of verifyTrail,
 * each chain's rows read as arrays in one statement (verifyRowByRow), faster than in pages.
 */
export function verifyAudit(sqlite: Database.Database, verifierKeyText: string | undefined, options: VerifyOptions = {}): VerifyReport {
  return new SqliteDatabase(sqlite).transactionSync((tx) => verifySteps(tx, verifierKeyText, options, (verifier) => step(verifyRowByRow(sqlite, verifier))), { readOnly: true });
}

/**
 * Verify every chain of a database through the dialect port (PostgreSQL's, and any SQLite one): the same checks and the
 * same report as verifyAudit, the rows read in pages of 5,000 by id, in one read-only transaction so that rows appended
 * meanwhile are not half seen. (A SQLite file is verified faster by verifyAudit, which reads its rows as arrays in one
 * statement, and by verifyAuditInParallel on several threads.)
 */
export function verifyTrail(database: SqlDatabase, verifierKeyText: string | undefined, options: VerifyOptions = {}): Promise<VerifyReport> {
  return database.transaction(
    (tx) =>
      verifySteps(tx, verifierKeyText, options, function* (verifier) {
        for (let after = -1; ; ) {
          const page = yield* rowsAfter(tx, verifier.chain, after, Number.MAX_SAFE_INTEGER);
          for (const row of page) verifier.add(row);
          if (page.length < ROWS_PAGE) return verifier.finish();
          after = page[page.length - 1]![0] as number;
        }
      }),
    { readOnly: true },
  );
}

/** Every chain verified, its rows fed to its verifier by `feed`, then what is checked across the chains. */
function* verifySteps(
  tx: TxRunner,
  verifierKeyText: string | undefined,
  options: VerifyOptions,
  feed: (verifier: ChainVerifier) => TxSteps<ChainReport>,
): TxSteps<VerifyReport> {
  const { key, failures } = verifierKeyOf(verifierKeyText);
  const chains: ChainReport[] = [];
  for (const chain of CHAIN_NAMES) chains.push(yield* feed(yield* chainVerifierFor(tx, chain, key, failures, options)));
  yield* finishAudit(tx, chains, failures);
  return verifyReportOf(chains, failures, verifierKeyText);
}

/** What is checked once both chains are: checkpoint ids without gaps, every archive recorded in the trail. */
export function* finishAudit(tx: TxRunner, chains: readonly ChainReport[], failures: Failure[]): TxSteps<void> {
  checkGapless((yield* tx.all<{ id: number }>(sql`SELECT id FROM audit_checkpoints ORDER BY id`)).map((r) => Number(r.id)), failures);
  const archives = new Map<ChainName, ArchiveRecord>();
  for (const chain of CHAIN_NAMES) {
    const a = yield* newestArchive(tx, chain);
    if (a) archives.set(chain, a);
  }
  if (archives.size === 0) return;
  // The retention.archived events, whose details name the archive records.
  const events = yield* tx.all<{ detailJson: string | null }>(sql`SELECT detail_json AS "detailJson" FROM security_events WHERE type = 'retention.archived' ORDER BY id`);
  checkArchivesRecorded(chains, archives, events, failures);
}

/** The report of chains verified with this key text: intact when nothing failed. */
export function verifyReportOf(chains: ChainReport[], failures: Failure[], verifierKeyText: string | undefined): VerifyReport {
  return { ok: failures.length === 0, chains, failures, keyUsed: verifierKeyText?.trim() ?? null };
}

/** The verifier keys to check checkpoints with (a ring: one per line); a key that cannot be read is the first failure. */
export function verifierKeyOf(text: string | undefined): { key: readonly ParsedVerifierKey[] | undefined; failures: Failure[] } {
  const failures: Failure[] = [];
  if (!text) return { key: undefined, failures };
  try {
    return { key: parseVerifierKeys(text), failures };
  } catch (e) {
    failures.push({ table: 'audit_checkpoints', id: 0, problem: 'checkpoint key unknown', message: (e as Error).message });
    return { key: undefined, failures };
  }
}

/** Feed a verifier every row of its chain, on this connection, in one statement; its report. */
export function verifyRowByRow(sqlite: Database.Database, verifier: ChainVerifier): ChainReport {
  // Rows as arrays, not objects (measured: half the time per row at a million rows): [id, ...columns, prev, row hash].
  const rows = sqlite.prepare(chainRowsSql(verifier.chain)).raw(true).iterate() as IterableIterator<unknown[]>;
  for (const row of rows) verifier.add(row);
  return verifier.finish(timestampLookup(sqlite, verifier.chain));
}

/** The oldest and newest timestamp of the rows of a chain from one id to another (null: none is a number). */
export type TimestampRange = (fromId: number, toId: number) => { oldest: number | null; newest: number | null };

/** The timestamps of a run of rows of a chain, for the coverage of rows verified elsewhere. */
export function timestampLookup(sqlite: Database.Database, chain: ChainName): TimestampRange {
  const stmt = sqlite.prepare<[number, number], { oldest: number | null; newest: number | null }>(
    `SELECT min(timestamp) AS oldest, max(timestamp) AS newest FROM ${chain} WHERE id BETWEEN ? AND ? AND typeof(timestamp) IN ('integer', 'real')`,
  );
  return (fromId, toId) => stmt.get(fromId, toId) ?? { oldest: null, newest: null };
}

/** A verifier of one chain of this database: where an archive left it and the checkpoints signed over it, read first. */
export function* chainVerifierFor(
  tx: TxRunner,
  chain: ChainName,
  key: readonly ParsedVerifierKey[] | undefined,
  failures: Failure[],
  options: VerifyOptions,
): TxSteps<ChainVerifier> {
  const archive = yield* newestArchive(tx, chain);
  const checkpoints = yield* tx.all<StoredCheckpoint>(sql`SELECT id, size, head_hash AS "headHash", note FROM audit_checkpoints WHERE chain = ${chain} ORDER BY id`);
  return new ChainVerifier(chain, archive, checkpoints, key, failures, options);
}

/** What a worker thread answers for a run of rows it verified (verify-worker.mjs). */
export interface VerifiedRun {
  /** every row chained, ids dense, each following the one before, every hash recomputed and equal */
  ok: boolean;
  rows: number;
  firstId: number | null;
  /** the prev_hash of the run's first row: it must be the hash the run before it ended with */
  firstPrev: string | null;
  lastId: number | null;
  lastHash: string | null;
  firstTimestamp: number | null;
  lastTimestamp: number | null;
  inRange: { rows: number; firstId: number | null; lastId: number | null };
  /** [id, row_hash] of the rows at the checkpoint sizes asked for */
  hashAt: [number, string][];
  /** why the worker could not read the run (the caller verifies row by row) */
  error?: string;
}

/** A checkpoint as stored beside the chains. */
export type StoredCheckpoint = Pick<AuditCheckpointRow, 'id' | 'size' | 'headHash' | 'note'>;

/**
 * The rows of a chain as the verifier reads them, in chain order: [id, ...chained columns, prev_hash, row_hash]; with
 * `between`, of the id range its two parameters give (one run of a verification on several threads).
 */
export function chainRowsSql(chain: ChainName, between = false): string {
  return `SELECT id, ${CHAIN_COLUMNS[chain].join(', ')}, prev_hash, row_hash FROM ${chain}${between ? ' WHERE id BETWEEN ? AND ?' : ''} ORDER BY id`;
}

/** Where a row read by chainRowsSql keeps its timestamp, its prev_hash and its row_hash (the chained values end before prev). */
export function chainRowLayout(chain: ChainName): { timestamp: number; prev: number; hash: number } {
  const columns = CHAIN_COLUMNS[chain];
  return { timestamp: 1 + columns.indexOf('timestamp' as never), prev: columns.length + 1, hash: columns.length + 2 };
}

/**
 * The verification of one chain, fed its rows in id order, whatever database they come from (SQLite reads them in one
 * pass, PostgreSQL in pages): the hash of every row recomputed, ids dense, each row following the one before, then the
 * signed checkpoints checked against the heads found. Failures go to the shared list, one per table (the first).
 */
export class ChainVerifier {
  private readonly report: ChainReport;
  private readonly wanted: Set<number>;
  private readonly hashAt = new Map<number, string>();
  private readonly last: number;
  private readonly at: { timestamp: number; prev: number; hash: number };
  private expectedId: number | null;
  private expectedPrev: string;
  private started: boolean;
  private firstChainedId: number | null = null;
  /**
   * Where coverage may end (0, the archive's last row, each checkpoint's size), ascending, and the oldest and newest
   * timestamp of the rows after each of them up to the next: the rows not under a checkpoint are dated by all of theirs,
   * not by the first one's alone, which whoever edits the file can set to anything.
   */
  private readonly bounds: number[];
  private readonly dated: { oldest: number | null; newest: number | null }[];
  private segment = 0;
  /** some rows were verified elsewhere (absorb): their timestamps are read through finish's lookup */
  private absorbed = false;
  private readonly witnessed: readonly WitnessedCheckpoint[];

  constructor(
    readonly chain: ChainName,
    private readonly archive: ArchiveRecord | undefined,
    private readonly checkpoints: readonly StoredCheckpoint[],
    private readonly key: readonly ParsedVerifierKey[] | undefined,
    private readonly failures: Failure[],
    private readonly range: VerifyOptions,
  ) {
    this.at = chainRowLayout(chain);
    this.last = this.at.prev;
    this.witnessed = (range.witnessed ?? []).filter((w) => w.chain === chain);
    this.wanted = new Set([...checkpoints.map((c) => c.size), ...this.witnessed.map((w) => w.size)]);
    this.bounds = [...new Set([0, archive?.upToId ?? 0, ...checkpoints.map((c) => c.size)])].sort((a, b) => a - b);
    this.dated = this.bounds.map(() => ({ oldest: null, newest: null }));
    this.report = {
      chain,
      rowsChecked: 0,
      legacyRows: 0,
      archivedUpTo: archive?.upToId ?? null,
      firstId: null,
      lastId: null,
      firstTimestamp: null,
      lastTimestamp: null,
      checkpoints: checkpoints.length,
      checkpointsValid: 0,
      headHash: null,
      coveredUpTo: null,
      uncovered: null,
      witnessed: { checked: 0, newest: null, notExtended: 0 },
      inRange: { rows: 0, firstId: null, lastId: null },
    };
    this.expectedId = archive ? archive.upToId + 1 : null;
    this.expectedPrev = archive ? archive.headHash : GENESIS_HASH;
    this.started = archive !== undefined;
  }

  private fail(table: string, id: number, problem: Problem, message: string): void {
    // One failure per table is enough to locate the damage: the first one.
    if (!this.failures.some((f) => f.table === table)) this.failures.push({ table, id, problem, message });
  }

  /** The next row: [id, ...chained columns, prev_hash, row_hash]. */
  add(row: readonly unknown[]): void {
    const { report, chain, at, range } = this;
    const id = row[0] as number;
    const timestamp = row[at.timestamp] as number;
    const prevHash = row[at.prev] as string | null;
    const storedHash = row[at.hash] as string | null;
    report.firstId ??= id;
    report.lastId = id;
    if (!this.started && storedHash === null) {
      const signed = range.signedUpTo?.[chain];
      if (signed !== undefined && id <= signed) {
        // Not a row from before the chain began: the installation signed the chain up to a row after it.
        this.fail(chain, id, 'unchained', `row ${id} has no hash, but this installation signed the chain up to row ${signed}: its hashes were removed`);
      } else {
        report.legacyRows++;
      }
      this.expectedId = id + 1;
      return;
    }
    this.started = true;
    this.firstChainedId ??= id;
    report.firstTimestamp ??= timestamp;
    report.lastTimestamp = timestamp;
    while (this.segment + 1 < this.bounds.length && id > this.bounds[this.segment + 1]!) this.segment++;
    if (typeof timestamp === 'number') {
      const d = this.dated[this.segment]!;
      if (d.oldest === null || timestamp < d.oldest) d.oldest = timestamp;
      if (d.newest === null || timestamp > d.newest) d.newest = timestamp;
    }
    const expectedId = this.expectedId;
    if (expectedId !== null && id !== expectedId) {
      this.fail(chain, expectedId, id > expectedId ? 'missing' : 'out of order', `row ${expectedId} is missing (the next row found is ${id})`);
    }
    if (storedHash === null) {
      this.fail(chain, id, 'unchained', `row ${id} has no hash although the chain began before it (written or changed outside the product)`);
    } else {
      if (prevHash !== this.expectedPrev) {
        this.fail(chain, id, 'out of order', `row ${id} does not follow the row before it (its prev_hash is not that row's hash)`);
      }
      const computed = chainHash(prevHash ?? '', id, encodeRow(row, 1, this.last));
      if (computed !== storedHash) this.fail(chain, id, 'changed', `row ${id} was changed after it was written (its hash does not match its content)`);
      this.expectedPrev = storedHash;
    }
    if (this.wanted.has(id) && storedHash) this.hashAt.set(id, storedHash);
    report.rowsChecked++;
    if ((range.from === undefined || timestamp >= range.from) && (range.to === undefined || timestamp <= range.to)) {
      report.inRange.rows++;
      report.inRange.firstId ??= id;
      report.inRange.lastId = id;
    }
    this.expectedId = id + 1;
  }

  /** The checkpoint sizes whose row hashes the verification needs (a run verified elsewhere reports them). */
  wantedSizes(): number[] {
    return [...this.wanted];
  }

  /**
   * Adopt a run of rows verified elsewhere (verify-worker.mjs) as if they had been added one by one. Only a clean run
   * that follows on from what was seen is adopted: false otherwise, and the caller then verifies row by row.
   */
  absorb(run: VerifiedRun): boolean {
    const { report } = this;
    if (!run.ok || run.rows === 0 || run.firstId === null || run.lastId === null || run.lastHash === null) return false;
    if (this.expectedId !== null && run.firstId !== this.expectedId) return false;
    if (run.firstPrev !== this.expectedPrev || run.lastId - run.firstId + 1 !== run.rows) return false;
    this.started = true;
    this.absorbed = true;
    this.firstChainedId ??= run.firstId;
    report.firstId ??= run.firstId;
    report.lastId = run.lastId;
    report.firstTimestamp ??= run.firstTimestamp;
    report.lastTimestamp = run.lastTimestamp;
    report.rowsChecked += run.rows;
    report.inRange.rows += run.inRange.rows;
    report.inRange.firstId ??= run.inRange.firstId;
    if (run.inRange.lastId !== null) report.inRange.lastId = run.inRange.lastId;
    for (const [id, hash] of run.hashAt) if (this.wanted.has(id)) this.hashAt.set(id, hash);
    this.expectedPrev = run.lastHash;
    this.expectedId = run.lastId + 1;
    return true;
  }

  /**
   * After the last row: the head, the archive record and every checkpoint checked against the rows seen, what the
   * checkpoints cover, and every witnessed checkpoint. `timestamps` reads the timestamps of rows that were not passed
   * here (runs verified on other threads).
   */
  finish(timestamps?: TimestampRange): ChainReport {
    const { report, chain, key } = this;
    report.headHash = this.started ? this.expectedPrev : null;
    const archive = this.checkArchive();
    let covered = archive ? archive.upToId : 0;
    for (const c of this.checkpoints) {
      if (!key) {
        this.fail('audit_checkpoints', c.id, 'checkpoint key unknown', 'no verifier key: give --public-key FILE, or pin the keys in SWARM_AUDIT_PUBLIC_KEYS (the key folder\'s own private key is trusted too)');
        continue;
      }
      const opened = openCheckpointWithAny(c.note, key);
      if (!opened.ok) {
        const unknown = opened.problem.startsWith('checkpoint key unknown');
        // The problem is named once: the message says only what follows it.
        this.fail('audit_checkpoints', c.id, unknown ? 'checkpoint key unknown' : 'bad signature', unknown ? opened.problem.replace(/^checkpoint key unknown:\s*/, '') : opened.problem);
        continue;
      }
      const b = opened.body;
      if (b.origin !== originOf(chain, opened.key.name) || b.size !== c.size || b.headHash !== c.headHash) {
        this.fail('audit_checkpoints', c.id, 'checkpoint does not match', `checkpoint ${c.id}: its signed text does not match its row`);
        continue;
      }
      if (this.archive && b.size <= this.archive.upToId) {
        // Its rows left through the archive: valid when the archive's own signed record is, and agrees at its end.
        if (archive && (b.size < archive.upToId || b.headHash === archive.headHash)) report.checkpointsValid++;
        else if (archive) this.fail('audit_archives', this.archive.id, 'archive does not match', `checkpoint ${c.id} signed row ${b.size} with another hash than the archive record`);
        continue;
      }
      if (report.lastId === null || b.size > report.lastId) {
        this.fail(chain, (report.lastId ?? 0) + 1, 'tail truncated after a checkpoint', `checkpoint ${c.id} signed ${b.size} rows, but the table ends at row ${report.lastId ?? 0}`);
        continue;
      }
      const h = this.hashAt.get(b.size);
      if (h !== b.headHash) {
        this.fail(chain, b.size, 'changed', `row ${b.size} does not match checkpoint ${c.id} signed at ${new Date(b.time * 1000).toISOString()}`);
        continue;
      }
      report.checkpointsValid++;
      covered = Math.max(covered, b.size);
    }
    this.checkCoverage(covered, timestamps);
    this.checkWitnessed(archive);
    return report;
  }

  /** The archive record, when its signed checkpoint verifies and names exactly its last row and head; else a failure. */
  private checkArchive(): ArchiveRecord | undefined {
    const { archive, key, chain } = this;
    if (!archive) return undefined;
    const bad = (message: string) => {
      this.fail('audit_archives', archive.id, 'archive not signed', `archive record ${archive.id} (${chain} up to row ${archive.upToId}): ${message}`);
      return undefined;
    };
    if (!archive.note) return bad('it carries no signed checkpoint, so nothing vouches for the rows it says were archived');
    if (!key) return bad('no verifier key to check its signed checkpoint with');
    const opened = openCheckpointWithAny(archive.note, key);
    if (!opened.ok) return bad(`its checkpoint does not verify (${opened.problem})`);
    const b = opened.body;
    if (!isArchiveCheckpoint(b)) return bad('its checkpoint is an ordinary one, not the checkpoint an archive signs');
    if (b.origin !== originOf(chain, opened.key.name) || b.size !== archive.upToId || b.headHash !== archive.headHash) return bad('its signed checkpoint names another row or head than the record');
    return archive;
  }

  /**
   * What the valid checkpoints cover; rows outside them fail when the oldest is older than COVERAGE_SECONDS, when one is
   * dated more than FUTURE_SECONDS ahead, or when none is dated: a date that cannot be believed proves no row is new.
   */
  private checkCoverage(covered: number, timestamps: TimestampRange | undefined): void {
    const { report, chain } = this;
    report.coveredUpTo = covered > 0 ? covered : null;
    if (report.lastId === null || this.firstChainedId === null || report.lastId <= covered) return;
    const firstId = Math.max(covered + 1, this.firstChainedId);
    let oldest: number | null = null;
    let newest: number | null = null;
    if (this.absorbed && timestamps) {
      ({ oldest, newest } = timestamps(firstId, report.lastId));
    } else {
      // covered is one of the bounds: the rows after it are those of its segment and of every later one.
      for (let i = 0; i < this.bounds.length; i++) {
        const d = this.dated[i]!;
        if (this.bounds[i]! < covered) continue;
        if (d.oldest !== null && (oldest === null || d.oldest < oldest)) oldest = d.oldest;
        if (d.newest !== null && (newest === null || d.newest > newest)) newest = d.newest;
      }
    }
    const now = this.range.now ?? Date.now() / 1000;
    const age = oldest === null ? null : Math.max(0, now - oldest);
    report.uncovered = { firstId, rows: report.lastId - firstId + 1, oldestTimestamp: oldest, ageSeconds: age };
    const rows = `rows ${firstId}–${report.lastId} are under no signed checkpoint`;
    const signed = this.range.signedUpTo?.[chain];
    if (signed !== undefined && signed >= firstId) {
      // Whatever the rows' dates say: the installation's key folder remembers signing past them.
      this.fail(chain, firstId, 'not covered by a checkpoint', `${rows}, but this installation's key signed the chain up to row ${signed} (its key folder remembers it): checkpoints were removed`);
    } else if (oldest === null) {
      this.fail(chain, firstId, 'not covered by a checkpoint', `${rows}, and none of them carries a date (the product dates every row): their timestamps were removed`);
    } else if (newest !== null && newest > now + FUTURE_SECONDS) {
      this.fail(chain, firstId, 'not covered by a checkpoint', `${rows}, and one is dated ${Math.round(newest - now)} s in the future: rows were taken out of the checkpoints and their dates changed`);
    } else if (age !== null && age > COVERAGE_SECONDS) {
      this.fail(
        chain,
        firstId,
        'not covered by a checkpoint',
        `${rows}, the oldest written ${Math.round(age)} s ago (a server signs every 10 s): checkpoints were removed, or nothing has signed since (run swarm audit checkpoint)`,
      );
    }
  }

  /**
   * Every witnessed checkpoint: signed by a trusted key, and the trail still holds its head. One an archive covers is
   * shown to be extended by the archive's head only by a witnessed checkpoint at or after the archive's last row that
   * the trail holds (a witness keeps one history: what it saw later extends what it saw before), or else by the
   * archive's bundle (--archive FILE), whose rows recompute from the witnessed head to the archive's. Whoever has the
   * signing key can write an archive record; without one of these, it could name an invented head past every witnessed
   * checkpoint and erase what the witnesses saw.
   */
  private checkWitnessed(archive: ArchiveRecord | undefined): void {
    const { report, chain, key } = this;
    const sorted = [...this.witnessed].sort((a, b) => a.size - b.size);
    let lastGood: WitnessedCheckpoint | undefined;
    /** the newest witnessed checkpoint an archive covers, and whether a witnessed checkpoint the trail holds reaches past it */
    let archived: WitnessedCheckpoint | undefined;
    let reachesArchive = false;
    // The first witnessed head the trail does not extend is failed (the later ones are not judged).
    const notExtended = (): void => {
      report.witnessed.notExtended = 1;
    };
    for (const w of sorted) {
      const opened = key ? openCheckpointWithAny(w.note, key) : undefined;
      if (!opened?.ok || opened.body.origin !== originOf(chain, opened.key.name) || opened.body.size !== w.size || opened.body.headHash !== w.headHash) {
        // A witness line without a valid signature proves nothing either way.
        continue;
      }
      report.witnessed.checked++;
      report.witnessed.newest = Math.max(report.witnessed.newest ?? 0, w.size);
      const at = witnessedAt(w);
      if (archive && w.size <= archive.upToId) {
        if (w.size === archive.upToId) {
          if (w.headHash !== archive.headHash) {
            this.fail(chain, w.size, 'rewritten behind a witnessed checkpoint', `the archive record names another head for row ${w.size} than the checkpoint witnessed at ${at}`);
            return notExtended();
          }
          reachesArchive = true;
        }
        archived = w;
        lastGood = w;
        continue;
      }
      if (report.lastId === null || w.size > report.lastId) {
        this.fail(
          chain,
          (report.lastId ?? 0) + 1,
          'rolled back behind a witnessed checkpoint',
          `a witness holds a checkpoint of row ${w.size} signed at ${at}, but the table ends at row ${report.lastId ?? 0}: rows were cut, or an older copy was restored`,
        );
        return notExtended();
      }
      if (this.hashAt.get(w.size) !== w.headHash) {
        const after = lastGood ? `after row ${lastGood.size} (witnessed intact at ${witnessedAt(lastGood)}) and ` : '';
        this.fail(chain, w.size, 'rewritten behind a witnessed checkpoint', `row ${w.size} does not have the head witnessed at ${at}: the trail was rewritten ${after}at or before row ${w.size}`);
        return notExtended();
      }
      // The live rows begin at the archive's head: holding this head, they show that the archive's head extends it.
      if (archive) reachesArchive = true;
      lastGood = w;
    }
    if (archive && archived && !reachesArchive) this.checkArchiveExtends(archive, archived);
  }

  /** No witnessed checkpoint reaches past the archive: its bundle must show that its head extends the newest one it covers. */
  private checkArchiveExtends(archive: ArchiveRecord, w: WitnessedCheckpoint): void {
    const { chain, report } = this;
    const bundles = this.range.archiveBundles ?? [];
    const hashes = bundleHashesAt(bundles, chain, archive.upToId, [w.size, archive.upToId]);
    const record = `archive record ${archive.id} (${chain} up to row ${archive.upToId})`;
    const at = witnessedAt(w);
    if (hashes.size === 0) {
      report.witnessed.notExtended = 1;
      const given = bundles.length === 0 ? 'and no bundle was given' : `and the bundles given (${bundles.map((b) => b.file).join(', ')}) do not hold rows ${w.size + 1}–${archive.upToId} of it`;
      this.fail(
        'audit_archives',
        archive.id,
        'archive not shown to extend a witnessed checkpoint',
        `${record} covers the checkpoint of row ${w.size} witnessed at ${at}, but no witness holds a checkpoint at or after row ${archive.upToId}, ${given}: nothing shows that its head extends what the witness saw. Give its bundle with --archive ${archive.file}`,
      );
    } else if (hashes.get(archive.upToId) !== archive.headHash) {
      report.witnessed.notExtended = 1;
      this.fail('audit_archives', archive.id, 'archive does not match', `${record} names another head for row ${archive.upToId} than its bundle's rows`);
    } else if (hashes.get(w.size) !== w.headHash) {
      report.witnessed.notExtended = 1;
      this.fail(chain, w.size, 'rewritten behind a witnessed checkpoint', `row ${w.size} of the archive's bundle does not have the head witnessed at ${at}: the trail was rewritten at or before row ${w.size}, then archived`);
    }
  }
}

/** When a witnessed checkpoint was signed, as verification's messages say it. */
const witnessedAt = (w: WitnessedCheckpoint): string => new Date(w.time * 1000).toISOString();
