/**
 * Names that cannot impersonate (issue 42). The gateway lists an upstream's tool as `<server><separator><tool>`, and
 * decides a read of a resource as `<server><separator>read_resource`, a prompt as `<server><separator>get_prompt`. An
 * upstream tool is not listed (and its calls are not routed) when its name could make it speak for something else:
 *
 * - `separator`: its own name holds the separator, so its listed name reads as another server's tool;
 * - `collision`: its listed name is the listed name of another server's tool (whichever server lists it, neither is
 *   served: the first would otherwise win silently);
 * - `reserved`: it is named like the gateway's own decisions, so a policy or an allowlist written for reading resources
 *   or getting prompts would let it run.
 *
 * Pure: the upstreams' tools in, the listed ones and the refused ones out.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';

/** The decisions a read of an upstream's resource and a prompt are taken as (`<server><separator><name>`). */
export const READ_RESOURCE = 'read_resource';
export const GET_PROMPT = 'get_prompt';
export const RESERVED_TOOL_NAMES: ReadonlySet<string> = new Set([READ_RESOURCE, GET_PROMPT]);

export type RefusalReason = 'separator' | 'collision' | 'reserved';

export interface NamedTool<U> {
  /** the namespaced name agents see */
  name: string;
  upstream: U;
  tool: Tool;
}

export interface RefusedTool<U> {
  upstream: U;
  tool: string;
  reason: RefusalReason;
  message: string;
}

/** The tools of every upstream (in order), split into those listed by their namespaced name and those refused. */
export function nameTools<U extends { config: { id: string } }>(upstreams: readonly { upstream: U; tools: readonly Tool[] }[], separator: string): { listed: NamedTool<U>[]; refused: RefusedTool<U>[] } {
  const refused: RefusedTool<U>[] = [];
  const candidates: NamedTool<U>[] = [];
  for (const { upstream, tools } of upstreams) {
    const server = upstream.config.id;
    for (const tool of tools) {
      const name = `${server}${separator}${tool.name}`;
      if (tool.name.includes(separator)) {
        refused.push({ upstream, tool: tool.name, reason: 'separator', message: `The tool "${tool.name}" of server "${server}" holds the separator "${separator}", so "${name}" would read as another server's tool: it is not listed.` });
      } else if (RESERVED_TOOL_NAMES.has(tool.name)) {
        refused.push({
          upstream,
          tool: tool.name,
          reason: 'reserved',
          message: `The tool "${tool.name}" of server "${server}" is named like the gateway's own decision "${name}" (${tool.name === READ_RESOURCE ? 'reading a resource' : 'getting a prompt'}), so the permission for that would run it: it is not listed.`,
        });
      } else {
        candidates.push({ name, upstream, tool });
      }
    }
  }
  const byName = new Map<string, NamedTool<U>[]>();
  for (const c of candidates) byName.set(c.name, [...(byName.get(c.name) ?? []), c]);
  const listed: NamedTool<U>[] = [];
  for (const c of candidates) {
    const same = byName.get(c.name)!;
    if (same.length === 1) {
      listed.push(c);
      continue;
    }
    const others = same.filter((o) => o !== c).map((o) => `"${o.tool.name}" of server "${o.upstream.config.id}"`);
    refused.push({
      upstream: c.upstream,
      tool: c.tool.name,
      reason: 'collision',
      message:
        others.length === 0
          ? `The server "${c.upstream.config.id}" lists the tool "${c.tool.name}" more than once: it is not listed.`
          : `The tool "${c.tool.name}" of server "${c.upstream.config.id}" would be listed as "${c.name}", the name of ${others.join(', ')}: neither is listed.`,
    });
  }
  // A server that lists one name twice is refused once for it.
  const seen = new Set<string>();
  return {
    listed,
    refused: refused.filter((r) => {
      const key = JSON.stringify([r.upstream.config.id, r.tool]);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    }),
  };
}
