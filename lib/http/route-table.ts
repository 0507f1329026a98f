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
 * route declares, lib/http/route-matcher.ts, given to them here). tests/openapi.test.ts fails when a route file exists
 * that is not listed here, and when an entry has no adapter (or its adapter serves other methods).
 *
 * Summaries live here rather than beside each definition so that the reference reads as one text. `response`: the
 * schema of the success answer, from lib/http/responses.ts (the console's API client parses the same schema;
 * tests/response-schemas.test.ts checks the handlers answer it).
 */
import * as R from './responses';
import type { RouteDefinition, RouteDoc } from './route';
import type { DeclaredRoutes, HttpMethod, ListenerOnlyRoutes, RouteMethod, RouteTableEntry } from './route-entry';
import { routeMatcher } from './route-matcher';
import { approveRequest, getApproval, listApprovals, rejectRequest } from './routes/approvals';
import { listSecurityEvents, verifyAuditTrail } from './routes/audit';
import { authzenEvaluations, getAuthzenConfiguration } from './routes/authzen';
import { checkToolCall, checkToolCalls, listUsableTools, reportToolCallFinished } from './routes/decisions';
import { countDenialsOverTime, getDenial, listDenialFacetValues, listDenials, summarizeDenials, tailDenials } from './routes/denials';
import { getFlag, getTransparencyReport, listFlagHistory, listFlags, removeFlagOverride, setFlagOverride } from './routes/flags';
import { listDeliveries } from './routes/notifications';
import { endMcpSession, getMcpResourceMetadata, openMcpStream, postMcpMessage } from './routes/mcp';
import { acceptMcpPin, listMcpPins, observeMcpTools } from './routes/mcp-pins';
import { checkHealth, checkReadiness, openApiRoute } from './routes/operations';
import { openApiDocument } from './openapi';
import { auditReportOscal, auditReportPdf } from './routes/reports';
import { signIn, signOut, whoAmI } from './routes/sessions';
import { ssoBackchannelLogout, ssoCallback, startSso } from './routes/sso';
import { listTokens, revokeToken, rotateToken } from './routes/tokens';
import { createProposal, getProposal, listActivations, listProposals, proposeRollback, voteOnProposal, withdrawProposal } from './routes/policy';

export { HTTP_METHODS, type HttpMethod, type RouteMethod, type RouteTableEntry } from './route-entry';

/** The Next.js route file of a path: app/, the path with a dynamic segment {id} as [id], /route.ts. */
const routeFile = (path: string): string => `app${path.replace(/\{(\w+)\}/g, '[$1]')}/route.ts`;

/**
 * An entry, with its path and methods kept as literal types (so an adapter can only take methods its entry has). Its
 * adapter is the path's own route file unless the entry names another.
 */
function entry<const P extends string, M extends HttpMethod>(
  path: P,
  methods: Readonly<Record<M, RouteMethod>>,
  more: Pick<RouteTableEntry, 'decisionListener'> & { readonly adapter?: string } = {},
) {
  return { path, ...more, methods, adapter: more.adapter ?? routeFile(path) };
}

/** One method: the route that answers it, and the reference's group, summary and the rest of what it says. */
const op = (route: RouteDefinition, tag: string, summary: string, more: Omit<RouteDoc, 'tag' | 'summary'> = {}): RouteMethod => ({ route, doc: { tag, summary, ...more } });

/**
 * AuthZEN's `http` evaluations ask what this table declares for a path: they are given it, matched on the table once
 * it is loaded, since the table lists them (a route definition never loads the table).
 */
const declaredRoutes: DeclaredRoutes = (path, method) => MATCHER.declared(path, method);
const { evaluateAccess, evaluateAccessMany } = authzenEvaluations(declaredRoutes);
/** The OpenAPI document, generated from this table, which lists it. */
const getOpenApiDocument = openApiRoute(() => openApiDocument(ROUTES));

const ERR_NOT_FOUND = { '404': 'Not found.' };
const ERR_CONFLICT = { '409': 'Already decided or expired.' };

