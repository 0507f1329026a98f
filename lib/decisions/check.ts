/**
 * The decision path of the check API, shared by `POST /api/v1/permissions/check`, its batch form and the AuthZEN
 * evaluation endpoints: one input shape, one answer shape, and batches committed as one transaction.
 */
import type { SwarmApp } from '@/lib/app';
import { ruleSourceOf, type CheckResult, type Principal, type ToolContext } from '@/lib/permissions';

export interface CheckRequest {
  agent: string;
  tool: string;
  arguments: Record<string, unknown>;
  tool_call_id?: string;
  dry_run: boolean;
}

/** The engine's input for a tool call checked by `principal`. */
export function toolInput(principal: Principal, c: Omit<CheckRequest, 'dry_run'>): ToolContext {
  return { kind: 'tool', principal, agent: c.agent, tool: c.tool, arguments: c.arguments, toolCallId: c.tool_call_id };
}

/** One check as the API answers it. */
export function checkAnswer(r: CheckResult, dryRun: boolean) {
  return {
    // joins the caller's log line to the audit row (null for a dry run, which records nothing)
    decision_id: r.decisionId ?? null,
    decision: r.decision,
    rule_source: r.ruleSource,
    reason: r.reason,
    approval_id: r.approvalId ?? null,
    recorded: !dryRun && r.decision === 'DENY',
    trace: r.trace.map((t) => ({ decision: t.decision, priority: t.priority, rule_source: ruleSourceOf(t.attribution), reason: t.reason })),
  };
}

export type CheckAnswer = ReturnType<typeof checkAnswer>;

/** Decide one check (or only ask the question, for a dry run). */
export function decideCheck(app: SwarmApp, principal: Principal, c: CheckRequest, ip: string | undefined): CheckResult {
  const input = toolInput(principal, c);
  return c.dry_run ? app.engine.check(input) : app.engine.decide(input, { ip });
}

/**
 * Decide several checks in order inside one transaction: their denials, approval requests and consumptions are
 * committed together, before any answer leaves; a failure to record any of them refuses the whole batch (nothing of
 * it is acknowledged or kept).
 */
export function decideBatch<T>(app: SwarmApp, items: readonly T[], decide: (item: T, index: number) => CheckResult): CheckResult[] {
  // IMMEDIATE: the write lock first, so that a read that turns into a write cannot fail on another writer's commit.
  try {
    return app.db.$client.transaction(() => items.map((item, i) => decide(item, i))).immediate();
  } catch (error) {
    app.forgetUncommitted();
    throw error;
  }
}
