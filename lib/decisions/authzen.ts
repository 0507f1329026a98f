/**
 * The OpenID AuthZEN Authorization API 1.0 in front of the engine, so that gateways and other policy enforcement
 * points can use it as their policy decision point:
 *
 *   POST /access/v1/evaluation     one subject, action, resource (and context) -> { decision: boolean, context }
 *   POST /access/v1/evaluations    defaults plus `evaluations: [...]`, with options.evaluations_semantic
 *   GET  /.well-known/authzen-configuration   the PDP's metadata
 *
 * Mapping (docs/api.md, "AuthZEN"):
 *   subject  { type: agent | user, id }                  the principal the decision is for
 *   resource { type: tool, id: <tool>, properties: { agent?, arguments? } }, action { name: call | invoke | execute }
 *            a tool call (agent: the subject's own for an agent subject; required for a user subject)
 *   resource { type: http, id: </path> , properties: { required_role? } }, action { name: <HTTP method> }
 *            an HTTP endpoint
 *   context  { tool_call_id?, arguments? }
 * A decision is the engine's: ALLOW is `true`; DENY and ASK are `false` (an ASK waits for a person: its context
 * carries the approval id). Every evaluation is recorded like a check: denials before the answer, in one transaction
 * for a batch.
 *
 * Who may ask: an agent token asks for its own agent only; a person for themselves; an administrator for anyone.
 */
import { z } from 'zod';
import type { App } from '@/lib/app';
import { AppError, isError } from '@/lib/errors';
import { MALFORMED_PATH, Reply } from '@/lib/http/route';
import type { DeclaredRoutes } from '@/lib/http/route-entry';
import { canonicalPath } from '@/lib/http/route-path';
import { exactObjectSchema } from '@/lib/http/schemas';
import { isRole, ROLES, roleRank, type CheckInput, type CheckResult, type Principal, type Role } from '@/lib/permissions';
import { decideBatch } from './check';

// Properties and context are kept exactly as sent (they hold a call's arguments): a key that a copy would turn into a
// prototype (`__proto__`) is refused at any depth, and the arguments inside them have the limit of arguments anywhere.
const properties = exactObjectSchema('properties', 0);
const entity = z.object({ type: z.string().min(1).max(100), id: z.string().min(1).max(500), properties: properties.optional() });
const action = z.object({ name: z.string().min(1).max(100), properties: properties.optional() });

export const evaluationSchema = z.object({ subject: entity, action, resource: entity, context: properties.optional() });

export const EVALUATIONS_SEMANTICS = ['execute_all', 'deny_on_first_deny', 'permit_on_first_permit'] as const;
export const MAX_EVALUATIONS = 1_000;

/** An evaluation whose parts may be left to the request's defaults. */
const evaluationDefaults = evaluationSchema.partial();

export const evaluationsSchema = evaluationDefaults.extend({
  evaluations: z
    .array(evaluationDefaults)
    .max(MAX_EVALUATIONS, `at most ${MAX_EVALUATIONS} evaluations in one request`)
    .optional(),
  options: z
    .object({ evaluations_semantic: z.enum(EVALUATIONS_SEMANTICS, { error: `evaluations_semantic is one of ${EVALUATIONS_SEMANTICS.join(', ')}` }).default('execute_all') })
    .optional(),
});

export type Evaluation = z.output<typeof evaluationSchema>;
export type Evaluations = z.output<typeof evaluationsSchema>;

