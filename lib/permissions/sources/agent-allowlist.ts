import { PRIORITY, type PermissionRule, type RuleSource } from '@/lib/permissions/types';

/** The per-agent tool allowlists, compiled for lookup. */
export interface AgentDirectory {
  readonly agents: ReadonlyMap<string, { readonly description?: string; readonly tools: ReadonlySet<string> }>;
}

const NONE: readonly PermissionRule[] = Object.freeze([]);
const ALLOWLIST = Object.freeze({ source: 'agent_allowlist' });
/** unknown names can be sent by anyone: the memo is bounded */
const MAX_CACHED = 100_000;

/**
 * Agent allowlist: a listed tool is allowed at low priority (100), an unlisted tool or an unknown agent is denied at
 * high priority (900). `directory` returns the current snapshot, so a reloaded agents.yaml takes effect at once.
 */
export function createAgentAllowlistSource(directory: () => AgentDirectory): RuleSource {
  // The rules depend only on (agent, tool) and the directory: build each once and share it between checks.
  let cachedFor: AgentDirectory | undefined;
  let cache = new Map<string, Map<string, readonly PermissionRule[]>>();
  let entries = 0;
  const build = (dir: AgentDirectory, agentName: string, tool: string): readonly PermissionRule[] => {
    const agent = dir.agents.get(agentName);
    if (!agent) {
      return [
        {
          decision: 'DENY',
          priority: PRIORITY.allowlistDeny,
          attribution: ALLOWLIST,
          reason: `Unknown agent "${agentName}": it is not declared in config/agents.yaml.`,
        },
      ];
    }
    if (!agent.tools.has(tool)) {
      return [
        {
          decision: 'DENY',
          priority: PRIORITY.allowlistDeny,
          attribution: ALLOWLIST,
          reason: `Tool "${tool}" is not in the allowlist of agent "${agentName}".`,
        },
      ];
    }
    return [
      {
        decision: 'ALLOW',
        priority: PRIORITY.allowlistAllow,
        attribution: ALLOWLIST,
        reason: `Tool "${tool}" is in the allowlist of agent "${agentName}".`,
      },
    ];
  };
  return {
    name: 'agent_allowlist',
    rules(context) {
      if (context.kind !== 'tool') return NONE;
      const dir = directory();
      if (dir !== cachedFor || entries > MAX_CACHED) {
        cachedFor = dir;
        cache = new Map();
        entries = 0;
      }
      let byTool = cache.get(context.agent);
      if (!byTool) cache.set(context.agent, (byTool = new Map()));
      let rules = byTool.get(context.tool);
      if (!rules) {
        rules = Object.freeze(build(dir, context.agent, context.tool).map((r) => Object.freeze(r)));
        byTool.set(context.tool, rules);
        entries++;
      }
      return rules;
    },
  };
}
