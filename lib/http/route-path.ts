/**
 * Paths as the router sees them, in one place for every part that compares a path with the product's routes: the
 * route wrapper (the path the engine decides an HTTP request on), the decision listener (a malformed path) and, through
 * lib/http/route-match.ts, the methods a path allows and AuthZEN `http` evaluations (the route whose role an evaluated
 * path gets).
 *
 * Two spellings that reach the same route must be decided alike, or a rule (a YAML rule on a path, a flag bound to a
 * path, the role a route declares) could be stepped around by writing the path differently: `/api/v1/./flags/x`,
 * `/api//v1/flags/x/` and `/api/v1/%66lags/x` are all `/api/v1/flags/x` here. Letter case is ignored only when a path
 * is matched with the product's own routes (matchRoute with ignoreCase, lib/http/route-match.ts), which is stricter
 * than the router (it is case-sensitive): a path that differs from a route only by case gets that route's role, never
 * less.
 *
 * Nothing here reads the route table: the route wrapper (lib/http/route.ts) uses these functions, and the table lists
 * routes built with it.
 */

/** The answer's words for a path that is not well escaped (400, on every port and in AuthZEN evaluations). */
export const MALFORMED_PATH = 'The path is not valid: every "%" must start an escape of two hex digits, and the escapes must spell UTF-8.';

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
