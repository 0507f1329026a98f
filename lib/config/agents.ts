/** config/agents.yaml: the agents and their tool allowlists, validated with zod. */
import { z } from 'zod';
import type { AgentDirectory } from '@/lib/permissions/sources';
import { parseYamlConfig } from '@/lib/permissions/yaml-config';

const name = z.string().regex(/^[a-z][a-z0-9_-]*$/, 'names are lower-case letters, digits, "_" or "-"');

export const agentsFileSchema = z.strictObject({
  agents: z
    .record(
      name,
      z.strictObject({
        description: z.string().optional(),
        owner: z.string().optional(),
        tools: z.array(name).default([]),
      }),
    )
    .nullable()
    .default({}),
});

export type AgentsFile = z.infer<typeof agentsFileSchema>;

export interface AgentsConfig extends AgentDirectory {
  readonly file: AgentsFile;
}

export function parseAgents(text: string, file = 'agents.yaml'): AgentsConfig {
  const data = parseYamlConfig(text, file, agentsFileSchema);
  const agents = new Map(
    Object.entries(data.agents ?? {}).map(([n, a]) => [n, { description: a.description, tools: new Set(a.tools) }] as const),
  );
  return { file: data, agents };
}

export const EMPTY_AGENTS: AgentsConfig = parseAgents('agents: {}\n');
