/**
 * The one route wrapper. Every API route is defined as `route({ role: requireRole(...), ... }, handler)` in
 * lib/http/routes/ and listed in the route table (lib/http/route-table.ts):
 * authenticate -> engine (RBAC, flags on the path, YAML rules on method and path) -> same-origin check for
 * state-changing cookie requests -> validate params, query and body with zod -> handler -> map errors.
 * A route without a role requirement does not type-check (so it does not build), and throws when loaded.
 *
 * What route() makes is data, a RouteDefinition (its spec and its transport-neutral core): Next.js serves it through
 * an adapter in app/ (lib/http/next-handlers.ts), the decision listener (lib/server/front.ts) serves the decision
 * routes itself, and the OpenAPI document describes it; all three read the same table.
 */
import { z } from 'zod';
import type { App } from '@/lib/app';
import { isDatabaseUnreachable } from '@/db/pg/client';
import { AppError, CODED_ERRORS, messageOf, brand, isError } from '@/lib/errors';
import { logRequest } from '@/lib/ops/log';
import { forwardedClientAddress } from './client-address';
import { canonicalPath, MALFORMED_PATH } from './route-path';
import { looksLikeJwt } from '@/lib/oauth/agent-tokens';
import { ANONYMOUS, principalLabel, argumentsPath, AuditUnavailable, InvalidArguments, isRole, PermissionDenied, type CheckResult, type Principal, type Role, type TokenScope } from '@/lib/permissions';

declare const roleBrand: unique symbol;
export interface RoleRequirement {
  readonly role: Role;
  readonly [roleBrand]: true;
}

const REQUIREMENTS = new WeakSet<object>();

/** The role a route requires, in one line: `requireRole("admin")`. `anonymous` marks a deliberately public route. */
export function requireRole(role: Role): RoleRequirement {
  if (!isRole(role)) throw new Error(`Unknown role "${String(role)}".`);
  const req = Object.freeze({ role }) as RoleRequirement;
  REQUIREMENTS.add(req);
  return req;
}

export const SESSION_COOKIE = 'swarm_session';
/** Set by the console on its own background refreshes (polls), so that they are not logged as decisions. */
export const BACKGROUND_HEADER = 'x-swarm-background';
/** The answer to a path whose escapes do not decode (`/api/v1/flags/%ZZ`), from the listener and the routes alike. */
export { MALFORMED_PATH } from './route-path';
export const MAX_BODY_BYTES = 64 * 1024;

export interface RouteInput<P, Q, B> {
  /** the web Request (built on first use where the transport is not Next.js) */
  request: Request;
  /** a request header, case-insensitive (null when absent) */
  header(name: string): string | null;
  app: App;
  principal: Principal;
  params: P;
  query: Q;
  body: B;
  /** the decision that let this request in */
  decision: CheckResult;
  /** the client's address (lib/http/client-address.ts: the socket's, or what trusted proxies say), when known */
  ip: string | undefined;
}

/**
 * What a handler may return besides a plain JSON-able value: the value with a status and headers of its own. Unlike a
 * Response, a Reply can be sent by any transport (Next.js, or the decision listener in front of it).
 */
export class Reply {
  constructor(
    readonly body: unknown,
    readonly init: { status?: number; headers?: Record<string, string> } = {},
  ) {}
}

/** The request as the route core sees it, whatever carried it (Next.js, or node:http in the decision listener). */
export interface ApiRequest {
  method: string;
  /** the path, as `url.pathname` (the decision listener has it without parsing the whole address) */
  path: string;
  url: URL;
  header(name: string): string | null;
  /**
   * the client's address, resolved once by the transport with the one rule of lib/http/client-address.ts: the
   * decision listener from its socket and X-Forwarded-For, Next.js from what the listener proves it resolved
   */
  readonly clientAddress: string | undefined;
  /** the body as text (called at most once) */
  text(): Promise<string>;
  /** a web Request of the same request (for handlers that need one: cookies, streams) */
  toRequest(): Request;
}

