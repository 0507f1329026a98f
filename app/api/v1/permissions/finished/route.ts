import { AppError } from '@/lib/errors';
import { Reply, requireRole, route } from '@/lib/http/route';
import { finishedBodySchema } from '@/lib/http/schemas';

export const dynamic = 'force-dynamic';

/**
 * An allowed tool call ran (or failed): the after_tool_call hooks of config/hooks.yaml hear of it, after this answers
 * (202). An agent token reports only its own agent's calls.
 */
export const POST = route({ role: requireRole('viewer'), body: finishedBodySchema }, ({ app, principal, body }) => {
  if (principal.kind === 'agent' && principal.agent !== body.agent) {
    throw new AppError('FORBIDDEN', `This token acts as agent "${principal.agent}", not "${body.agent}".`);
  }
  const context = { kind: 'tool' as const, principal, agent: body.agent, tool: body.tool, arguments: body.arguments, toolCallId: body.tool_call_id };
  app.engine.finished(
    body.outcome === 'succeeded'
      ? { context, decisionId: body.decision_id, outcome: 'succeeded', result: body.result ?? null }
      : { context, decisionId: body.decision_id, outcome: 'failed', error: body.error ?? 'failed' },
  );
  return new Reply({ accepted: true }, { status: 202 });
});
