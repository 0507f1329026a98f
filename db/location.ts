/**
 * Where the data lives, from SWARM_DB: a file path (or nothing) is SQLite, `postgres://` or `postgresql://` is
 * PostgreSQL. Any other URL is refused with the reason, never taken for a file name.
 */
import { brand } from '@/lib/errors';
export type DbLocation = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string; shown: string };

export const DEFAULT_SQLITE_PATH = 'data/swarm.db';

export class DbLocationError extends Error {
  static readonly kind = 'DbLocationError';
  readonly code = 'DB_LOCATION_INVALID';
  constructor(message: string) {
    super(message);
    brand(this, DbLocationError);
  }
}

/** The URL without its password, for messages and logs. */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    // libpq and the driver also take the password as a parameter (?password=…, and the key file's passphrase).
    for (const key of [...u.searchParams.keys()]) if (SECRET_PARAMS.test(key)) u.searchParams.set(key, '***');
    return u.toString().replace(/%2A%2A%2A/g, '***');
  } catch {
    return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@').replace(/([?&](?:ssl)?password=)[^&]*/gi, '$1***');
  }
}

/** What to give openApp's dbPath for this location: the file's path, or the URL. */
export function locationTarget(where: DbLocation): string {
  return where.kind === 'sqlite' ? where.path : where.url;
}

/** The location for messages: the file's path, or the URL without its password. */
export function shownLocation(where: DbLocation): string {
  return where.kind === 'sqlite' ? where.path : where.shown;
}

const SECRET_PARAMS = /^(ssl)?password$|^sslkey$|passphrase/i;

export function parseDbLocation(value: string | undefined, fallback = DEFAULT_SQLITE_PATH): DbLocation {
  const v = value?.trim();
  if (!v) return { kind: 'sqlite', path: fallback };
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(v)?.[1]?.toLowerCase();
  // A Windows drive letter (C:\...) is a path, not a scheme.
  if (!scheme || (scheme.length === 1 && /^[a-z]:[\\/]/i.test(v))) return { kind: 'sqlite', path: v };
  if (scheme === 'postgres' || scheme === 'postgresql') {
    let u: URL;
    try {
      // A Unix socket names its folder in ?host= and leaves the host part empty (postgres://user:pw@/db?host=/run/…),
      // which WHATWG URLs refuse after credentials: checked here with a stand-in host, passed on to the driver as given.
      u = new URL(/^postgres(ql)?:\/\/[^/]*@\//i.test(v) ? v.replace('@/', '@socket/') : v);
    } catch {
      throw new DbLocationError(`SWARM_DB is not a valid PostgreSQL URL (${redactedUrl(v)}): write postgres://USER:PASSWORD@HOST:5432/DATABASE.`);
    }
    if (u.hostname === 'socket' && !u.searchParams.get('host')) throw new DbLocationError(`SWARM_DB names no host (${redactedUrl(v)}): write postgres://USER:PASSWORD@HOST:5432/DATABASE, or ?host=/path/of/the/socket/folder.`);
    if (!u.hostname && !u.searchParams.get('host')) throw new DbLocationError(`SWARM_DB names no host (${redactedUrl(v)}): write postgres://USER:PASSWORD@HOST:5432/DATABASE.`);
    if (u.pathname.replace(/^\//, '') === '') throw new DbLocationError(`SWARM_DB names no database (${redactedUrl(v)}): write postgres://USER:PASSWORD@HOST:5432/DATABASE.`);
    return { kind: 'postgres', url: v, shown: redactedUrl(v) };
  }
  if (scheme === 'file') {
    try {
      return { kind: 'sqlite', path: decodeURIComponent(new URL(v).pathname) };
    } catch {
      throw new DbLocationError(`SWARM_DB is not a valid file URL (${v}).`);
    }
  }
  throw new DbLocationError(
    `SWARM_DB uses the scheme "${scheme}:", which this product cannot use: give a SQLite file path (data/swarm.db) or a PostgreSQL URL (postgres://USER:PASSWORD@HOST:5432/DATABASE).`,
  );
}
