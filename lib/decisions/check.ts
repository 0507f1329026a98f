/**
 * The decision path of the check API, shared by `POST /api/v1/permissions/check`, its batch form and the AuthZEN
 * evaluation endpoints: one input shape, one answer shape, and batches committed as one transaction.
 */
import type { App } from '@/lib/app';
import { PRIORITY, ruleSourceOf, type CheckInput, type CheckResult, type HookOutcome, type McpToolRef, type Principal, type ToolAnnotations, type ToolContext } from '@/lib/permissions';
import { hookSummary } from '@/lib/hooks/summary';

export interface CheckRequest {
  agent: string;
  tool: string;
  arguments: Record<string, unknown>;
  tool_call_id?: string;
  annotations?: ToolAnnotations;
  client?: string;
  /** the upstream MCP tool and the hash of its definition (an MCP gateway sends it: lib/mcp/pins) */
  mcp?: McpToolRef;
  dry_run: boolean;
}

/** The engine's input for a tool call checked by `principal`. */
export function toolInput(principal: Principal, c: Omit<CheckRequest, 'dry_run'>): ToolContext {
  return {
    kind: 'tool',
    principal,
    agent: c.agent,
    tool: c.tool,
    arguments: c.arguments,
    toolCallId: c.tool_call_id,
    ...(c.annotations ? { annotations: c.annotations } : {}),
    ...(c.client ? { client: c.client } : {}),
    ...(c.mcp ? { mcp: c.mcp } : {}),
  };
}

/** One check as the API answers it. */
export function checkAnswer(r: CheckResult, dryRun: boolean) {
  const changedBy = r.argumentsChangedBy ?? NO_HOOKS;
  return {
    // joins the caller's log line to the audit row (null for a dry run, which records nothing)
    decision_id: r.decisionId ?? null,
    decision: r.decision,
    rule_source: r.ruleSource,
    reason: r.reason,
    approval_id: r.approvalId ?? null,
    recorded: !dryRun && r.decision === 'DENY',
    // The hooks that rewrote the arguments, and the arguments the call was decided on: the ones to run it with.
    arguments_changed_by: changedBy,
    // nothing runs after a DENY: no arguments to run it with
    arguments: changedBy.length > 0 && r.decision !== 'DENY' ? (r.arguments ?? null) : null,
    hooks: r.hooks ? r.hooks.map(hookAnswer) : NO_HOOKS,
    trace: traceAnswer(r),
  };
}

/** The rules of the trace, then what each before_tool_call hook did (a block that decided is among the rules already). */
function traceAnswer(r: CheckResult) {
  const trace: { decision: string; priority: number; rule_source: string; reason: string }[] = r.trace.map((t) => ({
    decision: t.decision,
    priority: t.priority,
    rule_source: ruleSourceOf(t.attribution),
    reason: t.reason,
  }));
  if (!r.hooks) return trace;
  for (const h of r.hooks) {
    if (h.blocks && r.ruleSource === `hook:${h.hook}`) continue;
    trace.push({ decision: h.blocks ? 'DENY' : 'ALLOW', priority: PRIORITY.hook, rule_source: `hook:${h.hook}`, reason: hookSummary(h) });
  }
  return trace;
}

function hookAnswer(h: HookOutcome) {
  return { hook: h.hook, event: h.event, action: h.action, outcome: h.outcome, blocks: h.blocks === true, reason: h.reason ?? null, changed: h.changed ?? [], ms: h.ms ?? null };
}

const NO_HOOKS: readonly never[] = Object.freeze([]);

/** Decide one check (or only ask the question, for a dry run: no hook runs and nothing is recorded). */
export function decideCheck(app: App, principal: Principal, c: CheckRequest, ip: string | undefined): Promise<CheckResult> {
  const input = toolInput(principal, c);
  return c.dry_run ? app.decisions.authorize(input) : app.decisions.decide(input, { ip });
}

/**
 * Decide several checks in order as one group (DecisionService.decideGroup): their denials, approval requests and
 * consumptions are committed together before any answer leaves (SQLite), and the hooks of every call run first, in
 * order, outside the transaction. `stop(result)` ends the batch early (AuthZEN's evaluation semantics).
 */
export function decideBatch(app: App, inputs: readonly (CheckInput | { dryRun: CheckInput })[], ip: string | undefined, stop?: (r: CheckResult) => boolean): Promise<CheckResult[]> {
  return app.decisions.decideGroup(inputs, { ip }, stop);
}