/** A route's answer before a transport sends it: a JSON body and headers, or (Next.js only) a Response. */
export type ApiAnswer = { status: number; headers: Record<string, string>; body: unknown } | Response;

/** The transport-neutral core of a route: the same steps and errors for every transport. */
export type RouteCore = (app: App, request: ApiRequest, rawParams: Record<string, string | string[] | undefined>) => Promise<ApiAnswer>;

/** What the API reference says about a route beyond its role and schemas (written in the route table). */
export interface RouteDoc {
  /** one line: what the operation does */
  summary: string;
  /** more, in plain sentences */
  description?: string;
  /** the reference's grouping (default: from the path) */
  tag?: string;
  /** the JSON answered on success, when it has a schema */
  response?: z.ZodType;
  /** the media type of a successful answer (default application/json) */
  contentType?: string;
  /** other statuses this operation answers, with what they mean */
  responses?: Record<string, string>;
}

type Schema = z.ZodType;
type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface RouteSpec<PS, QS, BS> {
  role: RoleRequirement;
  /**
   * what a token must be scoped for (lib/permissions/types.ts TOKEN_SCOPES): `decide` for the decision routes, `none`
   * for what any valid token may do (who am I); by default `admin` for an admin route, else `read` for GET and HEAD
   * and `operate` for a change (routeScope)
   */
  scope?: TokenScope | 'none';
  /** the kind of principal the route serves, if only one (RBAC refuses the other, recorded like any denial) */
  principals?: 'agent' | 'user';
  params?: PS;
  query?: QS;
  body?: BS;
  /**
   * the body's common shape read without zod (the decision routes): what `body` would answer, or undefined for
   * anything it does not take, which `body` then parses and explains
   */
  fastBody?: (raw: unknown) => Out<BS> | undefined;
  /** the largest body this route reads (default MAX_BODY_BYTES); a batch of 1,000 checks needs more */
  maxBodyBytes?: number;
  /** the WWW-Authenticate challenge of a 401 (the MCP endpoint's names its protected-resource metadata) */
  challenge?: (request: Request, app: App) => string;
  /**
   * what the refusal of a known principal (a role below the route's, a token's scope) records besides its denial, in
   * the words of the route's domain (a flag change's history, lib/flags/change.ts); given the request as it came (path
   * parameters unvalidated, the body parsed as JSON if it could be, else undefined). Recorded before the 403 is sent;
   * a failure to record fails the request.
   */
  onRefused?: (refusal: RouteRefusal) => Promise<void>;
}

/** A request the engine refused, as a route's onRefused hears of it. */
export interface RouteRefusal {
  app: App;
  principal: Principal;
  params: Readonly<Record<string, string | string[] | undefined>>;
  body: unknown;
  ip: string | undefined;
  /** the engine's reason */
  message: string;
}

/**
 * A route as data: the spec it was defined with (its role and schemas, which the OpenAPI document and AuthZEN read)
 * and its core, which every transport runs. Made only by route(), so it always has a declared role.
 */
export interface RouteDefinition {
  readonly spec: RouteSpec<Schema | undefined, Schema | undefined, Schema | undefined>;
  readonly core: RouteCore;
}

const NO_STORE = { 'cache-control': 'no-store' };

export function errorAnswer(status: number, code: string, message: string, extra: Record<string, unknown> = {}): ApiAnswer {
  return { status, headers: NO_STORE, body: { error: { code, message, ...extra } } };
}

/** The answer to a failure nobody foresaw (logged where it happened). */
export const INTERNAL_ERROR = errorAnswer(500, 'INTERNAL', 'Something went wrong on the server; it has been logged.');

export const errorResponse = (...error: Parameters<typeof errorAnswer>): Response => toResponse(errorAnswer(...error));

