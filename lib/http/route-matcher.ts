/**
 * Paths matched with a route table's entries: which route a path reaches, the methods it allows (for a 405's Allow
 * header) and what its route declares (AuthZEN `http` evaluations). Paths are compared in the canonical form of
 * lib/http/route-path.ts. The table is given, not imported: lib/http/route-table.ts builds its matcher from itself.
 */
import type { Role } from '@/lib/permissions';
import type { HttpMethod, ListenerOnlyRoutes, RouteDeclaration, RouteTableEntry } from './route-entry';
import { canonicalPath } from './route-path';

interface Pattern {
  entry: RouteTableEntry;
  /** the route's segments; null for a dynamic one (`{id}`) */
  segments: readonly (string | null)[];
  /** its literal segments in lower case, for a match that ignores case */
  lower: readonly (string | null)[];
  literals: number;
}

export interface RouteMatch {
  entry: RouteTableEntry;
  /** the path as the route spells it: its literal segments, and the given values of its dynamic ones */
  path: string;
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

export type RouteMatcher = ReturnType<typeof routeMatcher>;

/** The matcher of a table's entries and of the paths the listener answers itself. */
export function routeMatcher(routes: readonly RouteTableEntry[], listenerOnlyRoutes: ListenerOnlyRoutes) {
  const patterns: readonly Pattern[] = routes.map((entry) => {
    const segments = entry.path
      .split('/')
      .filter(Boolean)
      .map((s) => (s.startsWith('{') && s.endsWith('}') ? null : s));
    return { entry, segments, lower: segments.map((s) => s?.toLowerCase() ?? null), literals: segments.filter((s) => s !== null).length };
  });

  /**
   * The product's route a canonical path reaches, if any. A literal segment wins over a dynamic one
   * (`/api/v1/flags/history` is the history, not the flag named "history"), as in the router.
   */
  function matchRoute(path: string, options: { ignoreCase?: boolean } = {}): RouteMatch | undefined {
    const given = path.split('/').filter(Boolean);
    const compared = options.ignoreCase ? given.map((s) => s.toLowerCase()) : given;
    let best: Pattern | undefined;
    for (const p of patterns) {
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
  function allowedMethods(path: string): string[] {
    const canonical = canonicalPath(path);
    const listenerOnly = canonical === undefined ? undefined : listenerOnlyRoutes[canonical];
    if (listenerOnly) return Object.keys(listenerOnly).flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m]));
    const match = canonical === undefined ? undefined : matchRoute(canonical);
    if (!match) return ['GET', 'HEAD', 'POST'];
    const own = Object.keys(match.entry.methods);
    return [...own, ...(own.includes('GET') ? ['HEAD'] : []), 'OPTIONS'];
  }

  /**
   * The role a path the listener answers itself requires for `method`, letter case ignored as matchRoute's ignoreCase
   * does: a spelling that differs only by case never asks for less.
   */
  function listenerOnlyRole(path: string, method: string): { path: string; role: Role | undefined } | undefined {
    const found = Object.entries(listenerOnlyRoutes).find(([p]) => p.toLowerCase() === path.toLowerCase());
    if (!found) return undefined;
    const [own, methods] = found;
    return { path: own, role: methods[(method === 'HEAD' ? 'GET' : method) as HttpMethod] };
  }

  /**
   * What the product declares for a canonical path and method (lib/http/route-entry.ts, DeclaredRoutes): the route a
   * path reaches, letter case ignored (and the path as the route spells it), else a path the listener answers itself.
   */
  function declared(path: string, method: string): RouteDeclaration | undefined {
    const match = matchRoute(path, { ignoreCase: true });
    if (!match) return listenerOnlyRole(path, method);
    const principal = declaredPrincipal(match.entry, method);
    return { path: match.path, role: declaredRole(match.entry, method), ...(principal ? { principal } : {}) };
  }

  return { matchRoute, allowedMethods, listenerOnlyRole, declared };
}