export const ROUTE_TABLE = [
  entry('/api/v1/permissions/finished', {
    POST: op(reportToolCallFinished, 'Decisions', 'Report that an allowed tool call ran or failed: the after_tool_call hooks hear of it (202).', { response: R.finishedAnswerSchema }),
  }, { decisionListener: true }),
  entry('/api/v1/permissions/tools', {
    POST: op(listUsableTools, 'Decisions', 'Which of these tools an agent may ever use (hidden, gated or open): what an MCP gateway lists. Records nothing.', {
      response: R.toolVisibilitySchema,
    }),
  }),
  entry('/api/v1/permissions/check', {
    POST: op(checkToolCall, 'Decisions', 'Decide one tool call: ALLOW, DENY (recorded before the answer) or ASK (an approval request).', {
      description: 'Answered by the decision listener itself when the call carries a bearer token.',
      response: R.checkAnswerSchema,
    }),
  }, { decisionListener: true }),
  entry('/api/v1/permissions/check/batch', {
    POST: op(checkToolCalls, 'Decisions', 'Decide up to 1,000 tool calls in one transaction.', { response: R.checkBatchAnswerSchema, responses: { '413': 'The body is larger than 4 MiB.' } }),
  }, { decisionListener: true }),
  entry('/access/v1/evaluation', {
    POST: op(evaluateAccess, 'AuthZEN', 'OpenID AuthZEN 1.0: one evaluation (subject, action, resource, context).'),
  }, { decisionListener: true }),
  entry('/access/v1/evaluations', {
    POST: op(evaluateAccessMany, 'AuthZEN', 'OpenID AuthZEN 1.0: up to 1,000 evaluations with an evaluation semantic.'),
  }, { decisionListener: true }),
  // Next.js serves it from here; next.config.mjs rewrites /.well-known/authzen-configuration to it.
  entry('/.well-known/authzen-configuration', {
    GET: op(getAuthzenConfiguration, 'AuthZEN', 'The AuthZEN PDP metadata: where the evaluation endpoints are.'),
  }, { adapter: 'app/api/authzen/configuration/route.ts' }),
  // The MCP gateway (Streamable HTTP): JSON-RPC in, JSON or an SSE stream out; a session per Mcp-Session-Id.
  entry('/mcp', {
    POST: op(postMcpMessage, 'MCP', 'An MCP JSON-RPC message of a session (initialize opens one): tools of config/mcp.yaml, each call decided.', {
      description: 'Agents only: an agent token, or an access token of an issuer in config/sso.yaml agent_tokens (a JWT for this resource). 401 names the protected-resource metadata and the scope in WWW-Authenticate; a refused token says why (error="invalid_token").',
    }),
    GET: op(openMcpStream, 'MCP', 'The stream of an MCP session\'s server messages (resumable with Last-Event-ID).'),
    DELETE: op(endMcpSession, 'MCP', 'End an MCP session.'),
  }),
  // Next.js serves it from here; next.config.mjs rewrites /.well-known/oauth-protected-resource/mcp to it.
  entry('/.well-known/oauth-protected-resource/mcp', {
    GET: op(getMcpResourceMetadata, 'MCP', 'Protected-resource metadata (RFC 9728) of the /mcp endpoint.'),
  }, { adapter: 'app/api/mcp/resource-metadata/route.ts' }),
  entry('/api/v1/mcp/pins', {
    GET: op(listMcpPins, 'MCP', 'The MCP tool definitions pinned as reviewed, and those held (changed since, or new under a profile that holds new tools) with the pinned one to compare.', {
      response: R.mcpPinListingSchema,
    }),
  }),
  entry('/api/v1/mcp/pins/accept', {
    POST: op(acceptMcpPin, 'MCP', 'Accept a held definition of an MCP tool (by its SHA-256): pinned, listed and callable again; under change control, proposed like a rule change.', {
      response: R.mcpPinAcceptanceSchema,
      responses: { ...ERR_NOT_FOUND, '409': 'The definition is the pinned one already.' },
    }),
  }),
  entry('/api/v1/mcp/observations', {
    POST: op(observeMcpTools, 'MCP', 'What an upstream of a gateway deciding over REST lists now: first sights pinned (or held), changed definitions held, refused names recorded.', {
      description: 'Agent tokens only (swarm mcp serve with SWARM_URL sends it before it lists or calls a tool).',
      response: R.mcpObservationSchema,
      responses: { '413': 'The body is larger than 4 MiB.' },
    }),
  }),
  entry('/api/v1/permissions/denials', {
    GET: op(listDenials, 'Denials', 'Denials, newest first, filtered and keyset-paged; also as CSV or a JSON-lines export (format).', { response: R.denialPageSchema }),
  }),
  entry('/api/v1/permissions/denials/{id}', {
    GET: op(getDenial, 'Denials', 'One denial with the trace of its decision.', { response: R.denialDetailSchema, responses: ERR_NOT_FOUND }),
  }),
  entry('/api/v1/permissions/denials/summary', {
    GET: op(summarizeDenials, 'Denials', 'Totals and the top agents, rule sources and tools for a filter.', { response: R.denialSummarySchema }),
  }),
  entry('/api/v1/permissions/denials/histogram', {
    GET: op(countDenialsOverTime, 'Denials', 'Denial counts over time by rule-source family, for a filter.', { response: R.denialHistogramSchema }),
  }),
  entry('/api/v1/permissions/denials/facets', {
    GET: op(listDenialFacetValues, 'Denials', 'The values of one field (agent, tool, rule source...) with their counts, for filter suggestions.', { response: R.denialFacetsSchema }),
  }),
  entry('/api/v1/permissions/denials/tail', {
    GET: op(tailDenials, 'Denials', 'Denials written after a given row, for following the trail as it grows.', { response: R.denialTailSchema }),
  }),
  entry('/api/v1/approvals', {
    GET: op(listApprovals, 'Approvals', 'Approval requests by status, gate and agent; pending ones oldest first.', { response: R.approvalListSchema }),
  }),
  entry('/api/v1/approvals/{id}', {
    GET: op(getApproval, 'Approvals', 'One approval request.', { response: R.approvalSchema, responses: ERR_NOT_FOUND }),
  }),
  entry('/api/v1/approvals/{id}/approve', {
    POST: op(approveRequest, 'Approvals', "One person's approval; a two-person gate stays pending until the second.", { response: R.approvalSchema, responses: { ...ERR_NOT_FOUND, ...ERR_CONFLICT } }),
  }),
  entry('/api/v1/approvals/{id}/reject', {
    POST: op(rejectRequest, 'Approvals', 'Reject with a reason; recorded as a denial hitl:<gate>.', { response: R.approvalSchema, responses: { ...ERR_NOT_FOUND, ...ERR_CONFLICT } }),
  }),
  entry('/api/v1/tokens', {
    GET: op(listTokens, 'Tokens', 'Every API token, newest first: owner, scopes, creation, expiry, last use and state. Never a secret.', { response: R.tokenListSchema }),
  }),
  entry('/api/v1/tokens/{id}/revoke', {
    POST: op(revokeToken, 'Tokens', 'Revoke a token: it stops authenticating on every server within a second.', { response: R.tokenSchema, responses: { ...ERR_NOT_FOUND, '409': 'Revoked already.' } }),
  }),
  entry('/api/v1/tokens/{id}/rotate', {
    POST: op(rotateToken, 'Tokens', 'A new token for the owner, name and scopes of this one (shown once); the old one keeps working for the overlap (default 24h).', {
      response: R.rotatedTokenSchema,
      responses: { ...ERR_NOT_FOUND, '409': 'Revoked, expired or disabled: nothing to rotate.' },
    }),
  }),
  entry('/api/v1/policy/proposals', {
    GET: op(listProposals, 'Policy changes', 'Proposed changes to the rules, newest first, with whether change control is enforced and the activation in force.', {
      response: R.proposalListSchema,
    }),
    POST: op(createProposal, 'Policy changes', 'Propose new rule files: compiled (400 names each problem at file:line:column), tested, and replayed against the recorded calls.', {
      response: R.proposalSchema,
    }),
  }),
  entry('/api/v1/policy/proposals/{id}', {
    GET: op(getProposal, 'Policy changes', 'One proposal: the diff of every file, its impact with examples, its tests, its votes, and whether it is stale.', {
      response: R.proposalDetailSchema,
      responses: ERR_NOT_FOUND,
    }),
  }),
  entry('/api/v1/policy/proposals/{id}/votes', {
    POST: op(voteOnProposal, 'Policy changes', 'Approve or reject with a reason. The proposer cannot approve; the last approval needed activates the change on every server.', {
      response: R.voteResultSchema,
      responses: { ...ERR_NOT_FOUND, '403': 'The proposer, or a role that may not approve.', '409': 'Voted already, no longer open, tests failing, or the rules changed since.' },
    }),
  }),
  entry('/api/v1/policy/proposals/{id}/withdraw', {
    POST: op(withdrawProposal, 'Policy changes', 'Withdraw an open proposal (its proposer or an admin).', { response: R.proposalSchema, responses: { ...ERR_NOT_FOUND, '409': 'No longer open.' } }),
  }),
  entry('/api/v1/policy/rollback', {
    POST: op(proposeRollback, 'Policy changes', 'Propose going back to the files of an earlier activation; reviewed and approved like any change.', {
      response: R.proposalSchema,
      responses: { ...ERR_NOT_FOUND, '409': 'Change control is off.' },
    }),
  }),
  entry('/api/v1/policy/activations', {
    GET: op(listActivations, 'Policy changes', 'Every activation of the rules, newest first: the seed, approved proposals, emergency rollbacks.', { response: R.activationListSchema }),
  }),
  entry('/api/v1/notifications/deliveries', {
    GET: op(listDeliveries, 'Notifications', 'Notifications queued for the channels of config/notifications.yaml, newest first: state, attempts, last error.'),
  }),
  entry('/api/v1/flags', {
    GET: op(listFlags, 'Flags', 'Every feature flag: effective value, the layer that decided it, problems.'),
  }),
  entry('/api/v1/flags/history', {
    GET: op(listFlagHistory, 'Flags', 'Every flag change, newest first.'),
  }),
  entry('/api/v1/flags/{name}', {
    GET: op(getFlag, 'Flags', 'One feature flag.', { response: R.flagSchema, responses: ERR_NOT_FOUND }),
    PUT: op(setFlagOverride, 'Flags', 'Set a runtime override, with a reason. Turning off an invariant is refused and recorded.', { response: R.flagSchema }),
    DELETE: op(removeFlagOverride, 'Flags', 'Remove the runtime override, with a reason.', { response: R.flagSchema }),
  }),
  entry('/api/v1/transparency', {
    GET: op(getTransparencyReport, 'Transparency', 'The /transparency page as JSON: flags by tier, sources in force, files, history.'),
  }),
  entry('/api/v1/auth/login', {
    POST: op(signIn, 'Sessions', 'Sign in to the console: sets the session cookie.', {
      responses: { '429': 'ACCOUNT_LOCKED: the user name is locked after failed sign-ins (a compliance profile), or another attempt for it is under way; Retry-After says when to try again.' },
    }),
  }),
  entry('/api/v1/auth/logout', {
    POST: op(signOut, 'Sessions', 'Sign out: ends the session.', { response: R.signedOutSchema }),
  }),
  entry('/api/v1/auth/me', {
    GET: op(whoAmI, 'Sessions', 'Who the request is authenticated as.', { response: R.meSchema }),
  }),
  entry('/api/v1/auth/sso/{provider}/start', {
    GET: op(startSso, 'Sessions', 'Sign in through a single sign-on provider of config/sso.yaml: 303 to the provider, with the sign-in under way in a sealed cookie.', {
      contentType: 'text/plain',
      responses: { '303': 'To the provider\'s sign-in page (or to /login/refused when it cannot be reached).', ...ERR_NOT_FOUND },
    }),
  }),
  entry('/api/v1/auth/sso/{provider}/callback', {
    GET: op(ssoCallback, 'Sessions', 'Where the provider sends the browser back: signs the person in (roles from groups) or refuses, saying why.', {
      contentType: 'text/html',
      description: 'Checks state, nonce and PKCE; takes the role from the person\'s groups at every sign-in; creates a user first seen. Signed in: the session cookie and a page that moves on. Refused: 303 to /login/refused?reason=… (recorded as auth.sso.refused).',
      responses: { '303': 'Refused: to the page that says why.', ...ERR_NOT_FOUND },
    }),
  }),
  entry('/api/v1/auth/sso/{provider}/backchannel-logout', {
    POST: op(ssoBackchannelLogout, 'Sessions', 'OpenID Connect back-channel logout: the provider ends the sessions of a provider session (sid) or a person (sub).', {
      description: 'Body: logout_token=<signed JWT> (application/x-www-form-urlencoded), verified against the provider\'s keys.',
      responses: { '400': 'The logout token is missing or not valid.', ...ERR_NOT_FOUND },
    }),
  }),
  entry('/api/v1/audit/events', {
    GET: op(listSecurityEvents, 'Audit', 'Security events (sign-ins, approvals, changes, reads of the trail), filtered and paged.', { response: R.eventPageSchema }),
  }),
  entry('/api/v1/audit/verify', {
    GET: op(verifyAuditTrail, 'Audit', 'Verify both hash chains and every signed checkpoint now (recorded as audit.verified).', { response: R.verifyReportSchema }),
  }),
  entry('/api/v1/reports/audit.pdf', {
    GET: op(auditReportPdf, 'Audit', 'The audit report of a period as a PDF.', { contentType: 'application/pdf' }),
  }),
  entry('/api/v1/reports/audit.oscal.json', {
    GET: op(auditReportOscal, 'Audit', 'The audit report of a period as OSCAL assessment results.'),
  }),
  entry('/api/v1/health', {
    GET: op(checkHealth, 'Operations', 'Liveness: the server answers.'),
  }),
  entry('/api/v1/ready', {
    GET: op(checkReadiness, 'Operations', 'Readiness: the database takes writes, the configuration loaded, the checkpointer and the approval sweeper run.', {
      responses: { '503': 'Not ready; the reason says which check failed.' },
    }),
  }),
  entry('/api/v1/openapi.json', {
    GET: op(getOpenApiDocument, 'Operations', 'This document: OpenAPI 3.1, generated from the routes and their zod schemas.'),
  }),
] as const;

/**
 * The paths the decision listener answers itself, which no Next.js route adapts (lib/server/front.ts), with the role
 * each method requires. Read by the listener (the role it asks for) and by this table's matcher (AuthZEN `http`
 * evaluations, a 405's Allow header), so that an evaluation of `GET /metrics` asks for what the listener does.
 */
export const LISTENER_ONLY_ROUTES: ListenerOnlyRoutes = {
  '/metrics': { GET: 'admin' },
};

type Entry = (typeof ROUTE_TABLE)[number];
/** A path the table lists. */
export type RoutePath = Entry['path'];
/** The methods the entry of `P` serves. */
export type MethodsOf<P extends RoutePath> = keyof Extract<Entry, { path: P }>['methods'] & HttpMethod;

/** The table as plain entries, for code that walks it whatever the path. */
export const ROUTES: readonly RouteTableEntry[] = ROUTE_TABLE;

/** Paths matched with this table (lib/http/route-matcher.ts). */
export const MATCHER = routeMatcher(ROUTES, LISTENER_ONLY_ROUTES);

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