/** A core answer as a web Response (the Next.js transport). */
export function toResponse(a: ApiAnswer): Response {
  return a instanceof Response ? a : Response.json(a.body, { status: a.status, headers: a.headers });
}

function zodIssues(error: z.ZodError, where: string) {
  return error.issues.map((i) => ({ in: where, path: i.path.join('.'), message: i.message, code: i.code }));
}

export function readCookie(request: Pick<ApiRequest, 'header'>, name: string): string | undefined {
  const header = request.header('cookie');
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodedCookie(part.slice(eq + 1).trim());
  }
  return undefined;
}

/**
 * A cookie's value, its escapes decoded. A value whose escapes do not decode is taken as sent: it names no session,
 * so the request is answered as one with an invalid session (401), never as a server error.
 */
function decodedCookie(value: string): string {
  if (value.indexOf('%') < 0) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** A value for an auth-param of WWW-Authenticate: a quoted-string of visible ASCII (RFC 9110 §11.2). */
function quotedParam(value: string): string {
  return `"${value.replace(/[^\x20-\x7e]/g, '?').replace(/["\\]/g, "'").slice(0, 300)}"`;
}

/** The credential a request presents: a bearer token, else a session cookie, else none (or a malformed one). */
export type Credential = { via: 'token' | 'session'; secret: string } | { via: 'none'; invalid: boolean };

export function credentialOf(request: Pick<ApiRequest, 'header'>): Credential {
  const auth = request.header('authorization');
  if (auth) {
    const m = /^Bearer\s+(\S+)$/i.exec(auth);
    return m ? { via: 'token', secret: m[1]! } : MALFORMED;
  }
  const session = readCookie(request, SESSION_COOKIE);
  return session ? { via: 'session', secret: session } : NO_CREDENTIAL;
}

const MALFORMED: Credential = { via: 'none', invalid: true };
const NO_CREDENTIAL: Credential = { via: 'none', invalid: false };

/**
 * Who a credential names (undefined: nobody, it is not valid). A token is answered at once where its port answers at
 * once (SQLite, the decision listener's path: lib/auth/tokens-sqlite.ts), else with a promise; a session with a promise.
 * The decision service waits for it where it must (decideFor).
 */
export function principalOf(app: App, credential: Credential, ip?: string, why?: (reason: string) => void) {
  if (credential.via === 'token') {
    // An access token of the company's provider (a JWT) for an agent; our own tokens never look like one.
    if (looksLikeJwt(credential.secret)) return app.agentTokens.principal(credential.secret, ip, why);
    return app.tokens.principalForToken(credential.secret);
  }
  if (credential.via === 'session') return app.auth.principalForSession(credential.secret);
  return ANONYMOUS;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The scope a token needs for a request to a route (undefined: none, a public route or one any token may call). */
export function routeScope(declared: TokenScope | 'none' | undefined, role: Role, method: string): TokenScope | undefined {
  if (declared === 'none' || role === 'anonymous') return undefined;
  if (declared) return declared;
  return role === 'admin' ? 'admin' : SAFE_METHODS.has(method) ? 'read' : 'operate';
}

/** A state-changing request carried by a cookie must come from our own origin (SameSite is the first line). */
function isCrossOrigin(request: ApiRequest): boolean {
  const site = request.header('sec-fetch-site');
  if (site && site !== 'same-origin' && site !== 'none') return true;
  const origin = request.header('origin');
  if (!origin) return false;
  const host = request.header('x-forwarded-host') ?? request.header('host') ?? request.url.host;
  try {
    return new URL(origin).host !== host;
  } catch {
    return true;
  }
}

/**
 * A body's bytes as text, the one decoding of every transport: UTF-8, malformed sequences as U+FFFD, a byte order
 * mark kept (readBody decides what it means). The Fetch standard's text() would drop a mark, and Node.js's drops two.
 */
export function bodyText(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/**
 * Thrown by a transport's text() when the body is larger than anything a route reads (the decision listener stops
 * reading at 4 MiB): the route answers 413 with its own limit, as it does for a body it measured itself.
 */
export class BodyTooLarge extends Error {
  static readonly kind = 'BodyTooLarge';
  constructor() {
    super('The body is larger than the largest body read.');
    brand(this, BodyTooLarge);
  }
}

async function readBody(request: ApiRequest, max = MAX_BODY_BYTES): Promise<unknown> {
  const length = Number(request.header('content-length') ?? '0');
  if (length > max) throw new AppError('PAYLOAD_TOO_LARGE', `The body is larger than ${max} bytes.`);
  let text: string;
  try {
    text = await request.text();
  } catch (error) {
    if (isError(error, BodyTooLarge)) throw new AppError('PAYLOAD_TOO_LARGE', `The body is larger than ${max} bytes.`);
    throw error;
  }
  // A UTF-16 unit is at most 3 bytes of UTF-8: only a long text is measured (the measure walks the whole body).
  if (text.length * 3 > max && Buffer.byteLength(text) > max) throw new AppError('PAYLOAD_TOO_LARGE', `The body is larger than ${max} bytes.`);
  // One leading byte order mark is not part of the JSON (RFC 8259 8.1 lets a parser ignore it, as JSON.parse-compatible
  // parsers do); the transports keep it in the text (bodyText), so that this one rule decides on every transport.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  // (a body that starts with '{' is not blank: no trimmed copy of it is made)
  if (text.charCodeAt(0) !== 0x7b && text.trim() === '') return {};
  const type = request.header('content-type') ?? '';
  if (type && !/^application\/json\b/i.test(type)) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json.');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new AppError('BAD_REQUEST', `The body is not valid JSON: ${messageOf(e)}`);
  }
}

function queryObject(url: URL): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const all = url.searchParams.getAll(key);
    out[key] = all.length === 1 ? all[0]! : all;
  }
  return out;
}

