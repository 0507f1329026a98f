/**
 * The decision routes that agents and gateways call in a loop: decide one tool call, a batch of them, and report an
 * allowed call's outcome. With a bearer token the decision listener answers them itself (lib/server/front.ts, marked
 * in the route table); otherwise Next.js does, with the same cores.
 */
import { checkAnswer, decideBatch, decideCheck, toolInput } from '@/lib/decisions/check';
import { AppError } from '@/lib/errors';
import { Reply, requireRole, route } from '../route';
import { toolVisibility } from '@/lib/mcp/visibility';
import { batchCheckBodyFast, batchCheckBodySchema, checkBodyFast, checkBodySchema, finishedBodySchema, toolVisibilityBodySchema } from '../schemas';

/**
 * Decide one tool call for an agent. A DENY is recorded before this answers; an ASK returns the approval id; once an
 * operator approved this exact call, the next check answers ALLOW, exactly once. `dry_run` only asks the question.
 * Every answer carries the decision_id of its audit row; a decision that cannot be recorded is refused (503). The
 * before_tool_call hooks (config/hooks.yaml) may block the call or rewrite its arguments: `arguments_changed_by` names
 * them and `arguments` is what the call must run with; `hooks` says what each did. A dry run runs no hook.
 */
export const checkToolCall = route({ role: requireRole('viewer'), scope: 'decide', body: checkBodySchema, fastBody: checkBodyFast }, async ({ app, principal, body, ip }) =>
  checkAnswer(await decideCheck(app, principal, body, ip), body.dry_run),
);

/**
 * Decide up to 1,000 tool calls in one request, answered in order, each with its decision id. The batch is one
 * transaction: its denials (and approval requests) are committed together before the answer, and a batch that cannot
 * be recorded is refused as a whole (503), nothing of it acknowledged. The calls' before_tool_call hooks run first, in
 * order, outside the transaction.
 */
export const checkToolCalls = route(
  { role: requireRole('viewer'), scope: 'decide', body: batchCheckBodySchema, fastBody: batchCheckBodyFast, maxBodyBytes: 4 * 1024 * 1024 },
  async ({ app, principal, body, ip }) => {
    const inputs = body.checks.map((c) => (c.dry_run ? { dryRun: toolInput(principal, c) } : toolInput(principal, c)));
    const results = await decideBatch(app, inputs, ip);
    return { results: results.map((r, i) => checkAnswer(r, body.checks[i]!.dry_run)) };
  },
);

/**
 * An allowed tool call ran (or failed): the after_tool_call hooks of config/hooks.yaml hear of it, after this answers
 * (202). An agent token reports only its own agent's calls.
 */
export const reportToolCallFinished = route({ role: requireRole('viewer'), scope: 'decide', body: finishedBodySchema }, ({ app, principal, body }) => {
  if (principal.kind === 'agent' && principal.agent !== body.agent) {
    throw new AppError('FORBIDDEN', `This token acts as agent "${principal.agent}", not "${body.agent}".`);
  }
  const context = { kind: 'tool' as const, principal, agent: body.agent, tool: body.tool, arguments: body.arguments, toolCallId: body.tool_call_id };
  app.decisions.finished(
    body.outcome === 'succeeded'
      ? { context, decisionId: body.decision_id, outcome: 'succeeded', result: body.result ?? null }
      : { context, decisionId: body.decision_id, outcome: 'failed', error: body.error ?? 'failed' },
  );
  return new Reply({ accepted: true }, { status: 202 });
});

/**
 * Which of these tools the agent may ever use, for an MCP gateway's tools/list: `hidden` (no arguments could allow it:
 * its allowlist, its role, a flag that is off, an unconditional DENY), `gated` (a person's approval is needed) or
 * `open`. Nothing is recorded and no hook runs; the revision names the configuration the answer was computed under.
 */
export const listUsableTools = route({ role: requireRole('viewer'), scope: 'decide', body: toolVisibilityBodySchema, maxBodyBytes: 1024 * 1024 }, async ({ app, principal, body }) => {
  const { revision, tools } = await toolVisibility(app, principal, body.agent, body.tools);
  return { revision, tools };
});
