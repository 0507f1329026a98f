/**
 * Signed checkpoints of the audit chains, in the C2SP signed-note checkpoint format, so that transparency-log tooling
 * and witnesses can read and cosign them:
 *
 *   swarm-permissions/permission_denials      <- origin: the installation's key name and the chain
 *   1234                                      <- size: the id of the newest row covered (ids are consecutive)
 *   3q2+7w==...                               <- base64 of the chain head (the row_hash of row `size`)
 *   time 1763856000                           <- extension line: when it was signed (seconds)
 *
 *   — swarm-permissions <base64(key id ‖ Ed25519 signature)>
 *
 * The head is a hash-chain head, not an RFC 6962 Merkle root: a witness can keep and cosign it, and verification
 * recomputes the chain up to it. Signing uses node:crypto Ed25519 with a key pair created at first start beside the
 * database. Deleting the newest rows *and* their checkpoints is only detectable against a checkpoint kept elsewhere
 * (`swarm audit checkpoint` prints the latest for an auditor to keep).
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, sign, verify, type KeyObject } from 'node:crypto';
import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { sql } from 'drizzle-orm';
import type { SqlDatabase, SqliteDatabase, TxRunner, TxSteps } from '@/db/dialect';
import { AUDIT_TRAIL_LOCK, CHAIN_COLUMNS, CHAIN_NAMES, type ChainName, type Head } from './chain';
import { ExtensionCheck, newestHead, witnessRow } from './extension';
import { latestInWitnessDir, readSignedHeads, recordInWitnessDir, signedHeadsFile, WitnessClient, writeSignedHeads, type RowsBetween, type WitnessedCheckpoint } from './witness';
import { brand } from '@/lib/errors';

export const KEY_NAME = 'swarm-permissions';
const ED25519 = 0x01;
/** The DER prefix of an Ed25519 SubjectPublicKeyInfo; the raw 32-byte key follows it. */
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export interface SigningKey {
  name: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** the raw 32-byte public key */
  raw: Buffer;
}

/** The note key id: the first 4 bytes of SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key). */
export function keyId(name: string, raw: Buffer): Buffer {
  return createHash('sha256').update(name).update(Buffer.from([0x0a, ED25519])).update(raw).digest().subarray(0, 4);
}

/** The verifier key an auditor keeps: `<name>+<hex key id>+<base64(0x01 ‖ public key)>`. */
export function verifierKey(name: string, raw: Buffer): string {
  return `${name}+${keyId(name, raw).toString('hex')}+${Buffer.concat([Buffer.from([ED25519]), raw]).toString('base64')}`;
}

export interface ParsedVerifierKey {
  name: string;
  id: Buffer;
  publicKey: KeyObject;
}

export function parseVerifierKey(text: string): ParsedVerifierKey {
  const m = /^([^+\s]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/=]+)$/.exec(text.trim());
  if (!m) throw new Error('not a verifier key: expected <name>+<8 hex digits>+<base64>, as `swarm audit key` prints it');
  const bytes = Buffer.from(m[3]!, 'base64');
  if (bytes.length !== 33 || bytes[0] !== ED25519) throw new Error('the verifier key is not an Ed25519 key');
  const raw = bytes.subarray(1);
  const id = keyId(m[1]!, raw);
  if (id.toString('hex') !== m[2]) throw new Error('the verifier key is inconsistent: its key id does not match its name and key');
  return { name: m[1]!, id, publicKey: createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' }) };
}

/**
 * A key ring: every verifier key of the text, one per line (blank lines and `#` comments ignored), so that checkpoints
 * signed before a key rotation verify beside those signed after it.
 */
export function parseVerifierKeys(text: string): ParsedVerifierKey[] {
  const keys = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map(parseVerifierKey);
  if (keys.length === 0) throw new Error('no verifier key in the text: expected <name>+<8 hex digits>+<base64>, as `swarm audit key` prints it');
  return keys;
}

