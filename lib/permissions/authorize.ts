/**
 * The decision itself, pure: `authorize(snapshot, input, facts)` answers ALLOW, DENY or ASK for one call under one
 * configuration, with the winning rule and the trace, and does nothing else. Every fact it needs is passed in: the
 * rule sources, gates and flag values in the snapshot, the principal in the input, and the approval state of this
 * exact call in the facts; nothing is fetched while deciding, nothing is written. The engine (engine.ts) gathers the
 * facts (the approval state from its store), calls this, then does hooks, approvals and recording; the policy tests,
 * `swarm audit explain` and the impact replay ask the same function.
 *
 * How a decision is made (DESIGN.md, "semantics"):
 * - every source gives its rules for the call (a source that throws gives a DENY at the top priority, naming it);
 * - the rule of the highest priority wins; at equal priority DENY beats ASK beats ALLOW, then a stable tie-break
 *   (resolve.ts); no rule at all is the default (a tool call is refused, an HTTP request too);
 * - a session's state change from another origin is refused above everything (csrf);
 * - a gate is a requirement, not a rule in the contest: an ALLOW of a call a gate covers asks for a person's approval
 *   unless this exact call holds an unused approval, and stays refused after a rejection or an expiry.
 */
import { assertArguments } from './arguments';
import { annotationsMatch } from './annotations';
import { conditionHolds } from './condition';
import { gateOfTool, type CompiledGate, type GateSet } from './gates';
import { isStronger, winningRule } from './resolve';
import {
  PRIORITY,
  ruleSourceOf,
  type ApprovalState,
  type CheckInput,
  type CheckResult,
  type FlagValues,
  type PermissionContext,
  type PermissionRule,
  type RuleSource,
  type ToolContext,
} from './types';
import { messageOf } from '@/lib/errors';

/**
 * The configuration a decision is taken under: the rule sources in trace order, the gates, the flag values and the
 * policy revision they make (named by the decision's audit row). Frozen: a reload makes another.
 */
export interface DecisionSnapshot {
  readonly sources: readonly RuleSource[];
  readonly gates: GateSet;
  readonly flags: FlagValues;
  /** the policy revision of this configuration (lib/audit/revisions.ts) */
  readonly revision?: string;
}

/** What is known of this one call before it is decided, besides its input. */
export interface CallFacts {
  /**
   * the approval state of this exact call (agent, tool, arguments, requester), when a gate covers it (gateOfCall);
   * absent: no approval was asked for
   */
  readonly approval?: ApprovalState;
  /** the id the decision gets when it is being taken (absent for a question that records nothing) */
  readonly decisionId?: string;
}

/** A session's state change from another origin (HttpContext.crossOrigin), in the trace like any rule. */
const CROSS_ORIGIN_RULE: PermissionRule = Object.freeze({
  decision: 'DENY',
  priority: PRIORITY.csrf,
  attribution: Object.freeze({ source: 'csrf', id: 'origin' }),
  reason: 'A state-changing request from another origin is refused.',
});

/** The decision for this call under this snapshot, with the winning rule and the trace. Pure. */
export function authorize(snapshot: DecisionSnapshot, input: CheckInput, facts: CallFacts = {}): CheckResult {
  return decideContext(snapshot, contextOf(snapshot, input, facts.approval, gateOfCall(snapshot, input)), facts.decisionId);
}

/**
 * The gate that covers this tool call under the snapshot, if any: the fact that says whether the call's approval
 * state is to be read before authorize. Throws InvalidArguments for arguments that cannot be kept exactly.
 */
export function gateOfCall(snapshot: DecisionSnapshot, input: CheckInput): CompiledGate | undefined {
  if (input.kind !== 'tool') return undefined;
  // Arguments that cannot be kept exactly are refused before anything reads them (InvalidArguments).
  assertArguments(input.arguments);
  return gateFor(snapshot.gates, input, snapshot.flags);
}

/**
 * The context the sources see: the input with the flag values, the gate that covers it (gateOfCall: found once, by the
 * caller, which reads the approval state for it) and that approval state.
 */
export function contextOf(snapshot: DecisionSnapshot, input: CheckInput, approval: ApprovalState | undefined, gate: CompiledGate | undefined): PermissionContext {
  const flags = snapshot.flags;
  if (input.kind === 'tool') {
    return {
      kind: 'tool',
      principal: input.principal,
      agent: input.agent,
      tool: input.tool,
      arguments: input.arguments,
      toolCallId: input.toolCallId,
      requiredRole: input.requiredRole,
      annotations: input.annotations,
      now: input.now,
      flags,
      gate,
      approval,
      // the MCP client that made the call: its approval request names it (lib/approvals/store.ts approvalRequestOf)
      client: input.client,
      // the upstream MCP tool's definition as the gateway saw it (the source mcp_pin compares it with the pin)
      mcp: input.mcp,
    };
  }
  return {
    kind: 'http',
    principal: input.principal,
    method: input.method,
    path: input.path,
    requiredRole: input.requiredRole,
    requiredScope: input.requiredScope,
    requiredPrincipal: input.requiredPrincipal,
    crossOrigin: input.crossOrigin,
    agent: input.agent,
    arguments: input.arguments,
    toolCallId: input.toolCallId,
    now: input.now,
    flags,
  };
}

