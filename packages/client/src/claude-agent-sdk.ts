/**
 * The Claude Agent SDK (`@anthropic-ai/claude-agent-sdk` 0.3): the permission server decides each tool call, through
 * the SDK's own mechanisms, in one line.
 *
 *   const swarm = claudeAgentPermissions(client);               // ASK: held until a person decides
 *   query({ prompt, options: { canUseTool: swarm.canUseTool, hooks: swarm.hooks } });
 *
 * - `canUseTool(name, input, { signal, toolUseID })`: ALLOW answers `allow` with the arguments the server's
 *   before_tool_call hooks left (`updatedInput`); DENY answers `deny` with the rule, the reason and the decision id as
 *   the message the model reads. ASK in `wait` mode holds the call until an operator decides (then decides it again:
 *   approved runs once, rejected or expired is denied); in `interrupt` mode it denies with `interrupt: true`, so the
 *   run stops with the approval's id and link, and a resumed session's retry of the call runs once an operator
 *   approved it. The person at the prompt never approves in the operator's place.
 * - `hooks.PreToolUse` decides the same way for calls the SDK would not ask canUseTool about (a session whose
 *   permission mode lets tools run), answering allow (with updatedInput), deny or ask; `hooks.PostToolUse` and
 *   `hooks.PostToolUseFailure` report the outcome of an allowed call with its decision id.
 *
 * The SDK's tool_use id becomes the audit row's tool_call_id. A call that cannot be decided (the server down) is denied.
 */
import type { CanUseTool, HookCallbackMatcher, HookEvent, HookJSONOutput, PermissionResult } from '@anthropic-ai/claude-agent-sdk';
import { SwarmClient, type CheckAnswer } from './index.js';

export interface ClaudeAgentPermissionsOptions {
  /** the agent the calls are made as (default: the client's) */
  agent?: string;
  /** how an ASK is met (default 'wait') */
  onAsk?: 'wait' | 'interrupt';
  /** `wait`: how long a call is held for a person's decision, ms (default 10 minutes) */
  waitMs?: number;
  /** `wait`: told once when a call is held, with the link where a person decides it */
  onHold?: (answer: CheckAnswer, link: string) => void;
}

/** What the model reads when a call is refused: the reason, then the rule and the decision (or the approval to wait for). */
export function refusalMessage(answer: CheckAnswer, client: SwarmClient): string {
  if (answer.decision === 'ASK' && answer.approval_id) {
    return `Waiting for a person's approval: ${answer.reason} (${answer.rule_source}, approval ${answer.approval_id}: ${client.approvalLink(answer.approval_id)}). It was not run; it can be tried again once a person approved it.`;
  }
  return `${answer.reason} (${answer.rule_source}${answer.decision_id ? `, decision ${answer.decision_id}` : ''})`;
}

export interface ClaudeAgentPermissions {
  canUseTool: CanUseTool;
  hooks: Partial<Record<HookEvent, HookCallbackMatcher[]>>;
}