function mapError(error: unknown): ApiAnswer {
  if (isError(error, AppError)) {
    return errorAnswer(error.status, error.code, error.message, error.details === undefined ? {} : { details: error.details });
  }
  if (error instanceof z.ZodError) {
    return errorAnswer(400, 'BAD_REQUEST', 'The request is not valid.', { issues: zodIssues(error, 'body') });
  }
  if (isError(error, InvalidArguments)) {
    // Arguments the engine refused (a body validated them already; these came another way, a hook's rewrite say).
    return errorAnswer(400, 'BAD_REQUEST', error.message, {
      issues: [{ in: 'body', path: argumentsPath(error.problem), message: error.problem.message, code: error.problem.code }],
    });
  }
  if (isError(error, PermissionDenied)) {
    return errorAnswer(403, 'FORBIDDEN', error.message, { rule_source: error.result.ruleSource, decision_id: error.decisionId ?? null });
  }
  // The other coded errors answer from the one map (lib/errors.ts). An audit row that cannot be written fails closed:
  // nothing is done that could not be recorded (as Vault refuses a request it cannot audit). PostgreSQL out of reach:
  // nothing was decided or recorded, and the caller may try again (another server, later).
  const code = isDatabaseUnreachable(error) ? 'DATABASE_UNAVAILABLE' : (error as { code?: unknown } | null)?.code;
  const known = typeof code === 'string' ? CODED_ERRORS[code] : undefined;
  if (!known) {
    console.error('Unhandled error in route', error);
    return INTERNAL_ERROR;
  }
  if (known.log) console.error(known.log, isError(error, AuditUnavailable) ? error.cause : error);
  const answer = errorAnswer(known.status, known.code ?? (code as string), known.message ?? (messageOf(error)));
  return known.retry ? { ...answer, headers: { ...NO_STORE, 'retry-after': '1' } } : answer;
}

