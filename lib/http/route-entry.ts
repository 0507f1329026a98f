/**
 * The shape of the route table's entries (lib/http/route-table.ts), apart from the table itself, so that code that
 * reads entries (lib/http/route-matcher.ts, lib/http/openapi.ts) and code the table lists (AuthZEN's evaluations) can
 * name them without loading the table.
 */
import type { Role } from '@/lib/permissions';
import type { RouteDefinition, RouteDoc } from './route';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** One method of a route: what answers it, and what the API reference says about it. */
export interface RouteMethod {
  route: RouteDefinition;
  doc: RouteDoc;
}

export interface RouteTableEntry {
  /** the public path, OpenAPI style ({id} for a dynamic segment) */
  readonly path: string;
  /** the Next.js route file that adapts this entry, relative to the repository */
  readonly adapter: string;
  readonly methods: Readonly<Partial<Record<HttpMethod, RouteMethod>>>;
  /**
   * A POST with a bearer token is answered by the decision listener itself (lib/server/front.ts), not passed to
   * Next.js: the calls agents and gateways make in a loop.
   */
  readonly decisionListener?: true;
}

/** The paths the decision listener answers itself, with the role each method requires (lib/server/front.ts). */
export type ListenerOnlyRoutes = Readonly<Record<string, Readonly<Partial<Record<HttpMethod, Role>>>>>;

/** What the product's own routes declare for a path and method: the path as the route spells it, its role, and the kind of principal it serves, if only one. */
export interface RouteDeclaration {
  path: string;
  role: Role | undefined;
  principal?: 'agent' | 'user';
}

/**
 * The declaration of the route a canonical path reaches (letter case ignored, so that a spelling that differs only by
 * case never asks for less), or of a path the listener answers itself; undefined for a path the product does not serve.
 * AuthZEN's `http` evaluations take it as a parameter: the table lists them, so they cannot load the table.
 */
export type DeclaredRoutes = (path: string, method: string) => RouteDeclaration | undefined;
