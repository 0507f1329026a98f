/**
 * The route table: every HTTP route of the product as data. Each entry says its public path, the Next.js file that
 * adapts it (the path's own app/.../route.ts unless it names another; one line: `export const { GET } =
 * nextHandlers('/api/v1/flags')`), and per method the
 * route's definition (role, zod schemas and handler core, made by route() in lib/http/routes/) with what the API
 * reference says about it.
 *
 * Read by every part that serves or describes the routes, so they cannot disagree: the Next.js adapters
 * (lib/http/next-handlers.ts), the decision listener (lib/server/front.ts: the entries it answers itself, the methods
 * of a path for a 405), the OpenAPI document (lib/http/openapi.ts), AuthZEN's `http` evaluations (the role a path's
 * route declares, lib/http/route-match.ts). tests/openapi.test.ts fails when a route file exists that is not listed
 * here, and when an entry has no adapter (or its adapter serves other methods).
 *
 * Summaries live here rather than beside each definition so that the reference reads as one text. `response`: the
 * schema of the success answer, from lib/http/responses.ts (the console's API client parses the same schema;
 * tests/response-schemas.test.ts checks the handlers answer it).
 */
import * as R from './responses';
import type { RouteDefinition, RouteDoc } from './route';
import { approveRequest, getApproval, listApprovals, rejectRequest } from './routes/approvals';
import { listSecurityEvents, verifyAuditTrail } from './routes/audit';
import { evaluateAccess, evaluateAccessMany, getAuthzenConfiguration } from './routes/authzen';
import { checkToolCall, checkToolCalls, reportToolCallFinished } from './routes/decisions';
import { countDenialsOverTime, getDenial, listDenialFacetValues, listDenials, summarizeDenials, tailDenials } from './routes/denials';
import { getFlag, getTransparencyReport, listFlagHistory, listFlags, removeFlagOverride, setFlagOverride } from './routes/flags';
import { listDeliveries } from './routes/notifications';
import { checkHealth, checkReadiness, getOpenApiDocument } from './routes/operations';
import { auditReportOscal, auditReportPdf } from './routes/reports';
import { signIn, signOut, whoAmI } from './routes/sessions';

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

/** The Next.js route file of a path: app/, the path with a dynamic segment {id} as [id], /route.ts. */
const routeFile = (path: string): string => `app${path.replace(/\{(\w+)\}/g, '[$1]')}/route.ts`;

/**
 * An entry, with its path and methods kept as literal types (so an adapter can only take methods its entry has). Its
 * adapter is the path's own route file unless the entry names another.
 */
function entry<const P extends string, M extends HttpMethod>(
  e: Omit<RouteTableEntry, 'adapter'> & { readonly adapter?: string; readonly path: P; readonly methods: Readonly<Record<M, RouteMethod>> },
) {
  return { ...e, adapter: e.adapter ?? routeFile(e.path) };
}

const ERR_NOT_FOUND = { '404': 'Not found.' };
const ERR_CONFLICT = { '409': 'Already decided or expired.' };

