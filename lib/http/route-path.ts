/**
 * Paths as the router sees them, in one place for every part that compares a path with the product's routes: the
 * route wrapper (the path the engine decides an HTTP request on), the decision listener (a malformed path, the
 * methods a path allows) and AuthZEN `http` evaluations (the route whose role an evaluated path gets).
 *
 * Two spellings that reach the same route must be decided alike, or a rule (a YAML rule on a path, a flag bound to a
 * path, the role a route declares) could be stepped around by writing the path differently: `/api/v1/./flags/x`,
 * `/api//v1/flags/x/` and `/api/v1/%66lags/x` are all `/api/v1/flags/x` here. Letter case is ignored only when a path
 * is matched with the product's own routes (matchRoute with ignoreCase), which is stricter than the router (it is
 * case-sensitive): a path that differs from a route only by case gets that route's role, never less.
 */
import { ROUTES, type RouteEntry } from './route-index';

/**
 * Does every `%` of the path start an escape, and do the escapes spell UTF-8? A path that does not is refused with
 * 400 by the listener and by the route wrapper alike (the router could not decode it either).
 */
export function isWellEscaped(path: string): boolean {
  if (path.indexOf('%') < 0) return true;
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
/** A path already in canonical form (no escape, backslash, empty or dot segment, trailing slash): the common case. */
const PLAIN = /^(?:\/(?!\.\.?(?:\/|$))[^/%\\?#]+)+$/;

/**
 * The canonical form of a path (a query or fragment cut off): escapes of unreserved characters decoded (RFC 3986
 * 6.2.2.2, so `%2e` is a dot and `%66` an `f`), the others in capitals; backslashes as slashes (as URL parsing of
 * http addresses does); empty segments dropped (the router redirects `//` and a trailing slash to the path without
 * them); dot segments resolved. Undefined for a path that is not well escaped.
 */
export function canonicalPath(raw: string): string | undefined {
  if (PLAIN.test(raw)) return raw;
  const end = raw.search(/[?#]/);
  let path = end < 0 ? raw : raw.slice(0, end);
  if (!isWellEscaped(path)) return undefined;
  if (path.includes('%')) {
    path = path.replace(/%([0-9A-Fa-f]{2})/g, (escape: string, hex: string) => {
      const c = String.fromCharCode(parseInt(hex, 16));
      return UNRESERVED.test(c) ? c : escape.toUpperCase();
    });
  }
  const out: string[] = [];
  for (const segment of path.replace(/\\/g, '/').split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') out.pop();
    else out.push(segment);
  }
  return `/${out.join('/')}`;
}

interface Pattern {
  entry: RouteEntry;
  /** the route's segments; null for a dynamic one (`{id}`) */
  segments: readonly (string | null)[];
  /** its literal segments in lower case, for a match that ignores case */
  lower: readonly (string | null)[];
  literals: number;
}

const PATTERNS: readonly Pattern[] = ROUTES.map((entry) => {
  const segments = entry.path
    .split('/')
    .filter(Boolean)
    .map((s) => (s.startsWith('{') && s.endsWith('}') ? null : s));
  return { entry, segments, lower: segments.map((s) => s?.toLowerCase() ?? null), literals: segments.filter((s) => s !== null).length };
});

export interface RouteMatch {
  entry: RouteEntry;
  /** the path as the route spells it: its literal segments, and the given values of its dynamic ones */
  path: string;
}

/**
 * The product's route a canonical path reaches, if any. A literal segment wins over a dynamic one
 * (`/api/v1/flags/history` is the history, not the flag named "history"), as in the router.
 */
export function matchRoute(path: string, options: { ignoreCase?: boolean } = {}): RouteMatch | undefined {
  const given = path.split('/').filter(Boolean);
  const compared = options.ignoreCase ? given.map((s) => s.toLowerCase()) : given;
  let best: Pattern | undefined;
  for (const p of PATTERNS) {
    if (p.segments.length !== given.length || (best && best.literals >= p.literals)) continue;
    const literal = options.ignoreCase ? p.lower : p.segments;
    if (literal.every((s, i) => s === null || s === compared[i])) best = p;
  }
  if (!best) return undefined;
  return { entry: best.entry, path: `/${best.segments.map((s, i) => s ?? given[i]).join('/')}` };
}

/**
 * The methods a path allows, for the Allow header of a 405: a route's own (with HEAD beside GET, and OPTIONS, which
 * the router answers for every route), else what the console's pages take.
 */
export function allowedMethods(path: string): string[] {
  const canonical = canonicalPath(path);
  const match = canonical === undefined ? undefined : matchRoute(canonical);
  if (!match) return ['GET', 'HEAD', 'POST'];
  const own = Object.keys(match.entry.methods);
  return [...own, ...(own.includes('GET') ? ['HEAD'] : []), 'OPTIONS'];
}
