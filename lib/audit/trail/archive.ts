/**
 * Retention: `swarm audit archive --before DATE -o FILE` moves the rows older than DATE out of both chains into one
 * signed, verifiable NDJSON bundle, and only after the bundle is written and re-verified removes them, in one
 * transaction that also records where the remaining chain starts (audit_archives) and the event retention.archived.
 * One implementation over the dialect port for both databases (archiveBefore). Nothing else deletes audit rows; how
 * the append-only triggers are passed is the one thing that differs (removePrefix): on SQLite they are lifted for that
 * one transaction; on PostgreSQL the rows go through swarm_archive_prefix (migration 0004), a SECURITY DEFINER function
 * of the tables' owner that removes a prefix of one chain up to the head the bundle's checkpoint signed, exactly as
 * many rows as the bundle holds, and records the cut in audit_archives in the same call: the application's role can
 * archive and nothing else (no row from the middle or the end, no removal without its record).
 *
 * Bundle lines: {"kind":"header",...}, then {"kind":"row","chain":...,"row":{...}} per row in id order, then one
 * {"kind":"checkpoint","chain":...,"note":...} per chain: a signed checkpoint of the last archived row, which
 * `swarm audit verify --bundle FILE` checks the rows against.
 */
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import type { DialectName, SqlDatabase, TxRunner, TxSteps } from '@/db/dialect';
import { AUDIT_TRAIL_LOCK, CHAIN_COLUMNS, CHAIN_NAMES, GENESIS_HASH, rowHash, type ChainName } from './chain';
import { AppError } from '@/lib/errors';
import { archiveExtension, openCheckpoint, originOf, parseVerifierKey, signCheckpoint, verifierKey, type ParsedVerifierKey, type SigningKey } from './checkpoints';

export interface ArchivedChain {
  chain: ChainName;
  rows: number;
  fromId: number | null;
  upToId: number | null;
  headHash: string | null;
  /** the signed checkpoint of the last archived row (an `archive` checkpoint), kept in the bundle and the archive record */
  note: string | null;
}

export interface ArchiveResult {
  file: string;
  sha256: string;
  before: number;
  chains: ArchivedChain[];
}

export type Row = Record<string, unknown> & { id: number; row_hash: string | null; prev_hash: string | null; timestamp: number };

/** The rows to archive in a chain: every row up to the first one at or after `before` (a contiguous prefix). */
function* prefixOf(tx: TxRunner, chain: ChainName, before: number): TxSteps<ChainPrefix> {
  const table = sql.identifier(chain);
  const r = yield* tx.one<{ min: number | null; max: number | null; firstKept: number | null }>(
    sql`SELECT min(id) AS "min", max(id) AS "max", (SELECT min(id) FROM ${table} WHERE timestamp >= ${before}) AS "firstKept" FROM ${table}`,
  );
  if (!r || r.min === null || r.max === null) return { chain, rows: [] };
  const end = r.firstKept === null ? r.max : r.firstKept - 1;
  if (end < r.min) return { chain, rows: [] };
  return { chain, rows: yield* tx.all<Row>(sql`SELECT * FROM ${table} WHERE id <= ${end} ORDER BY id`) };
}

/**
 * The cut-off of an archive checked against a compliance profile's retention (ActiveProfiles.retention): rows younger
 * than its minimum stay in the live trail (AppBase.archivableBefore applies it to an application's profiles). Throws
 * AppError naming the profile and its basis.
 */
export function archivableBefore(retention: { minDays: number; profile: string; basis: string } | undefined, before: number, now = Date.now() / 1000): number {
  if (retention && before > now - retention.minDays * 86_400) {
    const limit = new Date((now - retention.minDays * 86_400) * 1000).toISOString().slice(0, 10);
    throw new AppError(
      'CONFLICT',
      `The compliance profile ${retention.profile} keeps audit rows ${retention.minDays} days in the live trail (${retention.basis}); archive only rows before ${limit}.`,
    );
  }
  return before;
}

