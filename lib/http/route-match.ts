/**
 * A path matched with the route table (lib/http/route-table.ts): which route it reaches, the methods it allows (for a
 * 405's Allow header) and the role its route declares (AuthZEN `http` evaluations). Paths are compared in the canonical
 * form of lib/http/route-path.ts.
 */
import type { Role } from '@/lib/permissions';
import { canonicalPath } from './route-path';
import { LISTENER_ONLY_ROUTES, ROUTES, type HttpMethod, type RouteTableEntry } from './route-table';

interface Pattern {
  entry: RouteTableEntry;
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
  entry: RouteTableEntry;
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
  const listenerOnly = canonical === undefined ? undefined : LISTENER_ONLY_ROUTES[canonical];
  if (listenerOnly) return Object.keys(listenerOnly).flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m]));
  const match = canonical === undefined ? undefined : matchRoute(canonical);
  if (!match) return ['GET', 'HEAD', 'POST'];
  const own = Object.keys(match.entry.methods);
  return [...own, ...(own.includes('GET') ? ['HEAD'] : []), 'OPTIONS'];
}

const servedBy = (entry: RouteTableEntry, method: string) => entry.methods[(method === 'HEAD' ? 'GET' : method) as keyof RouteTableEntry['methods']];

/** The role a route declares for `method` (requireRole), if it serves that method; HEAD is answered by the GET handler. */
export function declaredRole(entry: RouteTableEntry, method: string): Role | undefined {
  return servedBy(entry, method)?.route.spec.role.role;
}

/** The kind of principal a route serves for `method`, if only one (its `principals`). */
export function declaredPrincipal(entry: RouteTableEntry, method: string): 'agent' | 'user' | undefined {
  return servedBy(entry, method)?.route.spec.principals;
}

/**
 * The role a path the listener answers itself requires for `method` (LISTENER_ONLY_ROUTES), letter case ignored as
 * matchRoute's ignoreCase does: a spelling that differs only by case never asks for less.
 */
export function listenerOnlyRole(path: string, method: string): { path: string; role: Role | undefined } | undefined {
  const found = Object.entries(LISTENER_ONLY_ROUTES).find(([p]) => p.toLowerCase() === path.toLowerCase());
  if (!found) return undefined;
  const [own, methods] = found;
  return { path: own, role: methods[(method === 'HEAD' ? 'GET' : method) as HttpMethod] };
}