/** Open a checkpoint with whichever key of the ring signed it (the note names its key by name and id). */
export function openCheckpointWithAny(note: string, keys: readonly ParsedVerifierKey[]): (NoteCheck & { ok: true; key: ParsedVerifierKey }) | (NoteCheck & { ok: false }) {
  let problem: string | undefined;
  for (const key of keys) {
    const opened = openCheckpoint(note, key);
    if (opened.ok) return { ...opened, key };
    // A key that signed the note but whose signature fails says more than the keys that did not sign it.
    if (!problem || !opened.problem.startsWith('checkpoint key unknown')) problem = opened.problem;
  }
  return { ok: false, problem: problem ?? 'checkpoint key unknown' };
}

/** A PostgreSQL database has no folder of its own for the key: SWARM_AUDIT_KEY_DIR must say where it is. */
export class KeyDirRequired extends Error {
  static readonly kind = 'KeyDirRequired';
  readonly code = 'KEY_DIR_REQUIRED';
  constructor() {
    super(
      'On PostgreSQL the audit signing key has no database folder to live beside: set SWARM_AUDIT_KEY_DIR to the folder that holds audit-signing-key.pem (the same folder on every server, so that they all sign with one key).',
    );
    brand(this, KeyDirRequired);
  }
}

/**
 * Where the key pair lives: beside the database (SWARM_AUDIT_KEY_DIR overrides). For a postgres:// URL only
 * SWARM_AUDIT_KEY_DIR can say it (KeyDirRequired otherwise): the URL is no path, and a key made in a folder derived from
 * it would be a second key nobody keeps.
 */
export function keyDirFor(dbPath: string, env: Readonly<Record<string, string | undefined>> = process.env): string {
  if (env.SWARM_AUDIT_KEY_DIR) return resolve(/*turbopackIgnore: true*/ env.SWARM_AUDIT_KEY_DIR);
  if (/^postgres(ql)?:/i.test(dbPath.trim())) throw new KeyDirRequired();
  return resolve(/*turbopackIgnore: true*/ dirname(resolve(/*turbopackIgnore: true*/ dbPath)));
}

function keyFiles(dir: string) {
  // Paths chosen at run time: the build must not trace the file system for them.
  return { privateFile: join(/*turbopackIgnore: true*/ dir, 'audit-signing-key.pem'), publicFile: join(/*turbopackIgnore: true*/ dir, 'audit-signing-key.pub') };
}

/** The folder has no signing key (PostgreSQL: the key is made once, by `swarm audit key`, and installed on every server). */
export class SigningKeyMissing extends Error {
  static readonly kind = 'SigningKeyMissing';
  readonly code = 'SIGNING_KEY_MISSING';
  constructor(dir: string) {
    super(
      `There is no audit signing key in ${dir} (audit-signing-key.pem): install the installation's key folder there, or create the key once with SWARM_AUDIT_KEY_DIR=${dir} npx swarm audit key (docs/deployment.md). A new key is never made here on its own: checkpoints signed by a key nobody keeps would fail every verification.`,
    );
    brand(this, SigningKeyMissing);
  }
}

export function hasSigningKey(dir: string): boolean {
  return existsSync(keyFiles(dir).privateFile);
}

/** The signing key of this folder, which must be there (SigningKeyMissing otherwise). */
export function loadSigningKey(dir: string, name = KEY_NAME): SigningKey {
  if (!hasSigningKey(dir)) throw new SigningKeyMissing(dir);
  return loadOrCreateSigningKey(dir, name);
}

/** The installation's signing key, created (private key readable by the owner only) on first use. */
export function loadOrCreateSigningKey(dir: string, name = KEY_NAME): SigningKey {
  const { privateFile, publicFile } = keyFiles(dir);
  const privateKey = existsSync(privateFile) ? createPrivateKey(readFileSync(privateFile)) : createKeyOnce(dir, privateFile);
  const publicKey = createPublicKey(privateKey);
  const raw = (publicKey.export({ type: 'spki', format: 'der' }) as Buffer).subarray(SPKI_PREFIX.length);
  const key = { name, privateKey, publicKey, raw };
  if (!existsSync(publicFile)) writeAtomically(publicFile, `${verifierKey(name, raw)}\n`);
  return key;
}

