/**
 * Every HTTP route of the product, with its public path and what the API reference says about each method. The
 * OpenAPI document (lib/http/openapi.ts) is built from this list and from the role and zod schemas each route declares
 * with route(); tests/openapi.test.ts fails when a route file exists that is not listed here.
 *
 * Summaries live here rather than in the route files so that the reference reads as one text; a route may still
 * say more with `doc` in its route() spec, which wins. `response`: the schema of the success answer, from
 * lib/http/responses.ts (the console's API client parses the same schema; tests/response-schemas.test.ts checks the
 * handlers answer it).
 */
import * as R from './responses';
import type { RouteDoc } from './route';

export interface RouteEntry {
  /** the public path, OpenAPI style ({id} for a dynamic segment) */
  path: string;
  /** the route file, relative to the repository */
  file: string;
  load: () => Promise<Record<string, unknown>>;
  /** per method: the reference text */
  methods: Partial<Record<'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH', RouteDoc>>;
}

const ERR_NOT_FOUND = { '404': 'Not found.' };
const ERR_CONFLICT = { '409': 'Already decided or expired.' };

export const ROUTES: readonly RouteEntry[] = [
  {
    path: '/api/v1/permissions/finished',
    file: 'app/api/v1/permissions/finished/route.ts',
    load: () => import('@/app/api/v1/permissions/finished/route'),
    methods: { POST: { tag: 'Decisions', summary: 'Report that an allowed tool call ran or failed: the after_tool_call hooks hear of it (202).' } },
  },
  {
    path: '/api/v1/permissions/check',
    file: 'app/api/v1/permissions/check/route.ts',
    load: () => import('@/app/api/v1/permissions/check/route'),
    methods: { POST: { tag: 'Decisions', summary: 'Decide one tool call: ALLOW, DENY (recorded before the answer) or ASK (an approval request).', description: 'Answered by the decision listener itself when the call carries a bearer token.' } },
  },
  {
    path: '/api/v1/permissions/check/batch',
    file: 'app/api/v1/permissions/check/batch/route.ts',
    load: () => import('@/app/api/v1/permissions/check/batch/route'),
    methods: { POST: { tag: 'Decisions', summary: 'Decide up to 1,000 tool calls in one transaction.', responses: { '413': 'The body is larger than 4 MiB.' } } },
  },
  {
    path: '/access/v1/evaluation',
    file: 'app/access/v1/evaluation/route.ts',
    load: () => import('@/app/access/v1/evaluation/route'),
    methods: { POST: { tag: 'AuthZEN', summary: 'OpenID AuthZEN 1.0: one evaluation (subject, action, resource, context).' } },
  },
  {
    path: '/access/v1/evaluations',
    file: 'app/access/v1/evaluations/route.ts',
    load: () => import('@/app/access/v1/evaluations/route'),
    methods: { POST: { tag: 'AuthZEN', summary: 'OpenID AuthZEN 1.0: up to 1,000 evaluations with an evaluation semantic.' } },
  },
  {
    path: '/.well-known/authzen-configuration',
    file: 'app/api/authzen/configuration/route.ts',
    load: () => import('@/app/api/authzen/configuration/route'),
    methods: { GET: { tag: 'AuthZEN', summary: 'The AuthZEN PDP metadata: where the evaluation endpoints are.' } },
  },
  {
    path: '/api/v1/permissions/denials',
    file: 'app/api/v1/permissions/denials/route.ts',
    load: () => import('@/app/api/v1/permissions/denials/route'),
    methods: { GET: { tag: 'Denials', summary: 'Denials, newest first, filtered and keyset-paged; also as CSV or a JSON-lines export (format).', response: R.denialPageSchema } },
  },
  {
    path: '/api/v1/permissions/denials/{id}',
    file: 'app/api/v1/permissions/denials/[id]/route.ts',
    load: () => import('@/app/api/v1/permissions/denials/[id]/route'),
    methods: { GET: { tag: 'Denials', summary: 'One denial with the trace of its decision.', response: R.denialDetailSchema, responses: ERR_NOT_FOUND } },
  },
  {
    path: '/api/v1/permissions/denials/summary',
    file: 'app/api/v1/permissions/denials/summary/route.ts',
    load: () => import('@/app/api/v1/permissions/denials/summary/route'),
    methods: { GET: { tag: 'Denials', summary: 'Totals and the top agents, rule sources and tools for a filter.', response: R.denialSummarySchema } },
  },
  {
    path: '/api/v1/permissions/denials/histogram',
    file: 'app/api/v1/permissions/denials/histogram/route.ts',
    load: () => import('@/app/api/v1/permissions/denials/histogram/route'),
    methods: { GET: { tag: 'Denials', summary: 'Denial counts over time by rule-source family, for a filter.', response: R.denialHistogramSchema } },
  },
  {
    path: '/api/v1/permissions/denials/facets',
    file: 'app/api/v1/permissions/denials/facets/route.ts',
    load: () => import('@/app/api/v1/permissions/denials/facets/route'),
    methods: { GET: { tag: 'Denials', summary: 'The values of one field (agent, tool, rule source...) with their counts, for filter suggestions.', response: R.denialFacetsSchema } },
  },
  {
    path: '/api/v1/permissions/denials/tail',
    file: 'app/api/v1/permissions/denials/tail/route.ts',
    load: () => import('@/app/api/v1/permissions/denials/tail/route'),
    methods: { GET: { tag: 'Denials', summary: 'Denials written after a given row, for following the trail as it grows.', response: R.denialTailSchema } },
  },
  {
    path: '/api/v1/approvals',
    file: 'app/api/v1/approvals/route.ts',
    load: () => import('@/app/api/v1/approvals/route'),
    methods: { GET: { tag: 'Approvals', summary: 'Approval requests by status, gate and agent; pending ones oldest first.', response: R.approvalListSchema } },
  },
  {
    path: '/api/v1/approvals/{id}',
    file: 'app/api/v1/approvals/[id]/route.ts',
    load: () => import('@/app/api/v1/approvals/[id]/route'),
    methods: { GET: { tag: 'Approvals', summary: 'One approval request.', response: R.approvalSchema, responses: ERR_NOT_FOUND } },
  },
  {
    path: '/api/v1/approvals/{id}/approve',
    file: 'app/api/v1/approvals/[id]/approve/route.ts',
    load: () => import('@/app/api/v1/approvals/[id]/approve/route'),
    methods: { POST: { tag: 'Approvals', summary: "One person's approval; a two-person gate stays pending until the second.", response: R.approvalSchema, responses: { ...ERR_NOT_FOUND, ...ERR_CONFLICT } } },
  },
  {
    path: '/api/v1/approvals/{id}/reject',
    file: 'app/api/v1/approvals/[id]/reject/route.ts',
    load: () => import('@/app/api/v1/approvals/[id]/reject/route'),
    methods: { POST: { tag: 'Approvals', summary: 'Reject with a reason; recorded as a denial hitl:<gate>.', response: R.approvalSchema, responses: { ...ERR_NOT_FOUND, ...ERR_CONFLICT } } },
  },
  {
    path: '/api/v1/notifications/deliveries',
    file: 'app/api/v1/notifications/deliveries/route.ts',
    load: () => import('@/app/api/v1/notifications/deliveries/route'),
    methods: { GET: { tag: 'Notifications', summary: 'Notifications queued for the channels of config/notifications.yaml, newest first: state, attempts, last error.' } },
  },
  {
    path: '/api/v1/flags',
    file: 'app/api/v1/flags/route.ts',
    load: () => import('@/app/api/v1/flags/route'),
    methods: { GET: { tag: 'Flags', summary: 'Every feature flag: effective value, the layer that decided it, problems.' } },
  },
  {
    path: '/api/v1/flags/history',
    file: 'app/api/v1/flags/history/route.ts',
    load: () => import('@/app/api/v1/flags/history/route'),
    methods: { GET: { tag: 'Flags', summary: 'Every flag change, newest first.' } },
  },
  {
    path: '/api/v1/flags/{name}',
    file: 'app/api/v1/flags/[name]/route.ts',
    load: () => import('@/app/api/v1/flags/[name]/route'),
    methods: {
      GET: { tag: 'Flags', summary: 'One feature flag.', response: R.flagSchema, responses: ERR_NOT_FOUND },
      PUT: { tag: 'Flags', summary: 'Set a runtime override, with a reason. Turning off an invariant is refused and recorded.', response: R.flagSchema },
      DELETE: { tag: 'Flags', summary: 'Remove the runtime override, with a reason.', response: R.flagSchema },
    },
  },
  {
    path: '/api/v1/transparency',
    file: 'app/api/v1/transparency/route.ts',
    load: () => import('@/app/api/v1/transparency/route'),
    methods: { GET: { tag: 'Transparency', summary: 'The /transparency page as JSON: flags by tier, sources in force, files, history.' } },
  },
  {
    path: '/api/v1/auth/login',
    file: 'app/api/v1/auth/login/route.ts',
    load: () => import('@/app/api/v1/auth/login/route'),
    methods: {
      POST: {
        tag: 'Sessions',
        summary: 'Sign in to the console: sets the session cookie.',
        responses: { '429': 'ACCOUNT_LOCKED: the user name is locked after failed sign-ins (a compliance profile), or another attempt for it is under way; Retry-After says when to try again.' },
      },
    },
  },
  {
    path: '/api/v1/auth/logout',
    file: 'app/api/v1/auth/logout/route.ts',
    load: () => import('@/app/api/v1/auth/logout/route'),
    methods: { POST: { tag: 'Sessions', summary: 'Sign out: ends the session.', response: R.signedOutSchema } },
  },
  {
    path: '/api/v1/auth/me',
    file: 'app/api/v1/auth/me/route.ts',
    load: () => import('@/app/api/v1/auth/me/route'),
    methods: { GET: { tag: 'Sessions', summary: 'Who the request is authenticated as.', response: R.meSchema } },
  },
  {
    path: '/api/v1/audit/events',
    file: 'app/api/v1/audit/events/route.ts',
    load: () => import('@/app/api/v1/audit/events/route'),
    methods: { GET: { tag: 'Audit', summary: 'Security events (sign-ins, approvals, changes, reads of the trail), filtered and paged.', response: R.eventPageSchema } },
  },
  {
    path: '/api/v1/audit/verify',
    file: 'app/api/v1/audit/verify/route.ts',
    load: () => import('@/app/api/v1/audit/verify/route'),
    methods: { GET: { tag: 'Audit', summary: 'Verify both hash chains and every signed checkpoint now (recorded as audit.verified).', response: R.verifyReportSchema } },
  },
  {
    path: '/api/v1/reports/audit.pdf',
    file: 'app/api/v1/reports/audit.pdf/route.ts',
    load: () => import('@/app/api/v1/reports/audit.pdf/route'),
    methods: { GET: { tag: 'Audit', summary: 'The audit report of a period as a PDF.', contentType: 'application/pdf' } },
  },
  {
    path: '/api/v1/reports/audit.oscal.json',
    file: 'app/api/v1/reports/audit.oscal.json/route.ts',
    load: () => import('@/app/api/v1/reports/audit.oscal.json/route'),
    methods: { GET: { tag: 'Audit', summary: 'The audit report of a period as OSCAL assessment results.' } },
  },
  {
    path: '/api/v1/health',
    file: 'app/api/v1/health/route.ts',
    load: () => import('@/app/api/v1/health/route'),
    methods: { GET: { tag: 'Operations', summary: 'Liveness: the server answers.' } },
  },
  {
    path: '/api/v1/ready',
    file: 'app/api/v1/ready/route.ts',
    load: () => import('@/app/api/v1/ready/route'),
    methods: {
      GET: {
        tag: 'Operations',
        summary: 'Readiness: the database takes writes, the configuration loaded, the checkpointer and the approval sweeper run.',
        responses: { '503': 'Not ready; the reason says which check failed.' },
      },
    },
  },
  {
    path: '/api/v1/openapi.json',
    file: 'app/api/v1/openapi.json/route.ts',
    load: () => import('@/app/api/v1/openapi.json/route'),
    methods: { GET: { tag: 'Operations', summary: 'This document: OpenAPI 3.1, generated from the routes and their zod schemas.' } },
  },
];
