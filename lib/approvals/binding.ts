/**
 * What an approval is bound to (issue 23): the keyed hash of its call's canonical arguments, never the arguments in
 * clear. A plain hash would do for "the same call"; it is keyed (HMAC-SHA-256) so that whoever reads the approvals
 * table cannot test guesses of a secret argument (a password, a token) against it. The key is a secret of the
 * installation kept with its other keys, never in the database:
 *
 * 1. `SWARM_APPROVAL_KEY` (at least 32 characters), for installations that keep their secrets in the environment;
 * 2. else `approval-binding.key` in the key folder (SWARM_AUDIT_KEY_DIR, or beside a SQLite file, as the audit signing
 *    key: lib/audit/trail/checkpoints.ts keyDirFor);
 * 3. else derived (HKDF-SHA-256) from the audit signing key in that folder, which every server of an installation
 *    already shares;
 * 4. else, on SQLite only, `approval-binding.key` is made there on first use. (PostgreSQL never makes one: servers on
 *    other machines would each make their own, and no approval of one would match on another.)
 *
 * A different key binds every call differently: after the key changes, approved calls not yet run ask again (fail
 * closed). What the approvals table keeps of the arguments is their canonical JSON with secret-keyed values redacted
 * (lib/audit/redact.ts): shown to operators, and re-run by an agent runtime only when nothing was redacted.
 */
import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hasSigningKey, keyDirFor, loadSigningKey } from '@/lib/audit/trail/checkpoints';
import { isSecretKey, redactSecrets } from '@/lib/audit/redact';
import { AppError } from '@/lib/errors';
import { canonicalJson } from './canonical';

/** The mark of a keyed binding in approvals.arguments_hash (a row without it is bound by the unkeyed hash of old). */
export const BINDING_PREFIX = 'hmac1:';
export const BINDING_KEY_FILE = 'approval-binding.key';
export const MIN_KEY_CHARS = 32;

/** Binds calls to approvals with one key (HMAC-SHA-256; measured, about 1 µs more per gated decision than SHA-256). */
export class CallBinding {
  private constructor(private readonly key: Buffer) {}

  static ofKey(key: Buffer): CallBinding {
    if (key.length < 32) throw new Error('An approval binding key has at least 32 bytes.');
    return new CallBinding(key);
  }

  /** The keyed hash of these arguments' canonical JSON: a different value anywhere is a different call. */
  bind(args: unknown): string {
    return BINDING_PREFIX + createHmac('sha256', this.key).update(canonicalJson(args ?? {})).digest('hex');
  }
}

/** Is this arguments_hash a keyed binding (else a row from before keys: re-bound at start, see rebindLegacy)? */
export function isKeyedBinding(hash: string): boolean {
  return hash.startsWith(BINDING_PREFIX);
}

/** What approvals.arguments_canonical keeps: the canonical JSON with the values under secret keys redacted. */
export function storedCanonical(args: unknown): string {
  return canonicalJson(redactSecrets(args ?? {}));
}

/** Do stored canonical arguments lack a redacted secret (so that the call can be run again from them)? */
export function isComplete(stored: unknown): boolean {
  if (stored === null || typeof stored !== 'object') return true;
  if (Array.isArray(stored)) return stored.every(isComplete);
  return Object.entries(stored).every(([k, v]) => !isSecretKey(k) && isComplete(v));
}

/**
 * The installation's binding key, as the module comment says. `db` is SWARM_DB (a file or a postgres:// URL). Throws
 * AppError (INTERNAL) with what to configure when a PostgreSQL installation has none.
 */
export function loadBindingKey(db: string, env: Readonly<Record<string, string | undefined>>): Buffer {
  const given = env.SWARM_APPROVAL_KEY;
  if (given !== undefined && given !== '') {
    if (given.length < MIN_KEY_CHARS) throw new AppError('INTERNAL', `SWARM_APPROVAL_KEY must have at least ${MIN_KEY_CHARS} characters.`);
    return Buffer.from(given, 'utf8');
  }
  const postgres = /^postgres(ql)?:/i.test(db.trim());
  if (postgres && !env.SWARM_AUDIT_KEY_DIR) {
    throw new AppError(
      'INTERNAL',
      "This PostgreSQL server has no installation key (it binds approvals and seals users, tokens and sessions): set SWARM_APPROVAL_KEY (the same on every server), or SWARM_AUDIT_KEY_DIR to the installation's key folder.",
    );
  }
  const dir = keyDirFor(db, env);
  const file = join(/*turbopackIgnore: true*/ dir, BINDING_KEY_FILE);
  if (existsSync(file)) return keyOfFile(file);
  if (hasSigningKey(dir)) {
    const der = loadSigningKey(dir).privateKey.export({ type: 'pkcs8', format: 'der' });
    return Buffer.from(hkdfSync('sha256', der, Buffer.alloc(0), 'swarm-permissions approval binding v1', 32));
  }
  if (postgres) {
    throw new AppError('INTERNAL', `There is no approval binding key in ${dir} (${BINDING_KEY_FILE}, or the audit signing key it is derived from): install the installation's key folder there, or set SWARM_APPROVAL_KEY.`);
  }
  mkdirSync(dir, { recursive: true });
  // Written whole under another name, then linked into place (link never replaces a file): a process that made it at
  // the same moment wins, and nobody ever reads a half-written key.
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(draft, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    chmodSync(draft, 0o600);
    linkSync(draft, file);
  } catch (error) {
    if ((error as { code?: string }).code !== 'EEXIST') throw error;
  } finally {
    rmSync(draft, { force: true });
  }
  return keyOfFile(file);
}

function keyOfFile(file: string): Buffer {
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64url');
  if (key.length < 32) throw new AppError('INTERNAL', `${file} does not hold an approval binding key (32 random bytes, base64url).`);
  return key;
}
