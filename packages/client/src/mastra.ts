/**
 * Mastra (`@mastra/core` 0.24; 1.x needs Node.js 22): an agent's tools ask the permission server before they run, in
 * one line.
 *
 *   const agent = new Agent({ name: 'deployer', instructions, model, tools: withSwarm({ deploy, drift }, swarm) });
 *
 * - ALLOW: the tool runs with the arguments the server's before_tool_call hooks left (as its `context`); its outcome is
 *   reported with the decision id.
 * - DENY: the tool never runs; the model receives the refusal (`refused`, the rule, the reason, the decision id) as
 *   the tool's result. A call that cannot be decided (the server down) is refused the same way.
 * - ASK, `wait` (default): the call is held until an operator decides on the console, then runs once or is refused.
 * - ASK, `interrupt`: the tool suspends the run (Mastra's tool `suspend`, a `tool-call-suspended` chunk whose payload
 *   is an ApprovalSuspension: our approval id and its link; the run's snapshot needs the Mastra instance's storage).
 *   Resumed with `agent.resumeStream(anything, { runId, toolCallId })`, the call is decided again by the server: it runs
 *   once if an operator approved it, and is refused otherwise. The person chatting never approves in the operator's
 *   place.
 *
 * The tool call id becomes the audit row's tool_call_id; the agent is the client's (or `agent`). A tool keeps its id,
 * description, schemas and its own `requireApproval`.
 */
import { createTool, type ToolAction } from '@mastra/core/tools';
import { refusalOf, SwarmClient, type CheckAnswer, type ToolCall } from './index.js';

export interface WithSwarmOptions {
  /** the agent the calls are made as (default: the client's) */
  agent?: string;
  /** how an ASK is met (default 'wait') */
  onAsk?: 'wait' | 'interrupt';
  /** `wait`: how long a call is held for a person's decision, ms (default 10 minutes) */
  waitMs?: number;
  /** `wait`: told once when a call is held, with the link where a person decides it */
  onHold?: (answer: CheckAnswer, link: string) => void;
}

/** The payload of the suspension a held call raises (`onAsk: 'interrupt'`). */
export interface ApprovalSuspension {
  type: 'swarm_approval';
  approval_id: string;
  url: string;
  tool: string;
  rule_source: string;
  reason: string;
}

/** A Mastra tool (createTool's), as this adapter takes it. */
type MastraTool = ToolAction<any, any, any, any, any> & { id: string };
/** What Mastra passes a tool's execute: the execution context (`context` is the input), and the invocation's options. */
type ExecuteArgs = [context: { context?: unknown; suspend?: (payload: unknown) => Promise<unknown>; resumeData?: unknown } & Record<string, unknown>, options?: { toolCallId?: string; abortSignal?: AbortSignal } & Record<string, unknown>];

/** The tools, each deciding with the permission server before it runs (see the module's comment). */
export function withSwarm<T extends Record<string, MastraTool>>(tools: T, client: SwarmClient, options: WithSwarmOptions = {}): T {
  const out: Record<string, unknown> = {};
  for (const [key, original] of Object.entries(tools)) {
    const run = original.execute as ((...args: ExecuteArgs) => Promise<unknown>) | undefined;
    if (!run) {
      out[key] = original;
      continue;
    }
    out[key] = createTool({
      ...(original as unknown as Parameters<typeof createTool>[0]),
      execute: (async (...[context, invocation]: ExecuteArgs) => {
        const input = (context.context && typeof context.context === 'object' ? context.context : {}) as Record<string, unknown>;
        const toolCallId = invocation?.toolCallId;
        const call: ToolCall = { tool: original.id, arguments: input, ...(toolCallId ? { toolCallId } : {}), ...(options.agent ? { agent: options.agent } : {}) };
        const answer =
          options.onAsk === 'interrupt'
            ? await client.check(call)
            : await client.decide(call, { onAsk: 'wait', waitMs: options.waitMs, signal: invocation?.abortSignal, onHold: options.onHold });
        const suspend = context.suspend;
        if (answer.decision === 'ASK' && options.onAsk === 'interrupt' && answer.approval_id && suspend && context.resumeData === undefined) {
          // The run stops here; resumed, this tool runs again and the check above answers as the operator decided.
          const payload: ApprovalSuspension = { type: 'swarm_approval', approval_id: answer.approval_id, url: client.approvalLink(answer.approval_id), tool: original.id, rule_source: answer.rule_source, reason: answer.reason };
          await suspend(payload);
          return refusalOf(answer, client);
        }
        if (answer.decision !== 'ALLOW') return refusalOf(answer, client);
        const args = (answer.arguments ?? input) as Record<string, unknown>;
        const ran = { ...call, arguments: args };
        try {
          const result = await run({ ...context, context: args }, invocation);
          void client.finished(ran, { decisionId: answer.decision_id, outcome: 'succeeded', result });
          return result;
        } catch (error) {
          void client.finished(ran, { decisionId: answer.decision_id, outcome: 'failed', error: error instanceof Error ? error.message : String(error) });
          throw error;
        }
      }) as never,
    });
  }
  return out as T;
}