export const ROUTE_TABLE = [
  entry({
    path: '/api/v1/permissions/finished',
    decisionListener: true,
    methods: { POST: { route: reportToolCallFinished, doc: { tag: 'Decisions', summary: 'Report that an allowed tool call ran or failed: the after_tool_call hooks hear of it (202).' } } },
  }),
  entry({
    path: '/api/v1/permissions/check',
    decisionListener: true,
    methods: {
      POST: {
        route: checkToolCall,
        doc: { tag: 'Decisions', summary: 'Decide one tool call: ALLOW, DENY (recorded before the answer) or ASK (an approval request).', description: 'Answered by the decision listener itself when the call carries a bearer token.' },
      },
    },
  }),
  entry({
    path: '/api/v1/permissions/check/batch',
    decisionListener: true,
    methods: { POST: { route: checkToolCalls, doc: { tag: 'Decisions', summary: 'Decide up to 1,000 tool calls in one transaction.', responses: { '413': 'The body is larger than 4 MiB.' } } } },
  }),
  entry({
    path: '/access/v1/evaluation',
    decisionListener: true,
    methods: { POST: { route: evaluateAccess, doc: { tag: 'AuthZEN', summary: 'OpenID AuthZEN 1.0: one evaluation (subject, action, resource, context).' } } },
  }),
  entry({
    path: '/access/v1/evaluations',
    decisionListener: true,
    methods: { POST: { route: evaluateAccessMany, doc: { tag: 'AuthZEN', summary: 'OpenID AuthZEN 1.0: up to 1,000 evaluations with an evaluation semantic.' } } },
  }),
  entry({
    path: '/.well-known/authzen-configuration',
    // Next.js serves it from here; next.config.mjs rewrites /.well-known/authzen-configuration to it.
    adapter: 'app/api/authzen/configuration/route.ts',
    methods: { GET: { route: getAuthzenConfiguration, doc: { tag: 'AuthZEN', summary: 'The AuthZEN PDP metadata: where the evaluation endpoints are.' } } },
  }),
  entry({
    path: '/api/v1/permissions/denials',
    methods: { GET: { route: listDenials, doc: { response: R.denialPageSchema, tag: 'Denials', summary: 'Denials, newest first, filtered and keyset-paged; also as CSV or a JSON-lines export (format).' } } },
  }),
  entry({
    path: '/api/v1/permissions/denials/{id}',
    methods: { GET: { route: getDenial, doc: { response: R.denialDetailSchema, tag: 'Denials', summary: 'One denial with the trace of its decision.', responses: ERR_NOT_FOUND } } },
  }),
  entry({
    path: '/api/v1/permissions/denials/summary',
    methods: { GET: { route: summarizeDenials, doc: { response: R.denialSummarySchema, tag: 'Denials', summary: 'Totals and the top agents, rule sources and tools for a filter.' } } },
  }),
  entry({
    path: '/api/v1/permissions/denials/histogram',
    methods: { GET: { route: countDenialsOverTime, doc: { response: R.denialHistogramSchema, tag: 'Denials', summary: 'Denial counts over time by rule-source family, for a filter.' } } },
  }),
  entry({
    path: '/api/v1/permissions/denials/facets',
    methods: { GET: { route: listDenialFacetValues, doc: { response: R.denialFacetsSchema, tag: 'Denials', summary: 'The values of one field (agent, tool, rule source...) with their counts, for filter suggestions.' } } },
  }),
  entry({
    path: '/api/v1/permissions/denials/tail',
    methods: { GET: { route: tailDenials, doc: { response: R.denialTailSchema, tag: 'Denials', summary: 'Denials written after a given row, for following the trail as it grows.' } } },
  }),
  entry({
    path: '/api/v1/approvals',
    methods: { GET: { route: listApprovals, doc: { response: R.approvalListSchema, tag: 'Approvals', summary: 'Approval requests by status, gate and agent; pending ones oldest first.' } } },
  }),
  entry({
    path: '/api/v1/approvals/{id}',
    methods: { GET: { route: getApproval, doc: { response: R.approvalSchema, tag: 'Approvals', summary: 'One approval request.', responses: ERR_NOT_FOUND } } },
  }),
  entry({
    path: '/api/v1/approvals/{id}/approve',
    methods: {
      POST: { route: approveRequest, doc: { response: R.approvalSchema, tag: 'Approvals', summary: "One person's approval; a two-person gate stays pending until the second.", responses: { ...ERR_NOT_FOUND, ...ERR_CONFLICT } } },
    },
  }),
  entry({
    path: '/api/v1/approvals/{id}/reject',
    methods: { POST: { route: rejectRequest, doc: { response: R.approvalSchema, tag: 'Approvals', summary: 'Reject with a reason; recorded as a denial hitl:<gate>.', responses: { ...ERR_NOT_FOUND, ...ERR_CONFLICT } } } },
  }),
  entry({
    path: '/api/v1/notifications/deliveries',
    methods: {
      GET: { route: listDeliveries, doc: { tag: 'Notifications', summary: 'Notifications queued for the channels of config/notifications.yaml, newest first: state, attempts, last error.' } },
    },
  }),
  entry({
    path: '/api/v1/flags',
    methods: { GET: { route: listFlags, doc: { tag: 'Flags', summary: 'Every feature flag: effective value, the layer that decided it, problems.' } } },
  }),
  entry({
    path: '/api/v1/flags/history',
    methods: { GET: { route: listFlagHistory, doc: { tag: 'Flags', summary: 'Every flag change, newest first.' } } },
  }),
  entry({
    path: '/api/v1/flags/{name}',
    methods: {
      GET: { route: getFlag, doc: { response: R.flagSchema, tag: 'Flags', summary: 'One feature flag.', responses: ERR_NOT_FOUND } },
      PUT: { route: setFlagOverride, doc: { response: R.flagSchema, tag: 'Flags', summary: 'Set a runtime override, with a reason. Turning off an invariant is refused and recorded.' } },
      DELETE: { route: removeFlagOverride, doc: { response: R.flagSchema, tag: 'Flags', summary: 'Remove the runtime override, with a reason.' } },
    },
  }),
  entry({
    path: '/api/v1/transparency',
    methods: { GET: { route: getTransparencyReport, doc: { tag: 'Transparency', summary: 'The /transparency page as JSON: flags by tier, sources in force, files, history.' } } },
  }),
  entry({
    path: '/api/v1/auth/login',
    methods: {
      POST: {
        route: signIn,
        doc: {
          tag: 'Sessions',
          summary: 'Sign in to the console: sets the session cookie.',
          responses: { '429': 'ACCOUNT_LOCKED: the user name is locked after failed sign-ins (a compliance profile), or another attempt for it is under way; Retry-After says when to try again.' },
        },
      },
    },
  }),
  entry({
    path: '/api/v1/auth/logout',
    methods: { POST: { route: signOut, doc: { response: R.signedOutSchema, tag: 'Sessions', summary: 'Sign out: ends the session.' } } },
  }),
  entry({
    path: '/api/v1/auth/me',
    methods: { GET: { route: whoAmI, doc: { response: R.meSchema, tag: 'Sessions', summary: 'Who the request is authenticated as.' } } },
  }),
  entry({
    path: '/api/v1/audit/events',
    methods: { GET: { route: listSecurityEvents, doc: { response: R.eventPageSchema, tag: 'Audit', summary: 'Security events (sign-ins, approvals, changes, reads of the trail), filtered and paged.' } } },
  }),
  entry({
    path: '/api/v1/audit/verify',
    methods: { GET: { route: verifyAuditTrail, doc: { response: R.verifyReportSchema, tag: 'Audit', summary: 'Verify both hash chains and every signed checkpoint now (recorded as audit.verified).' } } },
  }),
  entry({
    path: '/api/v1/reports/audit.pdf',
    methods: { GET: { route: auditReportPdf, doc: { tag: 'Audit', summary: 'The audit report of a period as a PDF.', contentType: 'application/pdf' } } },
  }),
  entry({
    path: '/api/v1/reports/audit.oscal.json',
    methods: { GET: { route: auditReportOscal, doc: { tag: 'Audit', summary: 'The audit report of a period as OSCAL assessment results.' } } },
  }),
  entry({
    path: '/api/v1/health',
    methods: { GET: { route: checkHealth, doc: { tag: 'Operations', summary: 'Liveness: the server answers.' } } },
  }),
  entry({
    path: '/api/v1/ready',
    methods: {
      GET: {
        route: checkReadiness,
        doc: {
          tag: 'Operations',
          summary: 'Readiness: the database takes writes, the configuration loaded, the checkpointer and the approval sweeper run.',
          responses: { '503': 'Not ready; the reason says which check failed.' },
        },
      },
    },
  }),
  entry({
    path: '/api/v1/openapi.json',
    methods: { GET: { route: getOpenApiDocument, doc: { tag: 'Operations', summary: 'This document: OpenAPI 3.1, generated from the routes and their zod schemas.' } } },
  }),
] as const;

type Entry = (typeof ROUTE_TABLE)[number];
/** A path the table lists. */
export type RoutePath = Entry['path'];
/** The methods the entry of `P` serves. */
export type MethodsOf<P extends RoutePath> = keyof Extract<Entry, { path: P }>['methods'] & HttpMethod;

/** The table as plain entries, for code that walks it whatever the path. */
export const ROUTES: readonly RouteTableEntry[] = ROUTE_TABLE;

/** The entry of a path the table lists. */
export function routeEntry<P extends RoutePath>(path: P): Extract<Entry, { path: P }> {
  const found = ROUTE_TABLE.find((e) => e.path === path);
  if (!found) throw new Error(`The route table lists no ${path}.`);
  return found as Extract<Entry, { path: P }>;
}

/** One method's definition of a path the table lists (tests and the listener take a core from it). */
export function routeDefinition<P extends RoutePath>(path: P, method: MethodsOf<P>): RouteDefinition {
  const methods = routeEntry(path).methods as Partial<Record<HttpMethod, RouteMethod>>;
  return methods[method]!.route;
}
