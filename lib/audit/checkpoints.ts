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
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type Database from 'better-sqlite3';
import type { ChainName } from './chain';

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
  readonly code = 'KEY_DIR_REQUIRED';
  constructor() {
    super(
      'On PostgreSQL the audit signing key has no database folder to live beside: set SWARM_AUDIT_KEY_DIR to the folder that holds audit-signing-key.pem (the same folder on every server, so that they all sign with one key).',
    );
    this.name = 'KeyDirRequired';
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
  readonly code = 'SIGNING_KEY_MISSING';
  constructor(dir: string) {
    super(
      `There is no audit signing key in ${dir} (audit-signing-key.pem): install the installation's key folder there, or create the key once with SWARM_AUDIT_KEY_DIR=${dir} npx swarm audit key (docs/deployment.md). A new key is never made here on its own: checkpoints signed by a key nobody keeps would fail every verification.`,
    );
    this.name = 'SigningKeyMissing';
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
  let privateKey: KeyObject;
  if (existsSync(privateFile)) {
    privateKey = createPrivateKey(readFileSync(privateFile));
  } else {
    mkdirSync(dir, { recursive: true });
    privateKey = generateKeyPairSync('ed25519').privateKey;
    writeFileSync(privateFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
    chmodSync(privateFile, 0o600);
  }
  const publicKey = createPublicKey(privateKey);
  const raw = (publicKey.export({ type: 'spki', format: 'der' }) as Buffer).subarray(SPKI_PREFIX.length);
  const key = { name, privateKey, publicKey, raw };
  if (!existsSync(publicFile)) writeFileSync(publicFile, `${verifierKey(name, raw)}\n`);
  return key;
}

/**
 * The public verifier keys kept in the key folder, if any: the key in force (audit-signing-key.pub) and the keys it
 * replaced (audit-signing-key.*.pub, kept there at a rotation, docs/deployment.md), one per line.
 */
export function readLocalVerifierKey(dir: string): string | undefined {
  const { publicFile } = keyFiles(dir);
  const retired = existsSync(dir) ? readdirSync(dir).filter((f) => /^audit-signing-key\..+\.pub$/.test(f)).sort() : [];
  const texts = [...(existsSync(publicFile) ? [publicFile] : []), ...retired.map((f) => join(/*turbopackIgnore: true*/ dir, f))].map((f) => readFileSync(f, 'utf8').trim());
  return texts.length > 0 ? texts.join('\n') : undefined;
}

export interface CheckpointBody {
  origin: string;
  size: number;
  /** hex row_hash of row `size` */
  headHash: string;
  time: number;
}

export function originOf(chain: ChainName, name = KEY_NAME): string {
  return `${name}/${chain}`;
}

export function checkpointText(b: CheckpointBody): string {
  return `${b.origin}\n${b.size}\n${Buffer.from(b.headHash, 'hex').toString('base64')}\ntime ${Math.floor(b.time)}\n`;
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
  return { ok: true, body: { origin: lines[0], size, headHash: head.toString('hex'), time: Number(time[1]) } };
}

/**
 * Whether a chain's head is due for a checkpoint: it moved past the last one, by `minRows` rows at least. The same rule
 * on SQLite and PostgreSQL (PgCheckpointer).
 */
export function checkpointDue(headId: number, lastSize: number, minRows = 1): boolean {
  return headId > lastSize && headId - lastSize >= minRows;
}

/** A stored checkpoint of a chain head: the row to insert into audit_checkpoints and the note to hand out. */
export function checkpointOf(key: SigningKey, chain: ChainName, head: { id: number; hash: string }, time = Date.now() / 1000) {
  const note = signCheckpoint(key, { origin: originOf(chain, key.name), size: head.id, headHash: head.hash, time });
  return { chain, size: head.id, headHash: head.hash, time, note };
}

/** Writes checkpoints of the chains of one database: when the head moved, on a timer and at shutdown. */
export class Checkpointer {
  private readonly head: Record<ChainName, Database.Statement<[], { id: number; rowHash: string | null }>>;
  private readonly last: Database.Statement<[string], { size: number }>;
  private readonly insert: Database.Statement;

  constructor(
    private readonly sqlite: Database.Database,
    private readonly key: SigningKey,
  ) {
    const headOf = (t: ChainName) => sqlite.prepare<[], { id: number; rowHash: string | null }>(`SELECT id, row_hash AS rowHash FROM ${t} ORDER BY id DESC LIMIT 1`);
    this.head = { permission_denials: headOf('permission_denials'), security_events: headOf('security_events') };
    this.last = sqlite.prepare<[string], { size: number }>('SELECT size FROM audit_checkpoints WHERE chain = ? ORDER BY id DESC LIMIT 1');
    this.insert = sqlite.prepare('INSERT INTO audit_checkpoints (chain, size, head_hash, created_at, note) VALUES (?, ?, ?, ?, ?)');
  }

  /**
   * Sign the head of each chain that moved since its last checkpoint (or `minRows` rows ago, when given). Returns the
   * notes written.
   */
  checkpoint(options: { minRows?: number } = {}): string[] {
    const notes: string[] = [];
    const write = this.sqlite.transaction(() => {
      for (const chain of ['permission_denials', 'security_events'] as const) {
        const head = this.head[chain].get();
        if (!head?.rowHash) continue;
        const last = this.last.get(chain)?.size ?? 0;
        if (!checkpointDue(head.id, last, options.minRows)) continue;
        const c = checkpointOf(this.key, chain, { id: head.id, hash: head.rowHash });
        this.insert.run(chain, c.size, c.headHash, c.time, c.note);
        notes.push(c.note);
      }
    });
    write.immediate();
    return notes;
  }

  /** The newest checkpoint of each chain. */
  latest(): { chain: string; note: string }[] {
    return this.sqlite
      .prepare<[], { chain: string; note: string }>(
        'SELECT chain, note FROM audit_checkpoints WHERE id IN (SELECT max(id) FROM audit_checkpoints GROUP BY chain) ORDER BY chain',
      )
      .all();
  }
}
