/**
 * The vocabulary of the permission engine. Pure data: no I/O, no Next.js, no database.
 */
import type { CompiledGate } from './gates';
import type { HookOutcome } from './call-hooks';

export const DECISIONS = ['ALLOW', 'DENY', 'ASK'] as const;
export type Decision = (typeof DECISIONS)[number];

/** Roles, lowest first. The order is the privilege order. */
export const ROLES = ['anonymous', 'viewer', 'auditor', 'operator', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export function roleRank(role: Role): number {
  return ROLES.indexOf(role);
}

/** True when `role` is at least `required`. */
export function isRoleAtLeast(role: Role, required: Role): boolean {
  return roleRank(role) >= roleRank(required);
}

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/**
 * What a token may do (issue 27). An agent's token `decide`s (check, batch, AuthZEN, MCP, finished, tools visibility);
 * a person's token reads (`read`: the decision routes and what the person may read), operates (`operate`: besides,
 * what changes state below admin, such as deciding approvals) or administers (`admin`: everything the role allows).
 * Each includes the ones before it; a token never does more than its owner's role (RBAC still applies).
 */
export const TOKEN_SCOPES = ['decide', 'read', 'operate', 'admin'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

export function isTokenScope(value: unknown): value is TokenScope {
  return typeof value === 'string' && (TOKEN_SCOPES as readonly string[]).includes(value);
}

/** True when a token of `scopes` may do what needs `required` (each scope includes the ones before it). */
export function scopesAllow(scopes: readonly TokenScope[], required: TokenScope): boolean {
  const need = TOKEN_SCOPES.indexOf(required);
  for (const s of scopes) if (TOKEN_SCOPES.indexOf(s) >= need) return true;
  return false;
}

/** Who is asking: a signed-in user, a user's API token, an agent token, or nobody. */
export interface Principal {
  kind: 'user' | 'agent' | 'anonymous';
  /** user name, or the agent name for an agent token */
  id: string;
  role: Role;
  /** for agent tokens: the only agent this principal may act as */
  agent?: string;
  /** a token's scopes (what it may do within its role); absent for a session, which does all its role allows */
  scopes?: readonly TokenScope[];
  /**
   * Who really asks, when it is not this principal itself: an administrator naming another subject through AuthZEN
   * (an explicit delegation). An approval such a call uses is recorded as used by this caller.
   */
  actor?: { kind: 'user' | 'agent'; id: string; role: Role };
  /**
   * The person an agent acts for, when its credential names one (an access token of the company's provider given to
   * the agent for a person: lib/oauth/agent-tokens.ts). Recorded on every row the call makes; `principal.on_behalf_of`
   * in conditions.
   */
  onBehalfOf?: string;
}

/**
 * How the trail names a principal: a user by name, an agent as `agent:<name>`, and an agent acting for a person as
 * `agent:<name> for <person>` (the requester of an approval, the actor of an event).
 */
export function principalLabel(p: { kind: string; id: string; onBehalfOf?: string }): string {
  if (p.kind !== 'agent') return p.id;
  return p.onBehalfOf ? `agent:${p.id} for ${p.onBehalfOf}` : `agent:${p.id}`;
}

export const ANONYMOUS: Principal = Object.freeze({ kind: 'anonymous', id: 'anonymous', role: 'anonymous' });

/**
 * The approval state of one exact call, filled in by the engine before the sources run. `unverified`: the approvals
 * table says approved and unused, but the chained audit trail does not hold that approval (the table was changed
 * outside the product): it is not used, the call asks again, and `reason` says what does not match.
 */
export type ApprovalStatus = 'none' | 'pending' | 'approved' | 'rejected' | 'expired' | 'unverified';
export interface ApprovalState {
  status: ApprovalStatus;
  id?: string;
  reason?: string;
}

/** Effective flag values, filled in by the engine. */
export type FlagValues = ReadonlyMap<string, boolean>;

/**
 * What an MCP server says about one of its tools (the specification's ToolAnnotations). Hints, not guarantees: the
 * gateway passes what the upstream declared, and the policy reads them with the specification's defaults
 * (effectiveAnnotations in lib/permissions/annotations.ts). Absent on a call that did not come through the MCP gateway.
 */
export interface ToolAnnotations {
  readonly readOnlyHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly idempotentHint?: boolean;
  readonly openWorldHint?: boolean;
}

export interface ToolContext {
  kind: 'tool';
  principal: Principal;
  agent: string;
  tool: string;
  arguments: Readonly<Record<string, unknown>>;
  toolCallId?: string;
  /** optional role the caller demands for this tool (RBAC applies when set) */
  requiredRole?: Role;
  /** the tool's MCP annotations, as its server declared them (calls through the MCP gateway only) */
  annotations?: ToolAnnotations;
  /** the MCP client that made the call, as it named itself (`Claude Desktop 1.2`): shown on its approval request */
  client?: string;
  /**
   * The upstream MCP tool this call is for, as the gateway saw it (calls through the MCP gateway only): its server, its
   * own name there, and the SHA-256 of its definition (lib/mcp/pins/definition.ts). A definition that is not the pinned
   * one is refused (the source `mcp_pin`) until an operator accepts it.
   */
  mcp?: McpToolRef;
  /** the time conditions see as `now`, in ms since the epoch (policy tests and `explain` pin it); default: the clock */
  now?: number;
}

/** An upstream MCP tool as the gateway saw it (ToolContext.mcp). */
export interface McpToolRef {
  readonly server: string;
  readonly tool: string;
  readonly sha256: string;
}

export interface HttpContext {
  kind: 'http';
  principal: Principal;
  method: string;
  path: string;
  /** declared by the route with requireRole(); RBAC denies principals below it */
  requiredRole: Role;
  /** what a token must be scoped for to reach the route (lib/http/route.ts); RBAC denies a token without it (`rbac:scope`) */
  requiredScope?: TokenScope;
  /** the kind of principal the route serves (the MCP endpoint serves agents; people vote on rules): RBAC denies another */
  requiredPrincipal?: 'agent' | 'user';
  /**
   * A person's session sent this state-changing request from another origin (the HTTP wrapper's check of Origin and
   * Sec-Fetch-Site): the engine refuses it above every source, as `csrf:origin`, and records it like any denial.
   */
  crossOrigin?: boolean;
  agent?: string;
  tool?: undefined;
  arguments?: Readonly<Record<string, unknown>>;
  toolCallId?: string;
  now?: number;
}

/** What a caller passes to check() / enforce(). */
export type CheckInput = ToolContext | HttpContext;

/** What a source sees: the input plus what the engine adds so that sources stay pure. */
export type PermissionContext = CheckInput & {
  readonly flags: FlagValues;
  /** the gate that applies to this call (its tool is covered and its `when` holds), for tool calls */
  readonly gate?: CompiledGate;
  /** present for tool calls to gated tools */
  readonly approval?: ApprovalState;
};

/** The engine's own rule sources: every rule_source family a decision of the product itself can carry. */
export const BUILT_IN_SOURCES = ['rbac', 'agent_allowlist', 'flag', 'policy', 'hitl', 'default', 'csrf', 'hook', 'mcp_pin'] as const;
export type BuiltInSource = (typeof BUILT_IN_SOURCES)[number];

declare const pluginSource: unique symbol;
/**
 * The name of a registered plugin source (registerSource), as the engine stamps it on the plugin's rules: never a
 * built-in name, so a plugin cannot speak in the name of RBAC, the policy or a gate on the audit trail.
 */
export type PluginSource = string & { readonly [pluginSource]: true };

export function isBuiltInSource(name: string): name is BuiltInSource {
  return (BUILT_IN_SOURCES as readonly string[]).includes(name);
}

/**
 * Which rule decided, typed: the rule source and, where a source has several rules, which one (the required role, the
 * flag, the policy rule id, the gate). Code decides on these fields; the `rule_source` string of the audit row
 * (rbac:admin, agent_allowlist, flag:x, policy:id, hitl:deploy) is made from them at the edge, by ruleSourceOf().
 */
export interface Attribution {
  readonly source: BuiltInSource | PluginSource;
  readonly id?: string;
}

/** The `rule_source` string of an attribution: `source:id`, or `source` alone. */
export function ruleSourceOf(a: Attribution): string {
  return a.id === undefined ? a.source : `${a.source}:${a.id}`;
}

export interface PermissionRule {
  decision: Decision;
  priority: number;
  attribution: Attribution;
  reason: string;
}

/** A rule source: a name, the source its rules are attributed to, and a pure function of the context. */
export interface RuleSource {
  readonly name: string;
  /** what its rules (and its failure) are attributed to: `flag` for the feature_flags source, a plugin's own name */
  readonly attributedTo: BuiltInSource | PluginSource;
  rules(context: PermissionContext): readonly PermissionRule[];
}

/** A rule of a plugin source: the engine attributes it to the plugin (its name, and `id` where it has several rules). */
export interface PluginRule {
  decision: Decision;
  priority: number;
  reason: string;
  id?: string;
}

/** A plugin source (registerSource): a name that is not a built-in one, and a pure function of the context. */
export interface PluginRuleSource {
  readonly name: string;
  rules(context: PermissionContext): readonly PluginRule[];
}

export interface Resolution {
  decision: Decision;
  /** the winning rule; the synthetic default rule when nothing matched */
  rule: PermissionRule;
  /** every rule every source emitted, in source order */
  trace: readonly PermissionRule[];
}

export interface CheckResult extends Resolution {
  /** the winning rule's attribution as the audit row's rule_source string */
  ruleSource: string;
  reason: string;
  /** for ASK (and for a denied ASK): the approval this exact call is bound to */
  approvalId?: string;
  /** set by decide(): the id of this decision in the audit trail, returned to the caller so its logs can join */
  decisionId?: string;
  /** what the `before_tool_call` hooks did (decide() only; a dry check runs no hook) */
  hooks?: readonly HookOutcome[];
  /** the arguments the call was decided on and must run with, when hooks rewrote them */
  arguments?: Readonly<Record<string, unknown>>;
  /** the hooks that changed the arguments, in order */
  argumentsChangedBy?: readonly string[];
  /** the SHA-256 of the canonical arguments the agent sent, when hooks changed them */
  originalArgumentsSha256?: string;
}

/** Priorities of the default sources (DESIGN.md section 2). */
export const PRIORITY = {
  sourceError: Number.MAX_SAFE_INTEGER,
  /** a cross-origin state change of a session (HttpContext.crossOrigin): refused whatever any source says */
  csrf: Number.MAX_SAFE_INTEGER,
  /**
   * an MCP tool whose definition is not the pinned one (the source mcp_pin): refused whatever any rule says, until an
   * operator accepts the definition (no policy rule, at any priority, runs a tool nobody reviewed as it is now)
   */
  mcpPin: Number.MAX_SAFE_INTEGER,
  /** a `before_tool_call` hook that blocked the call (hooks run after the sources, on an ALLOW or an ASK) */
  hook: 1100,
  rbac: 1000,
  allowlistDeny: 900,
  flag: 800,
  policyDefault: 500,
  hitl: 400,
  allowlistAllow: 100,
} as const;