const TOOL_ACTIONS = new Set(['call', 'invoke', 'execute']);
const HTTP_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The subject as a principal, or AppError: unknown (400) or not the caller's to ask about (403). */
async function principalOf(app: App, caller: Principal, subject: Evaluation['subject']): Promise<Principal> {
  const type = subject.type.toLowerCase();
  if (type !== 'agent' && type !== 'user') {
    throw new AppError('BAD_REQUEST', `subject.type "${subject.type}" is not known here: use "agent" or "user".`);
  }
  const self = caller.kind === type && caller.id === subject.id;
  if (!self && caller.role !== 'admin') {
    throw new AppError(
      'FORBIDDEN',
      caller.kind === 'agent'
        ? `An agent token asks only about its own agent ("${caller.id}"), not about ${type} "${subject.id}".`
        : `Only an administrator asks about another subject than themselves (${type} "${subject.id}").`,
    );
  }
  // An administrator asking for another subject acts for it, explicitly: what the call does (an approval it uses) is
  // recorded as the administrator's.
  const actor = self || caller.kind === 'anonymous' ? undefined : { kind: caller.kind, id: caller.id, role: caller.role };
  if (type === 'agent') return { kind: 'agent', id: subject.id, role: 'viewer', agent: subject.id, ...(actor ? { actor } : {}) };
  const user = await app.auth.findUser(subject.id);
  if (!user || user.disabled) throw new AppError('BAD_REQUEST', `subject user "${subject.id}" is not a user of this server (or is disabled).`);
  return { kind: 'user', id: user.username, role: user.role, ...(actor ? { actor } : {}) };
}

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** The engine's input for one evaluation, or AppError (400) naming what does not map. */
export async function inputOf(app: App, caller: Principal, e: Evaluation, routes: DeclaredRoutes): Promise<CheckInput> {
  const principal = await principalOf(app, caller, e.subject);
  const type = e.resource.type.toLowerCase();
  const props = e.resource.properties ?? {};
  if (type === 'tool') {
    if (!TOOL_ACTIONS.has(e.action.name.toLowerCase())) {
      throw new AppError('BAD_REQUEST', `action.name "${e.action.name}" does not apply to a tool: use "call" (or "invoke", "execute").`);
    }
    const agent = principal.kind === 'agent' ? principal.id : typeof props.agent === 'string' ? props.agent : undefined;
    if (!agent) throw new AppError('BAD_REQUEST', 'resource.properties.agent names the agent whose tool call this is (required for a user subject).');
    const args = record(props.arguments) ?? record(e.context?.arguments) ?? {};
    const toolCallId = typeof e.context?.tool_call_id === 'string' ? e.context.tool_call_id : undefined;
    return { kind: 'tool', principal, agent, tool: e.resource.id, arguments: args, toolCallId };
  }
  if (type === 'http') {
    const method = e.action.name.toUpperCase();
    if (!HTTP_METHODS.has(method)) throw new AppError('BAD_REQUEST', `action.name "${e.action.name}" is not an HTTP method.`);
    if (!e.resource.id.startsWith('/')) throw new AppError('BAD_REQUEST', 'resource.id of an http resource is a path starting with "/".');
    // The path as the router goes by it (dot segments, repeated slashes, escapes), so that a spelling of a path cannot
    // step around a rule on it: /api/v1/./flags/x is /api/v1/flags/x.
    const canonical = canonicalPath(e.resource.id);
    if (canonical === undefined) throw new AppError('BAD_REQUEST', `resource.id: ${MALFORMED_PATH}`);
    const given = props.required_role;
    if (given !== undefined && (typeof given !== 'string' || !isRole(given))) throw new AppError('BAD_REQUEST', `resource.properties.required_role is one of ${ROLES.join(', ')}.`);
    // This product's own routes declare their role: an evaluation of one can never ask for less than the route does. A
    // path that differs from one of them only by letter case is taken as that route (and decided on its spelling).
    const own = routes(canonical, method);
    const declared = own?.role;
    const role = declared && (!given || roleRank(given) < roleRank(declared)) ? declared : (given ?? 'viewer');
    return { kind: 'http', principal, method, path: own?.path ?? canonical, requiredRole: role, ...(own?.principal ? { requiredPrincipal: own.principal } : {}) };
  }
  throw new AppError('BAD_REQUEST', `resource.type "${e.resource.type}" is not known here: use "tool" or "http".`);
}

