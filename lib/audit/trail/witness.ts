/**
 * Witnesses: copies of the signed checkpoints kept outside the database the product writes, so that whoever holds the
 * database file cannot rewrite, cut or roll back the trail behind a witnessed checkpoint unseen (the C2SP witness model,
 * https://c2sp.org/tlog-witness, with a hash chain in place of a Merkle tree).
 *
 * - A witness folder (on another volume, a WORM mount): every checkpoint a server signs is appended to
 *   `checkpoints.ndjson` there, and the newest of each chain kept in `latest.json`.
 * - A witness server (`swarm audit witness`, run by another team with its own key): each new checkpoint is sent with
 *   the rows since the last one it saw; it recomputes them from its last head and cosigns only an extension
 *   (witness-server.ts).
 * - The key folder itself keeps `audit-signed-heads.<database>.json`: the newest head this installation's key signed
 *   for each chain of that database. A server refuses to sign a head that does not extend it (see SigningGuard in checkpoints.ts).
 *
 * `swarm audit verify --witness DIR|URL` checks the database against every witnessed checkpoint (verify.ts).
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import { CHAIN_NAMES, type ChainName } from './chain';
import { brand } from '@/lib/errors';

/** A checkpoint as a witness keeps it. */
export interface WitnessedCheckpoint {
  chain: ChainName;
  size: number;
  headHash: string;
  time: number;
  /** the signed note (with the witness's cosignature, when a witness server cosigned it) */
  note: string;
}

/** Where checkpoints are delivered: SWARM_AUDIT_WITNESSES, a comma-separated list of folders and http(s) URLs. */
export interface WitnessTargets {
  dirs: string[];
  urls: string[];
}

export class WitnessConfigInvalid extends Error {
  static readonly kind = 'WitnessConfigInvalid';
  readonly code = 'WITNESS_CONFIG_INVALID';
  constructor(message: string) {
    super(message);
    brand(this, WitnessConfigInvalid);
  }
}

export function witnessTargets(env: Readonly<Record<string, string | undefined>> = process.env): WitnessTargets {
  const out: WitnessTargets = { dirs: [], urls: [] };
  for (const raw of (env.SWARM_AUDIT_WITNESSES ?? '').split(',')) {
    const item = raw.trim();
    if (item === '') continue;
    if (/^https?:\/\//i.test(item)) {
      try {
        out.urls.push(new URL(item).toString().replace(/\/+$/, ''));
      } catch {
        throw new WitnessConfigInvalid(`SWARM_AUDIT_WITNESSES: "${item}" is not a URL.`);
      }
    } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(item)) {
      throw new WitnessConfigInvalid(`SWARM_AUDIT_WITNESSES: "${item}": a witness is a folder or an http(s) URL.`);
    } else {
      out.dirs.push(resolve(/*turbopackIgnore: true*/ item));
    }
  }
  return out;
}

const LOG = 'checkpoints.ndjson';
const LATEST = 'latest.json';

/** Keep these checkpoints in a witness folder: appended to its log, the newest of each chain in latest.json. */
export function recordInWitnessDir(dir: string, checkpoints: readonly WitnessedCheckpoint[]): void {
  if (checkpoints.length === 0) return;
  mkdirSync(dir, { recursive: true });
  appendFileSync(join(/*turbopackIgnore: true*/ dir, LOG), checkpoints.map((c) => `${JSON.stringify(c)}\n`).join(''));
  keepNewest(join(/*turbopackIgnore: true*/ dir, LATEST), checkpoints);
}

/** The newest checkpoint of each chain, kept in a JSON file (latest.json, the key folder's signed heads). Empty: none yet. */
function readNewest(file: string): Map<ChainName, WitnessedCheckpoint> {
  const out = new Map<ChainName, WitnessedCheckpoint>();
  if (!existsSync(file)) return out;
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  for (const [chain, value] of Object.entries(parsed)) out.set(chain as ChainName, parseCheckpoint(value, `${file} (${chain})`));
  return out;
}

