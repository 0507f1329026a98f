/**
 * Which tools an agent is shown (MCP tools/list): a tool it can never use is not listed; a tool that would wait for a
 * person is listed and says so. The question is asked of the engine without arguments and without recording anything
 * (DecisionService.authorize); a DENY hides the tool only when no arguments could change it:
 *
 * - RBAC, the agent's allowlist, a flag that is off, a cross-origin refusal, an MCP tool whose definition is not the
 *   pinned one (`mcp_pin`, above every rule), and a policy rule without a `when` condition or `arguments` to match
 *   are the same for every call: such a DENY hides the tool unless a policy rule about this tool and agent that could
 *   allow or ask for it with other arguments would beat it.
 * - No rule at all (tool calls fail closed): hidden unless some policy rule about this tool and agent could allow or
 *   ask for it with other arguments.
 *
 * Anything else (a conditional DENY, a hook, a rejected approval of these exact arguments) keeps the tool listed: the
 * engine decides each call anyway, and listing too much is safe where listing too little would hide a usable tool.
 */
import type { App } from '@/lib/app';
import { candidateRules, type CompiledPolicy } from '@/lib/permissions/policy';
import { gatesOfCall } from '@/lib/permissions/gates';
import type { CheckResult, McpToolRef, PermissionRule, Principal, ToolAnnotations } from '@/lib/permissions';

export type Visibility = 'hidden' | 'open' | 'gated';

export interface ToolToShow {
  tool: string;
  annotations?: ToolAnnotations;
  /** the upstream tool and the hash of its definition: one whose definition is not the pinned one is hidden */
  mcp?: McpToolRef;
}

const NEVER_BY_ARGUMENTS = new Set(['rbac', 'agent_allowlist', 'flag', 'csrf', 'mcp_pin']);

/** The visibility of each tool for this agent, in order, and the policy revision it was computed under. */
export async function toolVisibility(app: App, principal: Principal, agent: string, tools: readonly ToolToShow[]): Promise<{ revision: string; tools: Visibility[] }> {
  const revision = app.currentRevision();
  const out: Visibility[] = [];
  for (const t of tools) {
    const r = await app.decisions.authorize({ kind: 'tool', principal, agent, tool: t.tool, arguments: {}, ...(t.annotations ? { annotations: t.annotations } : {}), ...(t.mcp ? { mcp: t.mcp } : {}) });
    out.push(visibilityOf(app, r, t, agent));
  }
  return { revision, tools: out };
}

function visibilityOf(app: App, r: CheckResult, { tool, annotations }: ToolToShow, agent: string): Visibility {
  if (r.decision === 'ASK') return 'gated';
  // A gate with a condition covers this tool: some of its calls will wait for a person (the ALLOW had other arguments).
  if (r.decision === 'ALLOW') return gatesOfCall(app.gates, tool, annotations).some((g) => g.condition !== undefined) ? 'gated' : 'open';
  const policy = app.policy;
  // The strongest DENY that no arguments can change, and whether any policy rule about this tool and agent could beat
  // it with other arguments (a conditional ALLOW or ASK above it; ALLOW wins a tie).
  let fixed: PermissionRule | undefined;
  for (const rule of r.trace) if (rule.decision === 'DENY' && unconditional(policy, rule) && (!fixed || rule.priority > fixed.priority)) fixed = rule;
  const candidates = candidateRules(policy, tool, agent);
  if (!fixed) {
    if (r.rule.attribution.source !== 'default') return 'open';
    return candidates.some((p) => p.decision !== 'DENY') ? 'open' : 'hidden';
  }
  const beaten = candidates.some((p) => p.decision !== 'DENY' && (p.priority > fixed.priority || (p.priority === fixed.priority && p.decision === 'ALLOW')));
  return beaten ? 'open' : 'hidden';
}

/** A DENY whose rule is the same whatever the call's arguments. */
function unconditional(policy: CompiledPolicy, rule: PermissionRule): boolean {
  const source = rule.attribution.source;
  if (NEVER_BY_ARGUMENTS.has(source)) return true;
  if (source !== 'policy') return false;
  const compiled = policy.rules.find((p) => p.id === rule.attribution.id);
  return compiled !== undefined && !compiled.condition && !compiled.args;
}
