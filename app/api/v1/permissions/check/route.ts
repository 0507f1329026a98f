import { requireRole, route } from '@/lib/http/route';
import { ruleSourceOf } from '@/lib/permissions';
import { checkBodySchema } from '@/lib/http/schemas';

export const dynamic = 'force-dynamic';

/**
 * Decide one tool call for an agent. A DENY is recorded before this answers; an ASK returns the approval id; once an
 * operator approved this exact call, the next check answers ALLOW, exactly once. `dry_run` only asks the question.
 * Every answer carries the decision_id of its audit row; a decision that cannot be recorded is refused (503).
 */
export const POST = route({ role: requireRole('viewer'), body: checkBodySchema }, ({ app, principal, body, ip }) => {
  const input = {
    kind: 'tool' as const,
    principal,
    agent: body.agent,
    tool: body.tool,
    arguments: body.arguments,
    toolCallId: body.tool_call_id,
  };
  const r = body.dry_run ? app.engine.check(input) : app.engine.decide(input, { ip });
  return {
    // joins the caller's log line to the audit row (null for a dry run, which records nothing)
    decision_id: r.decisionId ?? null,
    decision: r.decision,
    rule_source: r.ruleSource,
    reason: r.reason,
    approval_id: r.approvalId ?? null,
    recorded: !body.dry_run && r.decision === 'DENY',
    trace: r.trace.map((t) => ({ decision: t.decision, priority: t.priority, rule_source: ruleSourceOf(t.attribution), reason: t.reason })),
  };
});
