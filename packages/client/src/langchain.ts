/**
 * LangChain v1 (`createAgent`, `langchain` 1.5) on LangGraph.js (`@langchain/langgraph` 1.7): an agent middleware that
 * asks the permission server around every tool call, in one line.
 *
 *   const agent = createAgent({ model, tools, middleware: [swarmMiddleware(swarm)], checkpointer });
 *
 * - ALLOW: the tool runs with the arguments the server's before_tool_call hooks left; its outcome is reported with the
 *   decision id.
 * - DENY: the tool never runs; the model receives a ToolMessage (status "error") whose content is the refusal: the
 *   rule, the reason and the decision id. A call that cannot be decided (the server down) is refused the same way.
 * - ASK, `wait` (default): the call is held until an operator decides on the console, then runs once or is refused.
 * - ASK, `interrupt`: the run stops with LangGraph's interrupt(), its value an ApprovalInterrupt (our approval id and
 *   its link; a checkpointer is needed, as for any interrupt). Resumed with `new Command({ resume: … })` (whatever the
 *   value: the person at the chat never approves in the operator's place), the call is decided again by the server:
 *   it runs once if an operator approved it, and is refused otherwise.
 * - Before each model call, the tools the agent can never use are left out of what the model sees (`hideUnusable`,
 *   on by default; when the server cannot tell, every tool is kept, and each call is still decided).
 *
 * The tool call's id becomes the audit row's tool_call_id; the agent is the client's (or `agent`).
 */
import { createMiddleware, ToolMessage } from 'langchain';
import { interrupt } from '@langchain/langgraph';
import { refusalOf, SwarmClient, type CheckAnswer, type ToolCall } from './index.js';

export interface SwarmMiddlewareOptions {
  /** the agent the calls are made as (default: the client's) */
  agent?: string;
  /** how an ASK is met (default 'wait') */
  onAsk?: 'wait' | 'interrupt';
  /** `wait`: how long a call is held for a person's decision, ms (default 10 minutes) */
  waitMs?: number;
  /** `wait`: told once when a call is held, with the link where a person decides it */
  onHold?: (answer: CheckAnswer, link: string) => void;
  /** leave out of each model call the tools the agent can never use (default true) */
  hideUnusable?: boolean;
}

/** The value of the interrupt a held call raises (`onAsk: 'interrupt'`): what to show, and where a person decides. */
export interface ApprovalInterrupt {
  type: 'swarm_approval';
  approval_id: string;
  url: string;
  tool: string;
  arguments: Record<string, unknown>;
  rule_source: string;
  reason: string;
}

/** How long the answer of which tools the agent may use is kept between model calls. */
const USABLE_TTL_MS = 10_000;

/** The middleware (see the module's comment). */
export function swarmMiddleware(client: SwarmClient, options: SwarmMiddlewareOptions = {}) {
  const mode = options.onAsk ?? 'wait';
  let usable: { at: number; names: string; hidden: Set<string> } | undefined;
  const hiddenOf = async (names: string[]): Promise<Set<string>> => {
    const key = names.join('\u0000');
    if (usable && usable.names === key && Date.now() - usable.at < USABLE_TTL_MS) return usable.hidden;
    try {
      const answer = await client.tools(names, options.agent ?? client.agent);
      usable = { at: Date.now(), names: key, hidden: new Set(names.filter((n) => answer.get(n) === 'hidden')) };
      return usable.hidden;
    } catch {
      return new Set();
    }
  };

  return createMiddleware({
    name: 'SwarmPermissions',
    wrapModelCall: async (request, handler) => {
      if (options.hideUnusable === false || !request.tools?.length) return handler(request);
      const named = request.tools.map((t) => (t as { name?: string }).name).filter((n): n is string => typeof n === 'string');
      const hidden = await hiddenOf(named);
      return handler(hidden.size === 0 ? request : { ...request, tools: request.tools.filter((t) => !hidden.has((t as { name?: string }).name ?? '')) });
    },
    wrapToolCall: async (request, handler) => {
      const { toolCall } = request;
      const id = toolCall.id ?? undefined;
      const call: ToolCall = { tool: toolCall.name, arguments: (toolCall.args ?? {}) as Record<string, unknown>, ...(id ? { toolCallId: id } : {}), ...(options.agent ? { agent: options.agent } : {}) };
      const answer =
        mode === 'interrupt'
          ? await client.check(call)
          : await client.decide(call, { onAsk: 'wait', waitMs: options.waitMs, signal: request.runtime?.signal, onHold: options.onHold });
      if (answer.decision === 'ASK' && mode === 'interrupt' && answer.approval_id) {
        // The run stops here. Resumed, this node runs again from the top: the check above then answers as the operator
        // decided, and a call still undecided reaches this point once more and is refused below.
        interrupt<ApprovalInterrupt>({
          type: 'swarm_approval',
          approval_id: answer.approval_id,
          url: client.approvalLink(answer.approval_id),
          tool: call.tool,
          arguments: call.arguments ?? {},
          rule_source: answer.rule_source,
          reason: answer.reason,
        });
      }
      if (answer.decision !== 'ALLOW') return new ToolMessage({ content: JSON.stringify(refusalOf(answer, client)), tool_call_id: id ?? '', name: toolCall.name, status: 'error' });
      const args = answer.arguments ?? toolCall.args;
      const ran = { ...call, arguments: args as Record<string, unknown> };
      try {
        const result = await handler({ ...request, toolCall: { ...toolCall, args } });
        void client.finished(ran, { decisionId: answer.decision_id, outcome: 'succeeded', result: ToolMessage.isInstance(result) ? result.content : null });
        return result;
      } catch (error) {
        void client.finished(ran, { decisionId: answer.decision_id, outcome: 'failed', error: error instanceof Error ? error.message : String(error) });
        throw error;
      }
    },
  });
}
