/**
 * The vocabulary of the permission engine. Pure data: no I/O, no Next.js, no database.
 */
import type { CompiledGate } from './gates';
import type { ApprovalState, Attribution, BuiltInSource, Decision, FlagValues, HookOutcome, PluginSource, Principal, Role, TokenScope, ToolAnnotations } from './basics';

export * from './basics';

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
