/**
 * The Vercel AI SDK (`ai` 6): every tool of a ToolSet asks the permission server before it runs, in one line.
 *
 *   const tools = withSwarm({ deploy_serving, monitor_drift }, swarm);            // ASK: held until a person decides
 *   const tools = withSwarm({ deploy_serving }, swarm, { onAsk: 'interrupt' });    // ASK: the SDK's tool approval
 *
 * - ALLOW: the tool runs with the arguments the server's before_tool_call hooks left, and its outcome is reported with
 *   the decision id (POST /api/v1/permissions/finished).
 * - DENY: the tool never runs; the model receives a Refusal as the tool's result (the rule, the reason, the decision
 *   id), so it can explain or choose otherwise. A call that cannot be decided (the server down) is refused the same way.
 * - ASK, `wait`: the call is held until an operator decides on the console, then decided again (approved: it runs,
 *   once; rejected or expired: refused); still undecided after `waitMs`: refused, naming the request.
 * - ASK, `interrupt`: needsApproval answers true, so the run stops with the SDK's `tool-approval-request`; approvalFor()
 *   gives the server's request and its link. Resumed with a `tool-approval-response`, the call is decided again by the
 *   server: it runs only if an operator approved it. The person chatting never approves in the operator's place: an
 *   approval response of theirs only resumes the run.
 *
 * The SDK's tool call id becomes the audit row's tool_call_id; the agent is the client's (or `agent`). A tool without
 * `execute` (one the application runs itself) is left as it is: nothing here runs it.
 */
import type { Tool, ToolExecutionOptions, ToolSet } from 'ai';
import { refusalOf, SwarmClient, type CheckAnswer } from './index.js';

export { refusalOf, withoutHiddenTools, type Refusal } from './index.js';

export interface WithSwarmOptions {
  /** the agent the calls are made as (default: the client's) */
  agent?: string;
  /** how an ASK is met (default 'wait') */
  onAsk?: 'wait' | 'interrupt';
  /** `wait`: how long a call is held for a person's decision, ms (default 10 minutes) */
  waitMs?: number;
  /** `wait`: told once when a call is held, with the link where a person decides it (post it to the chat) */
  onHold?: (answer: CheckAnswer, link: string) => void;
}

/** Whether the messages hold the SDK's approval request for this tool call (a resumed run). */
function resumed(messages: readonly unknown[], toolCallId: string): boolean {
  return messages.some((m) => {
    const content = (m as { role?: string; content?: unknown }).content;
    return Array.isArray(content) && content.some((p: { type?: string; toolCallId?: string }) => p?.type === 'tool-approval-request' && p.toolCallId === toolCallId);
  });
}

/** A value that is iterated asynchronously (a tool that streams its result). */
const isAsyncIterable = (v: unknown): v is AsyncIterable<unknown> => v !== null && typeof v === 'object' && Symbol.asyncIterator in v;

/** The server's approval requests of an interrupted run, by the SDK's tool call id. */
export type ApprovalRequests = Map<string, { approvalId: string; url: string; answer: CheckAnswer }>;

export type SwarmToolSet<T extends ToolSet> = T & { readonly [SWARM]: ApprovalRequests };
const SWARM = Symbol.for('@swarm-permissions/client:ai-sdk');

/**
 * The tools of `tools`, each deciding with the permission server before it runs (see the module's comment). The
 * answer a check gave in needsApproval is used by execute for the same tool call, so a call is decided once.
 */
export function withSwarm<T extends ToolSet>(tools: T, client: SwarmClient, options: WithSwarmOptions = {}): SwarmToolSet<T> {
  const asked: ApprovalRequests = new Map();
  /** answers decided in needsApproval, used by execute for the same tool call (ALLOW and DENY only) */
  const decided = new Map<string, CheckAnswer>();
  const out: Record<string, Tool> = {};
  for (const [name, original] of Object.entries(tools) as [string, Tool][]) {
    const run = original.execute;
    if (!run) {
      out[name] = original;
      continue;
    }
    const call = (input: unknown, toolCallId: string) => ({ tool: name, arguments: (input ?? {}) as Record<string, unknown>, toolCallId, ...(options.agent ? { agent: options.agent } : {}) });
    const wrapped: Tool = {
      ...original,
      execute: async (input: unknown, execution: ToolExecutionOptions) => {
        const kept = decided.get(execution.toolCallId);
        decided.delete(execution.toolCallId);
        const answer =
          kept ??
          (options.onAsk === 'interrupt'
            ? await client.check(call(input, execution.toolCallId))
            : await client.decide(call(input, execution.toolCallId), { onAsk: 'wait', waitMs: options.waitMs, signal: execution.abortSignal, onHold: options.onHold }));
        if (answer.decision !== 'ALLOW') return refusalOf(answer, client);
        asked.delete(execution.toolCallId);
        const args = answer.arguments ?? input;
        const report = (outcome: { outcome: 'succeeded'; result?: unknown } | { outcome: 'failed'; error: string }) =>
          void client.finished(call(args, execution.toolCallId), { decisionId: answer.decision_id, ...outcome });
        try {
          const result: unknown = await run(args as never, execution);
          if (isAsyncIterable(result)) return reportWhenDone(result, report);
          report({ outcome: 'succeeded', result });
          return result;
        } catch (error) {
          report({ outcome: 'failed', error: error instanceof Error ? error.message : String(error) });
          throw error;
        }
      },
    };
    if (options.onAsk === 'interrupt') {
      const own = original.needsApproval;
      type NeedsApproval = Extract<Tool['needsApproval'], (...args: never[]) => unknown>;
      const needsApproval: NeedsApproval = async (input, context) => {
        // A run resumed with the SDK's approval response asks again (to revalidate it): the call stays one needing
        // approval, and execute then asks the server, which answers as the operator decided. Told from the messages,
        // so a run resumed by another process (a new request of a web application) is met the same way.
        if (asked.has(context.toolCallId) || resumed(context.messages, context.toolCallId)) return true;
        const answer = await client.check(call(input, context.toolCallId));
        if (answer.decision === 'ASK' && answer.approval_id) {
          asked.set(context.toolCallId, { approvalId: answer.approval_id, url: client.approvalLink(answer.approval_id), answer });
          return true;
        }
        decided.set(context.toolCallId, answer);
        // The application's own approval, where the tool asked for one, still stands after the server's ALLOW.
        if (answer.decision === 'ALLOW' && own) return typeof own === 'function' ? own(input, context) : own;
        return false;
      };
      wrapped.needsApproval = needsApproval;
    }
    out[name] = wrapped;
  }
  return Object.assign(out, { [SWARM]: asked }) as unknown as SwarmToolSet<T>;
}

/** The server's approval request behind the SDK's tool-approval-request for this tool call (interrupt mode). */
export function approvalFor(tools: SwarmToolSet<ToolSet>, toolCallId: string): { approvalId: string; url: string } | undefined {
  const found = tools[SWARM].get(toolCallId);
  return found && { approvalId: found.approvalId, url: found.url };
}

/** A streamed result passed on as it comes, its outcome reported once it ends. */
async function* reportWhenDone(result: AsyncIterable<unknown>, report: (o: { outcome: 'succeeded'; result?: unknown } | { outcome: 'failed'; error: string }) => void): AsyncGenerator<unknown> {
  let last: unknown;
  try {
    for await (const part of result) {
      last = part;
      yield part;
    }
    report({ outcome: 'succeeded', result: last });
  } catch (error) {
    report({ outcome: 'failed', error: error instanceof Error ? error.message : String(error) });
    throw error;
  }
}