/** An engine answer in AuthZEN's shape: a boolean, and the context an auditor and a PEP can use. */
export function answerOf(r: CheckResult) {
  return {
    decision: r.decision === 'ALLOW',
    context: {
      decision_id: r.decisionId ?? null,
      /** the engine's own answer: ALLOW, DENY, or ASK (waiting for a person's approval) */
      swarm_decision: r.decision,
      rule_source: r.ruleSource,
      approval_id: r.approvalId ?? null,
      reason_admin: { en: r.reason },
      // A before_tool_call hook rewrote the arguments: what is allowed (and recorded, and approved) is the call with
      // these arguments, and the enforcement point must run that one, as an agent runs a check's `arguments`.
      ...(r.argumentsChangedBy?.length ? { arguments_changed_by: r.argumentsChangedBy, arguments: r.arguments ?? null } : {}),
    },
  };
}

export type AuthzenAnswer = ReturnType<typeof answerOf>;

/** One evaluation, decided and recorded. */
export async function evaluate(app: App, caller: Principal, e: Evaluation, ip: string | undefined, routes: DeclaredRoutes): Promise<AuthzenAnswer> {
  const input = await inputOf(app, caller, e, routes);
  return answerOf(await app.decisions.decide(input, { ip }));
}

/**
 * Several evaluations: each entry's subject, action, resource and context default to the request's. Every input is
 * mapped before anything is decided (a bad entry refuses the request, 400, with its index); then they are decided in
 * order in one transaction, stopping early as the semantic asks (the calls' hooks run first, outside it).
 */
export async function evaluateMany(app: App, caller: Principal, req: Evaluations, ip: string | undefined, routes: DeclaredRoutes): Promise<{ evaluations: AuthzenAnswer[] }> {
  const entries = req.evaluations ?? [];
  const inputs: CheckInput[] = [];
  for (const [i, entry] of entries.entries()) {
    const merged = {
      subject: entry.subject ?? req.subject,
      action: entry.action ?? req.action,
      resource: entry.resource ?? req.resource,
      context: entry.context ?? req.context,
    };
    const parsed = evaluationSchema.safeParse(merged);
    if (!parsed.success) {
      const missing = (['subject', 'action', 'resource'] as const).filter((k) => merged[k] === undefined);
      throw new AppError('BAD_REQUEST', `evaluations[${i}]: ${missing.length ? `no ${missing.join(', ')} (neither in the entry nor as a default)` : 'not a valid evaluation'}.`);
    }
    try {
      inputs.push(await inputOf(app, caller, parsed.data, routes));
    } catch (error) {
      if (isError(error, AppError)) throw new AppError(error.code, `evaluations[${i}]: ${error.message}`);
      throw error;
    }
  }
  const semantic = req.options?.evaluations_semantic ?? 'execute_all';
  const results = await decideBatch(app, inputs, ip, (r) =>
    semantic === 'deny_on_first_deny' ? r.decision !== 'ALLOW' : semantic === 'permit_on_first_permit' ? r.decision === 'ALLOW' : false,
  );
  return { evaluations: results.map(answerOf) };
}

/** The PDP's metadata document, for `/.well-known/authzen-configuration`. */
export function metadata(base: string) {
  return {
    policy_decision_point: base,
    access_evaluation_endpoint: `${base}/access/v1/evaluation`,
    access_evaluations_endpoint: `${base}/access/v1/evaluations`,
  };
}

/** The server's public base URL: SWARM_PUBLIC_URL, else what the request (and a proxy's headers) say. */
export function publicBase(request: Request, env: Readonly<Record<string, string | undefined>>): string {
  const configured = env.SWARM_PUBLIC_URL?.trim();
  if (configured) return configured.replace(/\/+$/, '');
  const url = new URL(request.url);
  const proto = request.headers.get('x-forwarded-proto')?.split(',')[0]?.trim() || url.protocol.replace(/:$/, '');
  const host = request.headers.get('x-forwarded-host')?.split(',')[0]?.trim() || request.headers.get('host') || url.host;
  return `${proto}://${host}`;
}

/** AuthZEN asks a PDP to echo the request's X-Request-ID. */
export function withRequestId(header: (name: string) => string | null, body: AuthzenAnswer | { evaluations: AuthzenAnswer[] }): Reply {
  const id = header('x-request-id');
  return new Reply(body, id && id.length <= 200 ? { headers: { 'x-request-id': id } } : {});
}