/** The SDK's canUseTool and hooks, deciding with the permission server (see the module's comment). */
export function claudeAgentPermissions(client: SwarmClient, options: ClaudeAgentPermissionsOptions = {}): ClaudeAgentPermissions {
  const mode = options.onAsk ?? 'wait';
  /** the decisions of allowed calls, by tool_use id, for their outcome reports */
  const allowed = new Map<string, { decisionId: string | null; arguments: Record<string, unknown> }>();
  const call = (tool: string, input: unknown, toolUseID: string | undefined) => ({
    tool,
    arguments: (input && typeof input === 'object' ? input : {}) as Record<string, unknown>,
    ...(toolUseID ? { toolCallId: toolUseID } : {}),
    ...(options.agent ? { agent: options.agent } : {}),
  });
  /**
   * The decision of one tool call, made once: when both the PreToolUse hook and canUseTool see the same tool_use id
   * (a hook's `ask` hands the call on to canUseTool), the second uses the first's answer, so a DENY is recorded once
   * and an approval is used once.
   */
  const decisions = new Map<string, { at: number; answer: Promise<CheckAnswer> }>();
  const decide = (tool: string, input: unknown, toolUseID: string | undefined, signal: AbortSignal | undefined): Promise<CheckAnswer> => {
    const now = Date.now();
    const seen = toolUseID ? decisions.get(toolUseID) : undefined;
    if (seen && toolUseID) {
      decisions.delete(toolUseID);
      return seen.answer;
    }
    const answer = client.decide(call(tool, input, toolUseID), { onAsk: mode === 'wait' ? 'wait' : 'return', waitMs: options.waitMs, signal, onHold: options.onHold }).then((a) => {
      if (a.decision === 'ALLOW' && toolUseID) allowed.set(toolUseID, { decisionId: a.decision_id, arguments: a.arguments ?? call(tool, input, toolUseID).arguments });
      return a;
    });
    if (toolUseID) {
      // Kept a minute for the other mechanism; the oldest go first past a thousand (a call neither hands on).
      for (const [id, d] of decisions) if (decisions.size >= 1_000 || now - d.at > 60_000) decisions.delete(id);
      decisions.set(toolUseID, { at: now, answer });
    }
    return answer;
  };

  const canUseTool: CanUseTool = async (toolName, input, { signal, toolUseID }): Promise<PermissionResult> => {
    const answer = await decide(toolName, input, toolUseID, signal);
    if (answer.decision === 'ALLOW') return { behavior: 'allow', updatedInput: answer.arguments ?? input, toolUseID };
    return { behavior: 'deny', message: refusalMessage(answer, client), interrupt: answer.decision === 'ASK' && mode === 'interrupt', toolUseID };
  };

  const report = (outcome: 'succeeded' | 'failed') => async (input: unknown, toolUseID: string | undefined): Promise<HookJSONOutput> => {
    const hook = input as { tool_name?: string; tool_response?: unknown; error?: string };
    const seen = toolUseID ? allowed.get(toolUseID) : undefined;
    if (seen && toolUseID && hook.tool_name) {
      allowed.delete(toolUseID);
      const c = { ...call(hook.tool_name, seen.arguments, toolUseID) };
      await client.finished(c, outcome === 'succeeded' ? { decisionId: seen.decisionId, outcome, result: hook.tool_response ?? null } : { decisionId: seen.decisionId, outcome, error: hook.error ?? 'failed' });
    }
    return {};
  };

  const hooks: ClaudeAgentPermissions['hooks'] = {
    PreToolUse: [
      {
        // A held call waits for a person: the hook's own time limit is the wait's, and a minute more.
        timeout: Math.ceil((options.waitMs ?? 600_000) / 1000) + 60,
        hooks: [
          async (input, toolUseID, { signal }): Promise<HookJSONOutput> => {
            const pre = input as { hook_event_name: string; tool_name: string; tool_input: unknown; tool_use_id?: string };
            if (pre.hook_event_name !== 'PreToolUse') return {};
            const id = toolUseID ?? pre.tool_use_id;
            const answer = await decide(pre.tool_name, pre.tool_input, id, signal);
            const decision = answer.decision === 'ALLOW' ? 'allow' : 'deny';
            return {
              ...(answer.decision === 'ASK' && mode === 'interrupt' ? { continue: false, stopReason: refusalMessage(answer, client) } : {}),
              hookSpecificOutput: {
                hookEventName: 'PreToolUse',
                permissionDecision: decision,
                permissionDecisionReason: answer.decision === 'ALLOW' ? `${answer.reason} (${answer.rule_source})` : refusalMessage(answer, client),
                ...(answer.decision === 'ALLOW' && answer.arguments ? { updatedInput: answer.arguments } : {}),
              },
            };
          },
        ],
      },
    ],
    PostToolUse: [{ hooks: [(input, toolUseID) => report('succeeded')(input, toolUseID)] }],
    PostToolUseFailure: [{ hooks: [(input, toolUseID) => report('failed')(input, toolUseID)] }],
  };

  return { canUseTool, hooks };
}

/**
 * Of these tool names, the ones the agent can never use, for the SDK's `disallowedTools` option: the model is not
 * shown them. Empty when the server cannot tell (each call is still decided).
 */
export async function disallowedTools(client: SwarmClient, names: readonly string[], agent?: string): Promise<string[]> {
  try {
    const usable = await client.tools(names, agent);
    return names.filter((n) => usable.get(n) === 'hidden');
  } catch {
    return [];
  }
}
