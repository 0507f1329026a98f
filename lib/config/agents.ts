/** config/agents.yaml: the agents and their tool allowlists, validated with zod. */
import { z } from 'zod';
import type { AgentDirectory } from '@/lib/permissions/sources';
import { parseYamlConfig } from '@/lib/permissions/yaml-config';

const name = z.string().regex(/^[a-z][a-z0-9_-]*$/, 'names are lower-case letters, digits, "_" or "-"');

/** agent name -> its description, owner and tool allowlist */
export const agentMapSchema = z.record(
  name,
  z.strictObject({
    description: z.string().optional(),
    owner: z.string().optional(),
    tools: z.array(name).default([]),
  }),
);

export const agentsFileSchema = z.strictObject({
  agents: agentMapSchema.nullable().default({}),
});

export type AgentsFile = z.infer<typeof agentsFileSchema>;

export interface AgentsConfig extends AgentDirectory {
  readonly file: AgentsFile;
}

/** The engine's view of an agents map. */
export function agentDirectory(agents: AgentsFile['agents']): AgentDirectory {
  return { agents: new Map(Object.entries(agents ?? {}).map(([n, a]) => [n, { description: a.description, tools: new Set(a.tools) }] as const)) };
}

export function parseAgents(text: string, file = 'agents.yaml'): AgentsConfig {
  const data = parseYamlConfig(text, file, agentsFileSchema);
  return { file: data, agents: agentDirectory(data.agents).agents };
}

export const EMPTY_AGENTS: AgentsConfig = parseAgents('agents: {}\n');