/** The decision of the snapshot's sources for a context made by contextOf (the engine keeps the context to record it). */
export function decideContext(snapshot: DecisionSnapshot, context: PermissionContext, decisionId?: string): CheckResult {
  const trace = collect(context, snapshot.sources);
  if (context.kind === 'http' && context.crossOrigin) trace.push(CROSS_ORIGIN_RULE);
  // The winner, as winningRule() picks it: the priority decides on its own almost always, so the full comparison
  // (decision order, then the stable tie-break) runs only between rules of the same priority.
  let rule: PermissionRule;
  if (trace.length === 0) rule = winningRule(trace, context.kind);
  else {
    rule = trace[0]!;
    for (let i = 1; i < trace.length; i++) {
      const r = trace[i]!;
      if (r.priority > rule.priority || (r.priority === rule.priority && isStronger(r, rule))) rule = r;
    }
  }
  if (rule.decision === 'ALLOW' && context.gate && context.approval?.status !== 'approved') {
    // The gate is a requirement, not a rule in the contest (invariant hitl_gates): an ALLOW of a gated call without
    // an unused approval asks (or stays refused after a rejection or expiry). The trace keeps the ALLOW that lost.
    rule = gateRule(context.gate, context.approval, trace);
  }
  const decision = rule.decision;
  const approvalId = context.approval?.id && (decision !== 'ALLOW' || context.approval.status === 'approved') ? context.approval.id : undefined;
  return { decision, rule, trace, ruleSource: ruleSourceOf(rule.attribution), reason: rule.reason, approvalId, decisionId };
}

function collect(context: PermissionContext, sources: readonly RuleSource[]): PermissionRule[] {
  const trace: PermissionRule[] = [];
  for (let i = 0; i < sources.length; i++) {
    const source = sources[i]!;
    try {
      const rules = source.rules(context);
      for (let j = 0; j < rules.length; j++) trace.push(rules[j]!);
    } catch (error) {
      // A broken source must never open a door: it denies at the top priority, and says why.
      trace.push({
        decision: 'DENY',
        priority: PRIORITY.sourceError,
        attribution: { source: source.attributedTo, id: 'error' },
        reason: `Rule source "${source.name}" failed: ${messageOf(error)}`,
      });
    }
  }
  return trace;
}

/**
 * The gate that applies to this tool call: the gate that names its tool, if its annotations (if it names any) and its
 * condition (if any) hold; else the first gate that names only annotations whose annotations and condition hold.
 */
function gateFor(gates: GateSet, input: ToolContext, flags: FlagValues): CompiledGate | undefined {
  const named = gateOfTool(gates, input.tool);
  if (named !== undefined && gateHolds(named, input, flags)) return named;
  // Gates by annotations only are tried per call (never memoised by tool name): a call without annotations skips them.
  const byAnnotations = gates.byAnnotations;
  if (byAnnotations.length === 0 || input.annotations === undefined) return undefined;
  for (let i = 0; i < byAnnotations.length; i++) if (gateHolds(byAnnotations[i]!, input, flags)) return byAnnotations[i];
  return undefined;
}

/** Does a gate that may cover this call hold for it: its annotations match, and its condition holds? */
function gateHolds(gate: CompiledGate, input: ToolContext, flags: FlagValues): boolean {
  if (gate.annotationMatcher !== undefined && !annotationsMatch(gate.annotationMatcher, input.annotations)) return false;
  // A condition that cannot be evaluated gates the call: asking a person is the safe side.
  return gate.condition === undefined || conditionHolds(gate.condition, { ...input, flags }, true);
}

/** The gate's own rule for this call (the HITL source put it in the trace); built here if a plugin replaced that source. */
function gateRule(gate: CompiledGate, approval: ApprovalState | undefined, trace: readonly PermissionRule[]): PermissionRule {
  for (let i = 0; i < trace.length; i++) {
    const r = trace[i]!;
    if (r.attribution.source === 'hitl' && r.attribution.id === gate.id && r.decision !== 'ALLOW') return r;
  }
  const refused = approval?.status === 'rejected' || approval?.status === 'expired';
  return {
    decision: refused ? 'DENY' : 'ASK',
    priority: PRIORITY.hitl,
    attribution: { source: 'hitl', id: gate.id },
    reason: refused ? `This exact call was ${approval!.status} at gate "${gate.id}".` : `Gate "${gate.id}" needs a person's approval for this call.`,
  };
}