/** Keep these checkpoints in such a file where they are newer (a head never goes back: the larger size stays). */
function keepNewest(file: string, checkpoints: readonly WitnessedCheckpoint[]): void {
  const latest = readNewest(file);
  for (const c of checkpoints) if ((latest.get(c.chain)?.size ?? -1) <= c.size) latest.set(c.chain, c);
  // Written whole and renamed over the old one: a reader never sees half a file.
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(Object.fromEntries(latest), null, 2)}\n`);
  renameSync(tmp, file);
}

function parseCheckpoint(value: unknown, where: string): WitnessedCheckpoint {
  const v = value as Partial<WitnessedCheckpoint> | null;
  if (
    !v ||
    typeof v !== 'object' ||
    !CHAIN_NAMES.includes(v.chain as ChainName) ||
    !Number.isSafeInteger(v.size) ||
    typeof v.headHash !== 'string' ||
    !/^[0-9a-f]{64}$/.test(v.headHash) ||
    typeof v.time !== 'number' ||
    typeof v.note !== 'string'
  ) {
    throw new Error(`${where}: not a witnessed checkpoint`);
  }
  return { chain: v.chain as ChainName, size: v.size!, headHash: v.headHash, time: v.time, note: v.note };
}

/** The newest checkpoint of each chain a witness folder holds (empty: none yet). */
export function latestInWitnessDir(dir: string): Map<ChainName, WitnessedCheckpoint> {
  return readNewest(join(/*turbopackIgnore: true*/ dir, LATEST));
}

/** Every checkpoint a witness folder holds, in the order it received them. */
export function readWitnessDir(dir: string): WitnessedCheckpoint[] {
  const file = join(/*turbopackIgnore: true*/ dir, LOG);
  if (!existsSync(file)) throw new Error(`${dir} is not a witness folder: it has no ${LOG}`);
  const out: WitnessedCheckpoint[] = [];
  const lines = readFileSync(file, 'utf8').split('\n');
  for (const [i, line] of lines.entries()) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      // A last line without its newline is an append cut short (a crash while writing): what came before stands.
      if (i === lines.length - 1) break;
      throw new Error(`${file}:${i + 1}: not JSON`);
    }
    out.push(parseCheckpoint(value, `${file}:${i + 1}`));
  }
  return out;
}

/** Every checkpoint a witness server holds (GET <url>/checkpoints, NDJSON), in the order it cosigned them. */
export async function readWitnessUrl(url: string, fetchImpl: typeof fetch = fetch): Promise<WitnessedCheckpoint[]> {
  const res = await fetchImpl(`${url.replace(/\/+$/, '')}/checkpoints`, { signal: AbortSignal.timeout(30_000) });
  if (!res.ok) throw new Error(`${url}: the witness answered HTTP ${res.status}`);
  const text = await res.text();
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l, i) => parseCheckpoint(JSON.parse(l), `${url} line ${i + 1}`));
}

/** The checkpoints of a witness given on the command line: a folder or an http(s) URL. */
export async function readWitness(where: string): Promise<WitnessedCheckpoint[]> {
  return /^https?:\/\//i.test(where) ? readWitnessUrl(where) : readWitnessDir(resolve(/*turbopackIgnore: true*/ where));
}

/**
 * The checkpoints held by the witness folders this installation delivers to (SWARM_AUDIT_WITNESSES): the server's own
 * verification (/audit, the verify API, the report) checks the trail against them. A folder that has no log yet holds
 * nothing; a witness server is checked with `swarm audit verify --witness URL`.
 */
export function configuredWitnessed(env: Readonly<Record<string, string | undefined>> = process.env): WitnessedCheckpoint[] {
  return witnessTargets(env).dirs.flatMap((dir) => (existsSync(join(/*turbopackIgnore: true*/ dir, LOG)) ? readWitnessDir(dir) : []));
}

/**
 * The identity of a database, as the key folder remembers what was signed for it: a SQLite file's absolute path, or
 * a PostgreSQL URL's host, port and database (never its user or password). Several databases may share a key folder
 * (a demo and the end-to-end tests beside it): each has its own record.
 */
export function databaseIdentity(dbPath: string): string {
  const text = dbPath.trim();
  if (/^postgres(ql)?:/i.test(text)) {
    try {
      const u = new URL(text);
      return `postgres://${u.hostname}:${u.port || '5432'}${u.pathname}`;
    } catch {
      return text.replace(/\/\/[^@/]*@/, '//');
    }
  }
  return resolve(/*turbopackIgnore: true*/ text);
}