/** One chain's part of an archive: the rows to move out, in id order (empty: nothing older). */
export interface ChainPrefix {
  chain: ChainName;
  rows: readonly Row[];
}

/**
 * Write the bundle of these rows (each chain's followed by a signed checkpoint of its last row) to `file`, which must not
 * exist, and read it back and verify it: only what was written and verifies may then be removed. The same on SQLite
 * and PostgreSQL; throws, removing nothing, when the bundle does not verify.
 */
export function writeBundle(key: SigningKey, before: number, prefixes: readonly ChainPrefix[], file: string): ArchiveResult {
  const lines: string[] = [JSON.stringify({ kind: 'header', format: 'swarm-permissions audit archive 1', before, created_at: Date.now() / 1000 })];
  const chains: ArchivedChain[] = [];
  for (const { chain, rows } of prefixes) {
    if (rows.length === 0) {
      chains.push({ chain, rows: 0, fromId: null, upToId: null, headHash: null, note: null });
      continue;
    }
    const last = rows[rows.length - 1]!;
    if (!last.row_hash) throw new Error(`${chain}: the rows before ${new Date(before * 1000).toISOString()} were written before the chain began; they cannot be archived verifiably.`);
    for (const row of rows) lines.push(JSON.stringify({ kind: 'row', chain, row }));
    // An archive checkpoint (its `archive` line): the only kind verification accepts as the record of an archive, so
    // an ordinary checkpoint copied from the database can never stand in for one.
    const note = signCheckpoint(key, { origin: originOf(chain, key.name), size: last.id, headHash: last.row_hash, time: Date.now() / 1000, extensions: [archiveExtension(before)] });
    lines.push(JSON.stringify({ kind: 'checkpoint', chain, note }));
    chains.push({ chain, rows: rows.length, fromId: rows[0]!.id, upToId: last.id, headHash: last.row_hash, note });
  }
  const text = `${lines.join('\n')}\n`;
  writeFileSync(file, text, { flag: 'wx' });
  const check = verifyBundle(readFileSync(file, 'utf8'), verifierKey(key.name, key.raw));
  if (!check.ok) throw new Error(`The archive was written but does not verify (${check.problem}); nothing was removed.`);
  return { file, sha256: createHash('sha256').update(text).digest('hex'), before, chains };
}

/**
 * The chained event that records an archive (retention.archived): verification requires one naming each archive
 * record's chain, last row and head (checkArchivesRecorded). Record it in the transaction that removes the rows.
 */
export function archivedEvent(res: ArchiveResult, actor: string) {
  return { kind: 'audit', type: 'retention.archived', actor, outcome: 'succeeded', target: res.file, detail: { before: res.before, sha256: res.sha256, chains: res.chains } } as const;
}

/** What an archive has removed from one chain, as the bundle holds it. */
type Removal = { chain: ChainName; upToId: number; headHash: string | null; rows: number; file: string; sha256: string; note: string | null };

/**
 * Remove an archived prefix of a chain past its append-only triggers and record the cut (audit_archives): what differs
 * between the databases' schemas (migration 0004 on PostgreSQL), in one place.
 */
const removePrefix: Record<DialectName, (tx: TxRunner, r: Removal) => TxSteps<void>> = {
  *sqlite(tx, r) {
    const table = sql.identifier(r.chain);
    const trigger = sql.identifier(`${r.chain}_no_delete`);
    yield* tx.run(sql`DROP TRIGGER ${trigger}`);
    yield* tx.run(sql`DELETE FROM ${table} WHERE id <= ${r.upToId}`);
    yield* tx.run(sql.raw(`CREATE TRIGGER ${r.chain}_no_delete BEFORE DELETE ON ${r.chain} BEGIN SELECT RAISE(ABORT, '${r.chain} is append-only: DELETE is refused'); END`));
    yield* tx.run(
      sql`INSERT INTO audit_archives (chain, up_to_id, head_hash, rows, file, file_sha256, archived_at, note) VALUES (${r.chain}, ${r.upToId}, ${r.headHash}, ${r.rows}, ${r.file}, ${r.sha256}, ${Date.now() / 1000}, ${r.note})`,
    );
  },
  *postgres(tx, r) {
    yield* tx.one(sql`SELECT swarm_archive_prefix(${r.chain}, ${r.upToId}, ${r.headHash}, ${r.rows}, ${r.file}, ${r.sha256}, ${r.note})`);
  },
};

