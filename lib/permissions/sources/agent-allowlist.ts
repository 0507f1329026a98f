import { PRIORITY, type PermissionRule, type RuleSource } from '../types';

/** The per-agent tool allowlists, compiled for lookup. */
export interface AgentDirectory {
  readonly agents: ReadonlyMap<string, { readonly description?: string; readonly tools: ReadonlySet<string> }>;
}

const NONE: readonly PermissionRule[] = Object.freeze([]);

/**
 * Agent allowlist: a listed tool is allowed at low priority (100), an unlisted tool or an unknown agent is denied at
 * high priority (900). `directory` returns the current snapshot, so a reloaded agents.yaml takes effect at once.
 */
export function createAgentAllowlistSource(directory: () => AgentDirectory): RuleSource {
  // One frozen rule object per agent and tool would be faster still, but the rule must name the agent in its reason.
  return {
    name: 'agent_allowlist',
    rules(context) {
      if (context.kind !== 'tool') return NONE;
      const agent = directory().agents.get(context.agent);
      if (!agent) {
        return [
          {
            decision: 'DENY',
            priority: PRIORITY.allowlistDeny,
            ruleSource: 'agent_allowlist',
            reason: `Unknown agent "${context.agent}": it is not declared in config/agents.yaml.`,
          },
        ];
      }
      if (!agent.tools.has(context.tool)) {
        return [
          {
            decision: 'DENY',
            priority: PRIORITY.allowlistDeny,
            ruleSource: 'agent_allowlist',
            reason: `Tool "${context.tool}" is not in the allowlist of agent "${context.agent}".`,
          },
        ];
      }
      return [
        {
          decision: 'ALLOW',
          priority: PRIORITY.allowlistAllow,
          ruleSource: 'agent_allowlist',
          reason: `Tool "${context.tool}" is in the allowlist of agent "${context.agent}".`,
        },
      ];
    },
  };
}
