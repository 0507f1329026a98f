import { BoundedPairCache } from '../bounded-cache';
import { PRIORITY, type PermissionRule, type RuleSource } from '@/lib/permissions/types';

/** The per-agent tool allowlists, compiled for lookup. */
export interface AgentDirectory {
  readonly agents: ReadonlyMap<string, { readonly description?: string; readonly tools: ReadonlySet<string> }>;
}

const NONE: readonly PermissionRule[] = Object.freeze([]);
const ALLOWLIST = Object.freeze({ source: 'agent_allowlist' });
/**
 * The most (agent, tool) answers kept: about 15 MB at most (measured: some 470 bytes an answer when every call names a
 * new agent; the reasons name both). Anyone with a token can send new names, so the memo forgets the least recently
 * used and builds a forgotten answer again. Half of it (the generation in use) holds the 15,183 pairs of the engine
 * benchmark's 200 agents x 200 tools workload.
 */
export const MAX_ALLOWLIST_MEMO = 32_768;

/**
 * Agent allowlist: a listed tool is allowed at low priority (100), an unlisted tool or an unknown agent is denied at
 * high priority (900). `directory` returns the current snapshot, so a reloaded agents.yaml takes effect at once.
 */
export function createAgentAllowlistSource(directory: () => AgentDirectory, options: { maxMemo?: number } = {}): RuleSource & { memoSize(): number } {
  // The rules depend only on (agent, tool) and the directory: build each once and share it between checks.
  let cachedFor: AgentDirectory | undefined;
  const cache = new BoundedPairCache<readonly PermissionRule[]>(options.maxMemo ?? MAX_ALLOWLIST_MEMO);
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
    attributedTo: 'agent_allowlist',
    rules(context) {
      if (context.kind !== 'tool') return NONE;
      const dir = directory();
      if (dir !== cachedFor) {
        cachedFor = dir;
        cache.clear();
      }
      let rules = cache.get(context.agent, context.tool);
      if (rules === undefined) {
        rules = Object.freeze(build(dir, context.agent, context.tool).map((r) => Object.freeze(r)));
        cache.set(context.agent, context.tool, rules);
      }
      return rules;
    },
    memoSize: () => cache.size,
  };
}