/** The file in the key folder that keeps the newest head this key signed for each chain of one database. */
export function signedHeadsFile(keyDir: string, dbPath?: string): string {
  return keyFolderRecord(keyDir, 'audit-signed-heads', dbPath);
}

/** A record the key folder keeps of one database (`<name>.<database's identity>.json`; without a database, `<name>.json`). */
export function keyFolderRecord(keyDir: string, name: string, dbPath?: string): string {
  const suffix = dbPath === undefined ? '' : `.${createHash('sha256').update(databaseIdentity(dbPath)).digest('hex').slice(0, 16)}`;
  return join(/*turbopackIgnore: true*/ keyDir, `${name}${suffix}.json`);
}

/** The newest head of each chain signed with the key of this folder for this database (by any process that used it). */
export function readSignedHeads(keyDir: string, dbPath?: string): Map<ChainName, WitnessedCheckpoint> {
  return readNewest(signedHeadsFile(keyDir, dbPath));
}

/** The size of each chain the key folder remembers signing for this database (VerifyOptions.signedUpTo). */
export function signedSizes(keyDir: string, dbPath?: string): Partial<Record<ChainName, number>> {
  return Object.fromEntries([...readSignedHeads(keyDir, dbPath)].map(([chain, head]) => [chain, head.size]));
}

/** Remember the heads just signed (a head never goes back: the larger size stays). */
export function writeSignedHeads(keyDir: string, signed: readonly WitnessedCheckpoint[], dbPath?: string): void {
  if (signed.length > 0) keepNewest(signedHeadsFile(keyDir, dbPath), signed);
}

/** The rows of a chain after `afterId` up to `upToId`, as a witness server checks them: [id, encoded row, row_hash]. */
export type RowsBetween = (chain: ChainName, afterId: number, upToId: number) => Promise<[number, string, string][]>;

/**
 * Delivers checkpoints to witness servers (swarm audit witness), one at a time per server, in the order signed. A
 * witness that asks for the rows since the newest checkpoint it holds gets them once; a witness that still refuses has
 * found a trail that does not extend what it saw, which is reported (onRefused) and logged, never retried into silence.
 * A witness that cannot be reached gets the next checkpoint instead: each one extends all before it.
 */
export class WitnessClient {
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly urls: readonly string[],
    private readonly rowsBetween: RowsBetween,
    private readonly onRefused: (url: string, checkpoint: WitnessedCheckpoint, error: string) => void = () => {},
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  /** Queue these checkpoints for every witness server; resolves when they were sent (for tests and shutdown). */
  deliver(checkpoints: readonly WitnessedCheckpoint[]): Promise<void> {
    if (this.urls.length === 0 || checkpoints.length === 0) return this.queue;
    this.queue = this.queue.then(async () => {
      for (const url of this.urls) for (const c of checkpoints) await this.sendOne(url, c);
    });
    return this.queue;
  }

  private async post(url: string, body: unknown): Promise<{ status: number; json: { error?: string; latest?: { size?: number } } }> {
    const res = await this.fetchImpl(`${url}/add-checkpoint`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    return { status: res.status, json: (await res.json().catch(() => ({}))) as { error?: string; latest?: { size?: number } } };
  }

  private async sendOne(url: string, c: WitnessedCheckpoint): Promise<void> {
    try {
      let answer = await this.post(url, { chain: c.chain, note: c.note, rows: [] });
      const after = answer.json.latest?.size;
      if (answer.status === 409 && typeof after === 'number' && after < c.size) {
        answer = await this.post(url, { chain: c.chain, note: c.note, rows: await this.rowsBetween(c.chain, after, c.size) });
      }
      if (answer.status !== 200) this.onRefused(url, c, answer.json.error ?? `HTTP ${answer.status}`);
    } catch (error) {
      console.error(`Delivering a checkpoint to the witness ${url} failed; it gets the next one.`, error);
    }
  }
}