/**
 * A new private key, or the one another process made first: processes that start together on a fresh key folder (the
 * servers of one machine, a server and the CLI) must all sign with one key, and none may read a half-written file.
 * The key is written in full under a name of its own, then linked to its place: the first link wins, the others read it.
 */
function createKeyOnce(dir: string, privateFile: string): KeyObject {
  mkdirSync(dir, { recursive: true });
  const fresh = generateKeyPairSync('ed25519').privateKey;
  const pending = `${privateFile}.${randomUUID()}.tmp`;
  writeFileSync(pending, fresh.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
  try {
    linkSync(pending, privateFile);
    chmodSync(privateFile, 0o600);
    return fresh;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return createPrivateKey(readFileSync(privateFile));
  } finally {
    rmSync(pending, { force: true });
  }
}

/** Write a file whole: a reader sees the old content or the new one, never a part. */
function writeAtomically(file: string, content: string): void {
  const pending = `${file}.${randomUUID()}.tmp`;
  writeFileSync(pending, content);
  renameSync(pending, file);
}

/** SWARM_AUDIT_PUBLIC_KEYS names a key ring that cannot be read. */
export class PinnedKeysUnreadable extends Error {
  static readonly kind = 'PinnedKeysUnreadable';
  readonly code = 'PINNED_KEYS_UNREADABLE';
  constructor(file: string, cause: string) {
    super(`SWARM_AUDIT_PUBLIC_KEYS names ${file}, which cannot be used as the trusted audit keys: ${cause}`);
    brand(this, PinnedKeysUnreadable);
  }
}

/**
 * The verifier keys trusted to have signed this installation's checkpoints, one per line, or undefined when there are
 * none:
 * - the key ring pinned in configuration: SWARM_AUDIT_PUBLIC_KEYS names a file of verifier keys (the key in force and
 *   every key it replaced, as `swarm audit key` prints them), kept where the database's users cannot write;
 * - the public half of the signing key in the key folder, derived from the private key itself (whoever can replace
 *   that file can sign anyway).
 * Never a `.pub` file that merely appears in a folder: a key dropped beside the database would otherwise vouch for
 * checkpoints its author signed.
 */
export function trustedVerifierKeys(dir: string | undefined, env: Readonly<Record<string, string | undefined>> = process.env): string | undefined {
  const keys: string[] = [];
  const pinned = env.SWARM_AUDIT_PUBLIC_KEYS?.trim();
  if (pinned) {
    let text: string;
    try {
      text = readFileSync(resolve(/*turbopackIgnore: true*/ pinned), 'utf8');
      parseVerifierKeys(text);
    } catch (e) {
      throw new PinnedKeysUnreadable(pinned, (e as Error).message);
    }
    keys.push(...text.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#')));
  }
  const own = dir === undefined ? undefined : ownVerifierKey(dir);
  if (own && !keys.includes(own)) keys.push(own);
  return keys.length > 0 ? keys.join('\n') : undefined;
}

/** The verifier key of the private key in this folder, if there is one this process may read. */
export function ownVerifierKey(dir: string, name = KEY_NAME): string | undefined {
  const { privateFile } = keyFiles(dir);
  if (!existsSync(privateFile)) return undefined;
  try {
    const publicKey = createPublicKey(createPrivateKey(readFileSync(privateFile)));
    return verifierKey(name, (publicKey.export({ type: 'spki', format: 'der' }) as Buffer).subarray(SPKI_PREFIX.length));
  } catch {
    return undefined;
  }
}

/** Whether `inner` is `outer` or inside it (both resolved; no symbolic links followed). */
export function isInside(inner: string, outer: string): boolean {
  const rel = relative(resolve(/*turbopackIgnore: true*/ outer), resolve(/*turbopackIgnore: true*/ inner));
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** The private key sits in the database's folder, where whoever can edit the database can re-sign it. */
export class KeyBesideDatabase extends Error {
  static readonly kind = 'KeyBesideDatabase';
  readonly code = 'KEY_BESIDE_DATABASE';
  constructor(keyDir: string, dbPath: string) {
    super(
      `The audit signing key folder (${keyDir}) is inside the database's folder (${dirname(resolve(/*turbopackIgnore: true*/ dbPath))}): whoever can edit the database could re-sign its trail. Set SWARM_AUDIT_KEY_DIR to a folder the database's users cannot write (another volume or a secret mount; move an existing audit-signing-key.pem and .pub there), or set SWARM_AUDIT_KEY_BESIDE_DB=1 to keep it there knowingly (a demo, a test).`,
    );
    brand(this, KeyBesideDatabase);
  }
}

/**
 * A server refuses a signing key inside the folder of its SQLite database unless SWARM_AUDIT_KEY_BESIDE_DB=1 says it
 * is meant (the demo). PostgreSQL has no folder: its key folder is always named.
 */
export function assertKeyApart(dbPath: string, env: Readonly<Record<string, string | undefined>> = process.env): void {
  if (/^postgres(ql)?:/i.test(dbPath.trim()) || env.SWARM_AUDIT_KEY_BESIDE_DB === '1') return;
  const keyDir = keyDirFor(dbPath, env);
  if (isInside(keyDir, dirname(resolve(/*turbopackIgnore: true*/ dbPath)))) throw new KeyBesideDatabase(keyDir, dbPath);
}

export interface CheckpointBody {
  origin: string;
  size: number;
  /** hex row_hash of row `size` */
  headHash: string;
  time: number;
  /**
   * Extension lines after `time` (C2SP: opaque to other tooling). `archive <before>` marks the checkpoint that ends an
   * archived prefix: only `swarm audit archive`, holding the key, signs one, so an ordinary checkpoint can never be
   * passed off as the record of an archive.
   */
  extensions?: string[];
}

/** The extension line of an archive's checkpoint (the cut-off, seconds). */
export function archiveExtension(before: number): string {
  return `archive ${Math.floor(before)}`;
}

export function isArchiveCheckpoint(body: CheckpointBody): boolean {
  return (body.extensions ?? []).some((l) => /^archive \d+$/.test(l));
}

export function originOf(chain: ChainName, name = KEY_NAME): string {
  return `${name}/${chain}`;
}

export function checkpointText(b: CheckpointBody): string {
  const extensions = (b.extensions ?? []).map((l) => `${l}\n`).join('');
  return `${b.origin}\n${b.size}\n${Buffer.from(b.headHash, 'hex').toString('base64')}\ntime ${Math.floor(b.time)}\n${extensions}`;
}

/** Sign a checkpoint body: the note text, a blank line, and one signature line. */
export function signCheckpoint(key: SigningKey, body: CheckpointBody): string {
  const text = checkpointText(body);
  const signature = sign(null, Buffer.from(text, 'utf8'), key.privateKey);
  return `${text}\n\u2014 ${key.name} ${Buffer.concat([keyId(key.name, key.raw), signature]).toString('base64')}\n`;
}

export type NoteCheck = { ok: true; body: CheckpointBody } | { ok: false; problem: string };

/** Verify a signed checkpoint against a verifier key and parse its body. */
export function openCheckpoint(note: string, key: ParsedVerifierKey): NoteCheck {
  const split = note.lastIndexOf('\n\n');
  if (split < 0) return { ok: false, problem: 'not a signed note (no blank line before the signatures)' };
  const text = note.slice(0, split + 1);
  const sigLines = note.slice(split + 2).split('\n').filter((l) => l !== '');
  let found = false;
  for (const line of sigLines) {
    const m = /^\u2014 (\S+) ([A-Za-z0-9+/=]+)$/.exec(line);
    if (!m) return { ok: false, problem: 'a malformed signature line' };
    const bytes = Buffer.from(m[2]!, 'base64');
    if (m[1] !== key.name || bytes.length < 4 || !bytes.subarray(0, 4).equals(key.id)) continue;
    found = true;
    if (!verify(null, Buffer.from(text, 'utf8'), key.publicKey, bytes.subarray(4))) return { ok: false, problem: 'bad signature' };
    break;
  }
  if (!found) return { ok: false, problem: `checkpoint key unknown: no signature by ${key.name}+${key.id.toString('hex')}` };
  const lines = text.split('\n');
  const size = Number(lines[1]);
  const head = Buffer.from(lines[2] ?? '', 'base64');
  const time = /^time (\d+)$/.exec(lines[3] ?? '');
  if (!lines[0] || !/^\d+$/.test(lines[1] ?? '') || head.length !== 32 || !time) return { ok: false, problem: 'a malformed checkpoint body' };
  const extensions = lines.slice(4, -1);
  return { ok: true, body: { origin: lines[0], size, headHash: head.toString('hex'), time: Number(time[1]), ...(extensions.length > 0 ? { extensions } : {}) } };
}

/**
 * Whether a chain's head is due for a checkpoint: it moved past the last one, by `minRows` rows at least. The same rule
 * on SQLite and PostgreSQL.
 */
export function checkpointDue(headId: number, lastSize: number, minRows = 1): boolean {
  return headId > lastSize && headId - lastSize >= minRows;
}

/** A stored checkpoint of a chain head: the row to insert into audit_checkpoints and the note to hand out. */
export function checkpointOf(key: SigningKey, chain: ChainName, head: { id: number; hash: string }, time = Date.now() / 1000) {
  const note = signCheckpoint(key, { origin: originOf(chain, key.name), size: head.id, headHash: head.hash, time });
  return { chain, size: head.id, headHash: head.hash, time, note };
}

/** What a signer refused to sign, and why (recorded as audit.checkpoint_refused). */
export interface SigningRefusal {
  chain: ChainName;
  /** the head it was asked to sign */
  head: { id: number; hash: string };
  /** the head it signed last (from the key folder, a witness or the database), which the new one does not extend */
  lastSigned: { size: number; headHash: string; time: number };
  problem: string;
}

/** The security event of a refused head (the same on both databases). */
export function checkpointRefusedEvent(r: SigningRefusal) {
  return {
    kind: 'audit',
    type: 'audit.checkpoint_refused',
    actor: 'system',
    outcome: 'refused',
    target: r.chain,
    detail: { chain: r.chain, head: r.head, last_signed: { size: r.lastSigned.size, head_hash: r.lastSigned.headHash, time: r.lastSigned.time }, problem: r.problem },
  } as const;
}

/** Where a signer looks for the heads it signed before, and where it delivers what it signs. */
export interface SignerOptions {
  /** the key folder: audit-signed-heads.<database>.json there keeps the newest head signed with its key */
  keyDir?: string;
  /** the database signed for (SWARM_DB): the key folder keeps one record per database */
  database?: string;
  /** witness folders, each given every checkpoint signed (witness.ts) */
  witnessDirs?: readonly string[];
  /** witness servers (swarm audit witness), each sent every checkpoint signed with the rows it needs */
  witnessUrls?: readonly string[];
  /** told once per chain and problem when a head is refused */
  onRefused?: (refusal: SigningRefusal) => void;
  /** the pinned key ring (trustedVerifierKeys): heads signed by a key it names (before a rotation) count as signed */
  trustedKeys?: string;
}

/**
 * What a signer of either database does around a signature: the newest head signed before (the key folder's record,
 * the witness folders, the database's own newest checkpoint that this key ring verifies), and after signing, the
 * record and the witnesses. The same on SQLite and PostgreSQL.
 */
export class SigningGuard {
  private readonly refused = new Set<string>();
  private readonly ring: ParsedVerifierKey[];

  constructor(
    readonly key: SigningKey,
    private readonly options: SignerOptions,
  ) {
    this.ring = [{ name: key.name, id: keyId(key.name, key.raw), publicKey: key.publicKey }, ...(options.trustedKeys ? parseVerifierKeys(options.trustedKeys) : [])];
  }

  /** The newest head of `chain` known to have been signed with this key (or by the database's checkpoints). */
  lastSigned(chain: ChainName, inDatabase: { size: number; headHash: string; note: string } | undefined): WitnessedCheckpoint | undefined {
    const known: (WitnessedCheckpoint | undefined)[] = [];
    if (this.options.keyDir) known.push(readSignedHeads(this.options.keyDir, this.options.database).get(chain));
    for (const dir of this.options.witnessDirs ?? []) known.push(latestInWitnessDir(dir).get(chain));
    if (inDatabase) known.push({ chain, size: inDatabase.size, headHash: inDatabase.headHash, time: 0, note: inDatabase.note });
    // Only what this key really signed counts: a line anyone wrote into a file proves nothing.
    return newestHead(known.filter((c): c is WitnessedCheckpoint => c !== undefined && this.signedByUs(c, chain)));
  }

  private signedByUs(c: WitnessedCheckpoint, chain: ChainName): boolean {
    const opened = openCheckpointWithAny(c.note, this.ring);
    return opened.ok && opened.body.origin === originOf(chain, this.key.name) && opened.body.size === c.size && opened.body.headHash === c.headHash;
  }

  /**
   * A refused head: told once per chain and head signed last (the problem's words name the row reached, which moves
   * as rows are appended), so a timer that keeps trying neither floods the log nor the trail.
   */
  refuse(refusal: SigningRefusal): void {
    const id = `${refusal.chain}:${refusal.lastSigned.size}:${refusal.lastSigned.headHash}`;
    if (this.refused.has(id)) return;
    this.refused.add(id);
    console.error(
      `Refusing to sign the head of ${refusal.chain} (row ${refusal.head.id}): ${refusal.problem}. Nothing is signed until the trail extends the head signed last again: check it with swarm audit verify --witness. If this database was replaced on purpose (a new installation with the same key), move ${this.options.keyDir ? signedHeadsFile(this.options.keyDir, this.options.database) : 'audit-signed-heads.json'} out of the key folder.`,
    );
    this.options.onRefused?.(refusal);
  }

  private client: WitnessClient | undefined;

  /** Where witness servers get the rows between two checkpoints (the signer's database). */
  witnessRows(rowsBetween: RowsBetween): void {
    const urls = this.options.witnessUrls ?? [];
    if (urls.length === 0) return;
    this.client = new WitnessClient(urls, rowsBetween, (url, c, error) => {
      console.error(`The witness ${url} refused the checkpoint of ${c.chain} at row ${c.size}: ${error}`);
      this.options.onRefused?.({ chain: c.chain, head: { id: c.size, hash: c.headHash }, lastSigned: { size: c.size, headHash: c.headHash, time: c.time }, problem: `the witness ${url} refused it: ${error}` });
    });
  }

  /** Whether this signer delivers to witness servers (SWARM_AUDIT_WITNESSES names a URL). */
  get delivers(): boolean {
    return this.client !== undefined;
  }

  /** The deliveries to witness servers still under way (a test, a shutdown waits for them). */
  delivered(): Promise<void> {
    return this.client?.deliver([]) ?? Promise.resolve();
  }

  /** After the checkpoints are committed: remembered in the key folder, delivered to every witness. */
  signed(checkpoints: readonly WitnessedCheckpoint[]): void {
    void this.client?.deliver(checkpoints);
    if (checkpoints.length === 0) return;
    if (this.options.keyDir) writeSignedHeads(this.options.keyDir, checkpoints, this.options.database);
    for (const dir of this.options.witnessDirs ?? []) {
      try {
        recordInWitnessDir(dir, checkpoints);
      } catch (error) {
        // The checkpoint stands in the database; the witness catches up with the next one.
        console.error(`Delivering a checkpoint to the witness folder ${dir} failed.`, error);
      }
    }
  }
}

/** How many rows of a chain are read at a time. */
export const ROWS_PAGE = 5_000;

/**
 * The rows of a chain after one id up to another, at most a page of them, in chain order, as ExtensionCheck, a witness
 * server and verifyTrail read them: [id, ...chained columns, prev_hash, row_hash].
 */
export function* rowsAfter(tx: TxRunner, chain: ChainName, after: number, upTo: number): TxSteps<unknown[][]> {
  // The column names are the chain's own constants, never input.
  const columns = sql.raw(CHAIN_COLUMNS[chain].join(', '));
  const rows = yield* tx.all<Record<string, unknown>>(
    sql`SELECT id, ${columns}, prev_hash, row_hash FROM ${sql.identifier(chain)} WHERE id > ${after} AND id <= ${upTo} ORDER BY id LIMIT ${ROWS_PAGE}`,
  );
  // A row's values in the order selected (none of the column names looks like an array index, which would come first).
  return rows.map((r) => Object.values(r));
}

/** Every row of a chain after one id up to another, page by page. */
function* allRowsAfter(tx: TxRunner, chain: ChainName, after: number, upTo: number): TxSteps<unknown[][]> {
  const out: unknown[][] = [];
  for (let from = after; from < upTo; ) {
    const page = yield* rowsAfter(tx, chain, from, upTo);
    out.push(...page);
    if (page.length < ROWS_PAGE) break;
    from = page[page.length - 1]![0] as number;
  }
  return out;
}

/**
 * Writes checkpoints of the chains of one database (either: written once over the dialect port): when the head moved,
 * on a timer and at shutdown. The signing takes the audit trail's lock (AUDIT_TRAIL_LOCK: SQLite's writer lock, an
 * advisory lock on PostgreSQL) that appenders hold from their first row to their commit, so no append is half done
 * under it and two signers (two servers, or a server and `swarm audit checkpoint`) take turns: the second sees the
 * first's checkpoint and signs nothing for a head that did not move. Checkpoint ids are given under that lock, one more
 * than the newest, so they stay gapless. The heads are read and checked before it (the rows are append-only, so a head
 * read stays), so appends wait only for a signature and an insert per chain.
 *
 * Two drivers of the same steps: `checkpoint()` awaited, and on SQLite SqliteCheckpointer's, done before it returns: a
 * process's last checkpoint at exit, where nothing can be awaited.
 */
export class Checkpointer {
  readonly guard: SigningGuard;

  constructor(
    private readonly database: SqlDatabase,
    private readonly key: SigningKey,
    options: SignerOptions = {},
  ) {
    this.guard = new SigningGuard(key, options);
    this.guard.witnessRows(async (chain, afterId, upToId) => {
      const rows = await database.transaction((tx) => allRowsAfter(tx, chain, afterId, upToId), { readOnly: true });
      return rows.map((row) => witnessRow(chain, row));
    });
  }

  /**
   * The head of `chain` to sign, when it moved and extends the head signed last; undefined otherwise (a refusal is
   * reported through the guard).
   */
  private *signable(tx: TxRunner, chain: ChainName, minRows: number | undefined): TxSteps<Head | undefined> {
    const table = sql.identifier(chain);
    const head = yield* tx.one<{ id: number; hash: string | null }>(sql`SELECT id, row_hash AS "hash" FROM ${table} ORDER BY id DESC LIMIT 1`);
    const inDb = yield* tx.one<{ size: number; headHash: string; note: string }>(
      sql`SELECT size, head_hash AS "headHash", note FROM audit_checkpoints WHERE chain = ${chain} ORDER BY id DESC LIMIT 1`,
    );
    if (!head?.hash) {
      // Nothing chained yet (an empty chain, or only rows copied from before the chain began): unless this chain was
      // signed before, and a head without a hash means its hashes were removed. Never signed over; said once.
      const before = head ? this.guard.lastSigned(chain, inDb) : undefined;
      if (head && before && before.size > 0) {
        this.guard.refuse({ chain, head: { id: head.id, hash: '' }, lastSigned: before, problem: `row ${head.id} has no hash, but this chain was signed up to row ${before.size}: its hashes were removed` });
      }
      return undefined;
    }
    const signed = { id: head.id, hash: head.hash };
    if (!checkpointDue(head.id, inDb?.size ?? 0, minRows)) return undefined;
    const last = this.guard.lastSigned(chain, inDb);
    if (!last) return signed;
    const archived = (yield* tx.one<{ upTo: number | null }>(sql`SELECT max(up_to_id) AS "upTo" FROM audit_archives WHERE chain = ${chain}`))?.upTo ?? 0;
    const at = last.size <= archived ? 'archived' : ((yield* tx.one<{ hash: string | null }>(sql`SELECT row_hash AS "hash" FROM ${table} WHERE id = ${last.size}`))?.hash ?? null);
    const check = new ExtensionCheck(chain, last, at, { id: head.id });
    for (let after = last.size; after < head.id; ) {
      const page = yield* rowsAfter(tx, chain, after, head.id);
      if (page.length === 0 || !page.every((row) => check.add(row))) break;
      after = page[page.length - 1]![0] as number;
    }
    const problem = check.result();
    if (problem) {
      this.guard.refuse({ chain, head: signed, lastSigned: last, problem });
      return undefined;
    }
    return signed;
  }

  /** The heads to sign, read in one snapshot (a step of checkpoint(), shared with SqliteCheckpointer). */
  *heads(tx: TxRunner, minRows: number | undefined): TxSteps<[ChainName, Head | undefined][]> {
    const out: [ChainName, Head | undefined][] = [];
    for (const chain of CHAIN_NAMES) out.push([chain, yield* this.signable(tx, chain, minRows)]);
    return out;
  }

  /** Sign and store the heads, under the trail's lock (a step of checkpoint()). */
  *write(tx: TxRunner, heads: readonly [ChainName, Head | undefined][]): TxSteps<WitnessedCheckpoint[]> {
    const out: WitnessedCheckpoint[] = [];
    for (const [chain, head] of heads) {
      if (!head) continue;
      // Another signer may have signed meanwhile: a head is signed once.
      const last = yield* tx.one<{ size: number }>(sql`SELECT size FROM audit_checkpoints WHERE chain = ${chain} ORDER BY id DESC LIMIT 1`);
      if (!checkpointDue(head.id, last?.size ?? 0, 1)) continue;
      const c = checkpointOf(this.key, chain, head);
      yield* tx.run(
        sql`INSERT INTO audit_checkpoints (id, chain, size, head_hash, created_at, note) VALUES ((SELECT coalesce(max(id), 0) + 1 FROM audit_checkpoints), ${chain}, ${c.size}, ${c.headHash}, ${c.time}, ${c.note})`,
      );
      out.push({ chain, size: c.size, headHash: c.headHash, time: c.time, note: c.note });
    }
    return out;
  }

  /** After the commit: remembered in the key folder, delivered to the witnesses; the notes (the last step). */
  signed(written: readonly WitnessedCheckpoint[]): string[] {
    this.guard.signed(written);
    return written.map((c) => c.note);
  }

  /**
   * Sign the head of each chain that moved since its last checkpoint (or `minRows` rows ago, when given) and extends
   * the head signed last. Returns the notes written (committed when this resolves).
   */
  async checkpoint(options: { minRows?: number } = {}): Promise<string[]> {
    const heads = await this.database.transaction((tx) => this.heads(tx, options.minRows), { readOnly: true });
    return this.signed(await this.database.transaction((tx) => this.write(tx, heads), { serialise: AUDIT_TRAIL_LOCK }));
  }

  /** The newest checkpoint of each chain. */
  latest(): Promise<{ chain: string; note: string }[]> {
    return this.database.all(LATEST);
  }
}

const LATEST = sql`SELECT chain, note FROM audit_checkpoints WHERE id IN (SELECT max(id) FROM audit_checkpoints GROUP BY chain) ORDER BY chain`;

/**
 * The checkpointer of a SQLite application, which signs at once: the same steps as Checkpointer, driven synchronously
 * (the application's timer, and its last checkpoint at exit, where nothing can be awaited).
 */
export class SqliteCheckpointer {
  private readonly steps: Checkpointer;

  constructor(
    private readonly database: SqliteDatabase,
    key: SigningKey,
    options: SignerOptions = {},
  ) {
    this.steps = new Checkpointer(database, key, options);
  }

  get guard(): SigningGuard {
    return this.steps.guard;
  }

  /** Checkpointer.checkpoint, done before it returns. */
  checkpoint(options: { minRows?: number } = {}): string[] {
    const heads = this.database.transactionSync((tx) => this.steps.heads(tx, options.minRows), { readOnly: true });
    return this.steps.signed(this.database.transactionSync((tx) => this.steps.write(tx, heads)));
  }

  /** The newest checkpoint of each chain. */
  latest(): { chain: string; note: string }[] {
    return this.database.allSync(LATEST);
  }
}
