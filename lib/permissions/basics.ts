/**
 * The words every module of the permission engine uses, and that use nothing of it: decisions, roles and scopes,
 * principals, approval states, flag values, tool annotations, attributions and what a hook did. lib/permissions/types.ts
 * builds the engine's vocabulary on them (and re-exports them); gates, conditions and annotations read only these.
 */

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

export const HOOK_EVENTS = ['before_tool_call', 'after_tool_call', 'approval_requested', 'approval_decided', 'denied'] as const;
export type HookEventName = (typeof HOOK_EVENTS)[number];

export const HOOK_ACTIONS = ['block', 'rewrite', 'rate_limit', 'webhook', 'shell', 'typescript'] as const;
export type HookAction = (typeof HOOK_ACTIONS)[number];

/** What one hook did to one call (or one event). Every outcome is part of the decision's trace. */
export interface HookOutcome {
  hook: string;
  event: HookEventName;
  action: HookAction;
  /**
   * passed: looked and let it be; rewrote: changed the arguments; blocked: refused the call; skipped: did not run (its
   * flag is off); failed: could not answer (timeout, error, an open circuit), see `reason` (a failed hook blocks
   * unless it says `on_error: allow`, and then its outcome is `failed` with the call let through)
   */
  outcome: 'passed' | 'rewrote' | 'blocked' | 'skipped' | 'failed';
  /** this outcome stops the call: a block, or a failure of a hook without `on_error: allow` */
  blocks?: boolean;
  reason?: string;
  /** the argument paths it set, removed or masked */
  changed?: string[];
  /** how long it took, in milliseconds (webhook and shell hooks) */
  ms?: number;
}
