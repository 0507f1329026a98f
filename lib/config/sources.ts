/** The built-in rule sources, wired to a configuration: the application's, or a candidate's under test. */
import { FLAG_CATALOG } from '@/lib/flags/catalog';
import type { CompiledPolicy } from '@/lib/permissions/policy';
import type { RuleSource } from '@/lib/permissions';
import {
  createAgentAllowlistSource,
  createFlagSource,
  createHitlSource,
  createMcpPinSource,
  createPolicySource,
  createRbacSource,
  NO_PIN_DIRECTORY,
  type AgentDirectory,
  type PinDirectory,
} from '@/lib/permissions/sources';

export const FLAG_GUARDS = FLAG_CATALOG.map((f) => ({ flag: f.name, defaultValue: f.defaultValue, tools: f.guards.tools, paths: f.guards.paths }));

/**
 * The default sources, in the order the trace lists them: the five of the design, and the MCP gateway's pins of
 * upstream tool definitions (`pins`: none for a configuration under test, whose recorded calls name no definition).
 */
export function builtInSources(agents: () => AgentDirectory, policy: () => CompiledPolicy, pins: () => PinDirectory = () => NO_PIN_DIRECTORY): RuleSource[] {
  return [createRbacSource(), createAgentAllowlistSource(agents), createFlagSource(FLAG_GUARDS), createPolicySource(policy), createHitlSource(), createMcpPinSource(pins)];
}

/** Every flag at its declared default: what policy tests run against unless a case sets flags. */
export const DEFAULT_FLAG_VALUES: ReadonlyMap<string, boolean> = new Map(FLAG_CATALOG.map((f) => [f.name, f.defaultValue]));