/**
 * Archive the rows older than `before` (seconds) of both chains into `file` (which must not exist), then remove them.
 * `onArchived` runs inside the removing transaction (record retention.archived there, e.g. with the recorder's
 * recordWithin: it commits with the removal or not at all). A failed removal removes nothing and leaves no bundle.
 */
export async function archiveBefore(
  database: SqlDatabase,
  key: SigningKey,
  before: number,
  file: string,
  onArchived: (r: ArchiveResult, tx: TxRunner) => TxSteps<unknown> = function* () {},
): Promise<ArchiveResult> {
  // One snapshot for both chains: rows appended meanwhile are later than `before` anyway, and never half seen.
  const prefixes = await database.transaction(
    function* (tx) {
      const out: ChainPrefix[] = [];
      for (const chain of CHAIN_NAMES) out.push(yield* prefixOf(tx, chain, before));
      return out;
    },
    { readOnly: true },
  );
  const result = writeBundle(key, before, prefixes, file);
  try {
    // Appends wait for the removal (the trail's lock): a writer that reads the head of a chain archived whole finds it
    // in audit_archives.
    await database.transaction(
      function* (tx) {
        for (const c of result.chains) {
          if (c.upToId === null) continue;
          yield* removePrefix[database.dialect](tx, { chain: c.chain, upToId: c.upToId, headHash: c.headHash, rows: c.rows, file, sha256: result.sha256, note: c.note });
        }
        yield* onArchived(result, tx);
      },
      { serialise: AUDIT_TRAIL_LOCK },
    );
  } catch (error) {
    // Nothing was archived (the removal is one transaction): no bundle is left to be taken for an archive.
    rmSync(file, { force: true });
    if ((error as { code?: string }).code === '42501') {
      throw new AppError('FORBIDDEN', `This database role may not archive (${(error as Error).message}): run swarm audit archive as the owner of the tables (docs/deployment.md). Nothing was archived.`);
    }
    throw error;
  }
  return result;
}

export type BundleCheck = { ok: true; rows: Record<string, number> } | { ok: false; problem: string };

/** An archive bundle at hand: where it was read from, and its text. */
export interface ArchiveBundle {
  file: string;
  text: string;
}

type BundleItem = { line: number; kind: 'row'; chain: ChainName; row: Row } | { line: number; kind: 'checkpoint'; chain: string; note: string } | { line: number; kind: 'not JSON' };

/** The lines of a bundle that say something: its rows (of a known chain) and its checkpoints, with their line numbers. */
function* bundleItems(text: string): Generator<BundleItem> {
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    let item: { kind?: string; chain?: ChainName; row?: Row; note?: string };
    try {
      item = JSON.parse(line) as typeof item;
    } catch {
      yield { line: i + 1, kind: 'not JSON' };
      continue;
    }
    if (item.kind === 'row' && item.chain && item.row && item.chain in CHAIN_COLUMNS) yield { line: i + 1, kind: 'row', chain: item.chain, row: item.row };
    else if (item.kind === 'checkpoint' && item.chain && item.note) yield { line: i + 1, kind: 'checkpoint', chain: item.chain, note: item.note };
  }
}

/** A bundle row's hash as its content gives it (what its row_hash must be). */
const computedHash = (chain: ChainName, r: Row): string => rowHash(r.prev_hash ?? GENESIS_HASH, r.id, CHAIN_COLUMNS[chain].map((c) => r[c] ?? null));