/** The decision id an answer names (a check's decision, a refusal's), if any. */
function answerDecisionId(answer: ApiAnswer): string | undefined {
  if (answer instanceof Response) return undefined;
  const body = answer.body as { decision_id?: unknown; error?: { decision_id?: unknown } } | null;
  const id = body && typeof body === 'object' ? (body.decision_id ?? body.error?.decision_id) : undefined;
  return typeof id === 'string' ? id : undefined;
}

/** A web Request (Next.js's) as the core sees it. */
export function fromWebRequest(request: Request): ApiRequest {
  const url = new URL(request.url);
  const header = (name: string) => request.headers.get(name);
  return {
    method: request.method,
    path: url.pathname,
    url,
    header,
    clientAddress: forwardedClientAddress(header),
    text: async () => bodyText(new Uint8Array(await request.arrayBuffer())),
    toRequest: () => request,
  };
}

export function route<PS extends Schema | undefined = undefined, QS extends Schema | undefined = undefined, BS extends Schema | undefined = undefined>(
  spec: RouteSpec<PS, QS, BS>,
  handler: (input: RouteInput<Out<PS>, Out<QS>, Out<BS>>) => unknown,
): RouteDefinition {
  if (!spec || !spec.role || !REQUIREMENTS.has(spec.role)) {
    // No silently open route: a route that does not declare its role cannot be loaded.
    throw new Error('Every route must declare its required role with requireRole(...).');
  }
  const required = spec.role.role;
  const answerOf = async (app: App, request: ApiRequest, rawParams: Record<string, string | string[] | undefined>, seen: { decisionId?: string; principal?: string }): Promise<ApiAnswer> => {
    try {
      // The path the engine decides on is the one the router went by: two spellings of one route are one path.
      const path = canonicalPath(request.path);
      if (path === undefined) return errorAnswer(400, 'BAD_REQUEST', MALFORMED_PATH);
      const credential = credentialOf(request);
      const ip = request.clientAddress;
      const meta = { ip, background: false };
      let principal: Principal = ANONYMOUS;
      let invalid = credential.via === 'none' && credential.invalid;
      /** why an access token of an identity provider was refused (said in the 401 and its challenge) */
      let tokenRefusal: string | undefined;
      // Decided as soon as the credential's owner is known: at once for a token on SQLite (no hook runs for an HTTP
      // decision), once PostgreSQL's stores or the session's lookup answered otherwise.
      const decision = await app.decisions.decideFor(
        principalOf(app, credential, ip, (reason) => (tokenRefusal = reason)),
        (found) => {
          if (found) principal = found;
          else invalid = true;
          const session = found !== undefined && credential.via === 'session';
          // A console page's background refresh (header x-swarm-background: 1) from a person's session is not logged
          // as a decision under decision_log_all (a DENY still is). Only a session may say so: a token is an agent or
          // a script, whose every call is what the log is for.
          meta.background = session && SAFE_METHODS.has(request.method) && request.header(BACKGROUND_HEADER) === '1';
          // A session's state change from another origin is refused by the engine (csrf:origin), recorded like any denial.
          const crossOrigin = session && !SAFE_METHODS.has(request.method) && isCrossOrigin(request);
          // A token's scope is checked only when the principal has one (a token); the scope is worked out only then.
          const requiredScope = principal.scopes ? routeScope(spec.scope, required, request.method) : undefined;
          return {
            kind: 'http',
            principal,
            method: request.method,
            path,
            requiredRole: required,
            ...(requiredScope ? { requiredScope } : {}),
            ...(spec.principals ? { requiredPrincipal: spec.principals } : {}),
            ...(crossOrigin ? { crossOrigin } : {}),
          } as const;
        },
        meta,
      );
      seen.decisionId = decision.decisionId;
      seen.principal = principal.kind === 'anonymous' ? undefined : principalLabel(principal);
      if (decision.decision !== 'ALLOW') {
        const anonymous = principal.kind === 'anonymous' && decision.rule.attribution.source === 'rbac';
        const message =
          anonymous && tokenRefusal !== undefined
            ? `The access token is refused: ${tokenRefusal}.`
            : anonymous && invalid
              ? 'The token or session is not valid (expired, revoked or unknown).'
              : decision.reason;
        const refused = errorAnswer(anonymous ? 401 : 403, anonymous ? 'UNAUTHENTICATED' : 'FORBIDDEN', message, {
          rule_source: decision.ruleSource,
          decision_id: decision.decisionId ?? null,
        });
        if (anonymous && !(refused instanceof Response)) {
          // RFC 6750 §3: a refused token is invalid_token, with why; the MCP endpoint's challenge names its metadata.
          const challenge = [
            spec.challenge?.(request.toRequest(), app) ?? (credential.via === 'token' ? 'Bearer realm="swarm-permissions"' : undefined),
            tokenRefusal !== undefined || (invalid && credential.via === 'token') ? `error="invalid_token", error_description=${quotedParam(tokenRefusal ?? 'the token is not valid (expired, revoked or unknown)')}` : undefined,
          ].filter((p): p is string => p !== undefined);
          if (challenge.length > 0 && challenge[0]!.startsWith('Bearer')) refused.headers = { ...refused.headers, 'www-authenticate': challenge.join(', ') };
        }
        if (!anonymous && spec.onRefused) {
          const body = spec.body ? await readBody(request, spec.maxBodyBytes).catch(() => undefined) : undefined;
          await spec.onRefused({ app, principal, params: rawParams, body, ip, message: decision.reason });
        }
        return refused;
      }
      const params = spec.params ? spec.params.safeParse(rawParams) : undefined;
      if (params && !params.success) return errorAnswer(400, 'BAD_REQUEST', 'The path is not valid.', { issues: zodIssues(params.error, 'path') });
      const query = spec.query ? spec.query.safeParse(queryObject(request.url)) : undefined;
      if (query && !query.success) return errorAnswer(400, 'BAD_REQUEST', 'The query string is not valid.', { issues: zodIssues(query.error, 'query') });
      let body: unknown;
      if (spec.body) {
        const raw = await readBody(request, spec.maxBodyBytes);
        body = spec.fastBody?.(raw);
        if (body === undefined) {
          const parsed = spec.body.safeParse(raw);
          if (!parsed.success) return errorAnswer(400, 'BAD_REQUEST', 'The body is not valid.', { issues: zodIssues(parsed.error, 'body') });
          body = parsed.data;
        }
      }
      const result: unknown = await handler({
        get request() {
          return request.toRequest();
        },
        header: (name) => request.header(name),
        app,
        principal,
        params: params?.data as Out<PS>,
        query: query?.data as Out<QS>,
        body: body as Out<BS>,
        decision,
        ip,
      });
      if (result instanceof Response) return result;
      if (result instanceof Reply) return { status: result.init.status ?? 200, headers: { ...NO_STORE, ...result.init.headers }, body: result.body ?? null };
      return { status: 200, headers: NO_STORE, body: result ?? null };
    } catch (error) {
      return mapError(error);
    }
  };
  // One structured log line per request (lib/ops/log.ts), whichever transport carried it.
  const core: RouteCore = async (app, request, rawParams) => {
    const started = performance.now();
    const seen: { decisionId?: string; principal?: string } = {};
    const answer = await answerOf(app, request, rawParams, seen);
    logRequest({
      method: request.method,
      route: request.path,
      ip: request.clientAddress,
      status: answer.status,
      durationMs: performance.now() - started,
      decisionId: answerDecisionId(answer) ?? seen.decisionId,
      principal: seen.principal,
    });
    return answer;
  };
  return Object.freeze({ spec: spec as RouteSpec<Schema | undefined, Schema | undefined, Schema | undefined>, core });
}
