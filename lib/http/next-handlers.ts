/**
 * The Next.js side of the route table: each app/ route file is one line, `export const { GET, PUT } =
 * nextHandlers('/api/v1/flags/{name}')`, and Next.js calls what it exports. A handler builds the application
 * (getApp), turns the web Request into the core's request and runs the entry's core, exactly as the decision listener
 * runs it for the routes it answers itself.
 */
import { getApp, type App } from '@/lib/app';
import { errorResponse, fromWebRequest, toResponse, type RouteDefinition } from './route';
import { routeEntry, type HttpMethod, type MethodsOf, type RouteMethod, type RoutePath } from './route-table';
import { messageOf } from '@/lib/errors';

/** What Next.js passes a route handler beside the Request: the dynamic segments, decoded. */
export interface NextRouteContext {
  params: Promise<Record<string, string | string[] | undefined>>;
}

/** The definition a Next.js handler serves (tests/openapi.test.ts checks each adapter serves its own entry). */
export const ADAPTED_ROUTE = Symbol.for('swarm-permissions.adapted-route');

export type NextRouteHandler = ((request: Request, context: NextRouteContext) => Promise<Response>) & { readonly [ADAPTED_ROUTE]: RouteDefinition };

/** One route definition as a Next.js route handler. */
export function nextHandler(definition: RouteDefinition): NextRouteHandler {
  const handler = async (request: Request, context: NextRouteContext): Promise<Response> => {
    let app: App;
    try {
      app = await getApp();
    } catch (error) {
      console.error('The application could not start', error);
      return errorResponse(503, 'UNAVAILABLE', `The server is not ready: ${messageOf(error)}`);
    }
    const rawParams = context?.params ? await context.params : {};
    return toResponse(await definition.core(app, fromWebRequest(request), rawParams));
  };
  return Object.assign(handler, { [ADAPTED_ROUTE]: definition });
}

/** The Next.js handlers of one entry of the route table, one per method it serves. */
export function nextHandlers<P extends RoutePath>(path: P): { readonly [M in MethodsOf<P>]: NextRouteHandler } {
  const methods = routeEntry(path).methods as Partial<Record<HttpMethod, RouteMethod>>;
  const handlers: Partial<Record<HttpMethod, NextRouteHandler>> = {};
  for (const [method, served] of Object.entries(methods) as [HttpMethod, RouteMethod][]) handlers[method] = nextHandler(served.route);
  return handlers as { readonly [M in MethodsOf<P>]: NextRouteHandler };
}
