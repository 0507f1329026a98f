/**
 * The OpenAI Agents SDK (`@openai/agents-core` 0.14, the last line whose `openai` dependency runs on Node.js 20; 0.15
 * and later bring `openai` 7, which needs Node.js 22): the agent's function tools ask the permission server before they
 * run, in one line.
 *
 *   const agent = new Agent({ name: 'deployer', tools: withSwarm([deploy, drift], swarm) });            // ASK: held
 *   const agent = new Agent({ name: 'deployer', tools: withSwarm(tools, swarm, { onAsk: 'interrupt' }) });
 *
 * - ALLOW: the tool runs with the arguments the server's before_tool_call hooks left; its outcome is reported with the
 *   decision id.
 * - DENY: the tool never runs; the model receives the refusal (JSON: the rule, the reason, the decision id) as the
 *   tool's output. A call that cannot be decided (the server down) is refused the same way.
 * - ASK, `wait` (default): the call is held until an operator decides on the console, then runs once or is refused.
 * - ASK, `interrupt`: needsApproval answers true, so the run ends with `result.interruptions`; approvalFor(tools,
 *   callId) gives the server's request and its link. The run resumed with `result.state.approve(item)` asks the server
 *   again, which answers as the operator decided: the person chatting never approves in the operator's place (their
 *   `reject` still refuses).
 *
 * The SDK's call id becomes the audit row's tool_call_id; the agent is the client's (or `agent`). Tools that are not
 * function tools (hosted tools, computer use) are left as they are.
 */
import type { FunctionTool, Tool } from '@openai/agents-core';
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

const ASKED = Symbol.for('@swarm-permissions/client:openai-agents');
type Asked = Map<string, { approvalId: string; url: string }>;

/** The tools, their function tools deciding with the permission server (see the module's comment). */
export function withSwarm<T extends Tool<any>[]>(tools: T, client: SwarmClient, options: WithSwarmOptions = {}): T {
  const asked: Asked = new Map();
  /** answers decided in needsApproval, used by invoke for the same call (ALLOW and DENY only) */
  const decided = new Map<string, CheckAnswer>();
  const wrapped = tools.map((t) => (t.type === 'function' ? guard(t as FunctionTool<any, any, any>) : t));
  return Object.assign(wrapped, { [ASKED]: asked }) as unknown as T;

  function guard(original: FunctionTool<any, any, any>): FunctionTool<any, any, any> {
    const call = (input: unknown, callId: string | undefined): ToolCall => ({
      tool: original.name,
      arguments: (input && typeof input === 'object' ? input : {}) as Record<string, unknown>,
      ...(callId ? { toolCallId: callId } : {}),
      ...(options.agent ? { agent: options.agent } : {}),
    });
    const tool: FunctionTool<any, any, any> = {
      ...original,
      invoke: async (runContext, inputText, details) => {
        const callId = details?.toolCall?.callId;
        let input: unknown;
        try {
          input = inputText ? JSON.parse(inputText) : {};
        } catch {
          // Arguments that are not JSON cannot be decided: the call is not run.
          return JSON.stringify({ refused: true, decision: 'DENY', rule_source: 'client:refused', reason: `The arguments of ${original.name} are not JSON; it was not run.`, decision_id: null });
        }
        const kept = callId ? decided.get(callId) : undefined;
        if (callId) decided.delete(callId);
        const answer =
          kept ??
          (options.onAsk === 'interrupt'
            ? await client.check(call(input, callId))
            : await client.decide(call(input, callId), { onAsk: 'wait', waitMs: options.waitMs, signal: details?.signal, onHold: options.onHold }));
        if (answer.decision !== 'ALLOW') return JSON.stringify(refusalOf(answer, client));
        if (callId) asked.delete(callId);
        const args = answer.arguments ?? input;
        const ran = call(args, callId);
        try {
          const result = await original.invoke(runContext, JSON.stringify(args), details);
          void client.finished(ran, { decisionId: answer.decision_id, outcome: 'succeeded', result });
          return result;
        } catch (error) {
          void client.finished(ran, { decisionId: answer.decision_id, outcome: 'failed', error: error instanceof Error ? error.message : String(error) });
          throw error;
        }
      },
    };
    if (options.onAsk === 'interrupt') {
      tool.needsApproval = async (runContext, input, callId) => {
        const answer = await client.check(call(input, callId));
        if (answer.decision === 'ASK' && answer.approval_id) {
          if (callId) asked.set(callId, { approvalId: answer.approval_id, url: client.approvalLink(answer.approval_id) });
          return true;
        }
        if (callId) decided.set(callId, answer);
        // The application's own approval, where the tool asked for one, still stands after the server's ALLOW.
        return answer.decision === 'ALLOW' ? original.needsApproval(runContext, input, callId) : false;
      };
    }
    return tool;
  }
}

/** The server's approval request behind an interruption of the run, by the SDK's call id (interrupt mode). */
export function approvalFor(tools: Tool<any>[], callId: string): { approvalId: string; url: string } | undefined {
  return (tools as unknown as { [ASKED]?: Asked })[ASKED]?.get(callId);
}

/**
 * The tools without the function tools the agent can never use (its allowlist, its role, a flag that is off, an
 * unconditional DENY): the model is not shown them. When the server cannot tell, every tool is kept (each call is
 * still decided). Other tools are kept as they are.
 */
export async function withoutHiddenTools<T extends Tool<any>>(tools: readonly T[], client: SwarmClient, agent?: string): Promise<T[]> {
  const named = tools.filter((t) => t.type === 'function').map((t) => (t as FunctionTool<any, any, any>).name);
  let usable: Map<string, string>;
  try {
    usable = await client.tools(named, agent);
  } catch {
    return [...tools];
  }
  return tools.filter((t) => t.type !== 'function' || usable.get((t as FunctionTool<any, any, any>).name) !== 'hidden');
}
