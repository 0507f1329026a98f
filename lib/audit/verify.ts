/**
 * Verification of the evidence: recompute both hash chains row by row and check every signed checkpoint against them.
 * Reports what CloudTrail's validate-logs reports: rows checked, checkpoints valid, the range found; and on failure the
 * table, the first bad row id and what is wrong (changed, missing, out of order, tail truncated after a checkpoint,
 * bad signature, checkpoint key unknown). Reads only: it opens the database file as it is, triggers or not.
 */
import type Database from 'better-sqlite3';
import { CHAIN_COLUMNS, CHAIN_NAMES, chainHash, encodeRow, GENESIS_HASH, type ChainName } from './chain';
import { openCheckpointWithAny, originOf, parseVerifierKeys, type ParsedVerifierKey } from './checkpoints';

export type Problem =
  | 'changed'
  | 'missing'
  | 'out of order'
  | 'unchained'
  | 'tail truncated after a checkpoint'
  | 'bad signature'
  | 'checkpoint key unknown'
  | 'checkpoint does not match';

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
  /** the rows of the requested time range (the whole chain is verified either way) */
  inRange: { rows: number; firstId: number | null; lastId: number | null };
}

/** A requested time range, seconds since the epoch; either end may be open. */
export interface VerifyRange {
  from?: number;
  to?: number;
}

export interface VerifyReport {
  ok: boolean;
  chains: ChainReport[];
  failures: Failure[];
  keyUsed: string | null;
}


/** Verify every chain of this database. `verifierKey`: the public key to check checkpoints with (text). */
export function verifyAudit(sqlite: Database.Database, verifierKeyText: string | undefined, range: VerifyRange = {}): VerifyReport {
  const { key, failures } = verifierKeyOf(verifierKeyText);
  const chains = CHAIN_NAMES.map((chain) => verifyChain(sqlite, chain, key, failures, range));
  return verifyReportOf(chains, failures, verifierKeyText);
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

function verifyChain(sqlite: Database.Database, chain: ChainName, key: readonly ParsedVerifierKey[] | undefined, failures: Failure[], range: VerifyRange): ChainReport {
  return verifyRowByRow(sqlite, chainVerifierFor(sqlite, chain, key, failures, range));
}

/** Feed a verifier every row of its chain, on this connection, in one statement; its report. */
export function verifyRowByRow(sqlite: Database.Database, verifier: ChainVerifier): ChainReport {
  // Rows as arrays, not objects (measured: half the time per row at a million rows): [id, ...columns, prev, row hash].
  const rows = sqlite.prepare(chainRowsSql(verifier.chain)).raw(true).iterate() as IterableIterator<unknown[]>;
  for (const row of rows) verifier.add(row);
  return verifier.finish();
}

/** A verifier of one chain of this database: where an archive left it and the checkpoints signed over it, read first. */
export function chainVerifierFor(sqlite: Database.Database, chain: ChainName, key: readonly ParsedVerifierKey[] | undefined, failures: Failure[], range: VerifyRange): ChainVerifier {
  const archive = sqlite
    .prepare<[string], { upToId: number; headHash: string }>('SELECT up_to_id AS upToId, head_hash AS headHash FROM audit_archives WHERE chain = ? ORDER BY up_to_id DESC LIMIT 1')
    .get(chain);
  const checkpoints = sqlite
    .prepare<[string], StoredCheckpoint>('SELECT id, size, head_hash AS headHash, note FROM audit_checkpoints WHERE chain = ? ORDER BY id')
    .all(chain);
  return new ChainVerifier(chain, archive, checkpoints, key, failures, range);
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
export interface StoredCheckpoint {
  id: number;
  size: number;
  headHash: string;
  note: string;
}

/** The rows of a chain as the verifier reads them, in chain order: [id, ...chained columns, prev_hash, row_hash]. */
export function chainRowsSql(chain: ChainName, after?: string): string {
  return chainSelect(chain, after ? ` WHERE id > ${after}` : '');
}

/** The same rows, of the id range its two parameters give (one run of a verification on several threads). */
export function chainRowsBetweenSql(chain: ChainName): string {
  return chainSelect(chain, ' WHERE id BETWEEN ? AND ?');
}

function chainSelect(chain: ChainName, where: string): string {
  return `SELECT id, ${CHAIN_COLUMNS[chain].join(', ')}, prev_hash, row_hash FROM ${chain}${where} ORDER BY id`;
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

  constructor(
    readonly chain: ChainName,
    private readonly archive: { upToId: number; headHash: string } | undefined,
    private readonly checkpoints: readonly StoredCheckpoint[],
    private readonly key: readonly ParsedVerifierKey[] | undefined,
    private readonly failures: Failure[],
    private readonly range: VerifyRange,
  ) {
    this.at = chainRowLayout(chain);
    this.last = this.at.prev;
    this.wanted = new Set(checkpoints.map((c) => c.size));
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
      report.legacyRows++;
      this.expectedId = id + 1;
      return;
    }
    this.started = true;
    report.firstTimestamp ??= timestamp;
    report.lastTimestamp = timestamp;
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

  /** After the last row: the head, and every checkpoint checked against the rows seen. */
  finish(): ChainReport {
    const { report, chain, key, archive } = this;
    report.headHash = this.started ? this.expectedPrev : null;
    for (const c of this.checkpoints) {
      if (!key) {
        this.fail('audit_checkpoints', c.id, 'checkpoint key unknown', 'no verifier key: give --public-key FILE, or keep the public keys in the key folder (beside the SQLite file, or SWARM_AUDIT_KEY_DIR)');
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
      if (archive && b.size <= archive.upToId) {
        report.checkpointsValid++;
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
    }
    return report;
  }
}