/**
 * The hashes of `chain` at the rows `sizes` (a size k: the hash of row k) in the run of rows of these bundles that ends
 * at row `upTo`: consecutive ids, each row's hash recomputed from its content and following the one before (the run's
 * first row also gives the hash before it, its prev_hash). What shows that an archive's head extends a witnessed
 * checkpoint; no signature is needed, since the hashes are compared with heads signed elsewhere. Empty when no run
 * reaches `upTo` (several bundles of successive archives may make one run).
 */
export function bundleHashesAt(bundles: readonly ArchiveBundle[], chain: ChainName, upTo: number, sizes: readonly number[]): Map<number, string> {
  const rows = new Map<number, Row>();
  for (const b of bundles) for (const item of bundleItems(b.text)) if (item.kind === 'row' && item.chain === chain && item.row.id <= upTo) rows.set(item.row.id, item.row);
  const wanted = new Set(sizes);
  const found = new Map<number, string>();
  let prev: { id: number; hash: string } | undefined;
  for (const id of [...rows.keys()].sort((a, b) => a - b)) {
    const r = rows.get(id)!;
    const hash = computedHash(chain, r);
    if (hash !== r.row_hash) {
      // A changed row ends every run through it.
      found.clear();
      prev = undefined;
      continue;
    }
    if (!prev || id !== prev.id + 1 || r.prev_hash !== prev.hash) {
      found.clear();
      if (wanted.has(id - 1) && r.prev_hash) found.set(id - 1, r.prev_hash);
    }
    if (wanted.has(id)) found.set(id, hash);
    prev = { id, hash };
  }
  return prev?.id === upTo ? found : new Map();
}

/**
 * Verify an archive bundle: each chain's rows recompute from their first prev_hash, and the bundle's signed checkpoint
 * (checked with the verifier key) names the last row's hash.
 */
export function verifyBundle(text: string, verifierKeyText: string): BundleCheck {
  let verifier: ParsedVerifierKey;
  try {
    verifier = parseVerifierKey(verifierKeyText);
  } catch (e) {
    return { ok: false, problem: (e as Error).message };
  }
  const prev = new Map<string, { id: number; hash: string }>();
  const counts: Record<string, number> = {};
  const checkpoints: { chain: string; note: string }[] = [];
  for (const item of bundleItems(text)) {
    if (item.kind === 'not JSON') return { ok: false, problem: `line ${item.line} is not JSON` };
    if (item.kind === 'checkpoint') {
      checkpoints.push({ chain: item.chain, note: item.note });
      continue;
    }
    const r = item.row;
    const last = prev.get(item.chain);
    if (last && r.id !== last.id + 1) return { ok: false, problem: `${item.chain}: row ${last.id + 1} is missing from the bundle` };
    if (last && r.prev_hash !== last.hash) return { ok: false, problem: `${item.chain}: row ${r.id} does not follow row ${last.id}` };
    const computed = computedHash(item.chain, r);
    if (computed !== r.row_hash) return { ok: false, problem: `${item.chain}: row ${r.id} was changed` };
    prev.set(item.chain, { id: r.id, hash: computed });
    counts[item.chain] = (counts[item.chain] ?? 0) + 1;
  }
  for (const [chain, last] of prev) {
    const c = checkpoints.find((x) => x.chain === chain);
    if (!c) return { ok: false, problem: `${chain}: the bundle has no signed checkpoint` };
    const opened = openCheckpoint(c.note, verifier);
    if (!opened.ok) return { ok: false, problem: `${chain}: ${opened.problem}` };
    if (opened.body.size !== last.id || opened.body.headHash !== last.hash) return { ok: false, problem: `${chain}: the rows end at ${last.id}, the checkpoint says ${opened.body.size} (tail cut or changed)` };
  }
  return { ok: true, rows: counts };
}
