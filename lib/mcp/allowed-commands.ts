/**
 * What a configuration from the database may start on this server (issue 39: configuration that can start a program is
 * never taken from the database alone), read from this server's disk: kept apart from config.ts, which is pure.
 */
import { existsSync, readFileSync } from 'node:fs';
import { commandKey, parseMcpConfig } from './config';

/**
 * The commands a configuration that does not come from this server's disk may start: those of the mcp.yaml on it, and
 * the lines of the file SWARM_MCP_ALLOWED_COMMANDS names (each a command and its arguments separated by spaces; #
 * starts a comment). An unreadable list is an error: it is never taken as empty or as everything.
 */
export function allowedCommandsOnDisk(mcpYaml: string, env: Readonly<Record<string, string | undefined>>): Set<string> {
  const allowed = new Set<string>();
  if (existsSync(mcpYaml)) {
    for (const s of parseMcpConfig(readFileSync(mcpYaml, 'utf8'), mcpYaml, env, { secrets: 'optional' }).servers) {
      if (s.transport.kind === 'stdio') allowed.add(commandKey(s.transport.command, s.transport.args));
    }
  }
  const list = env.SWARM_MCP_ALLOWED_COMMANDS?.trim();
  if (list) {
    for (const line of readFileSync(list, 'utf8').split('\n')) {
      const words = line.replace(/#.*$/, '').trim().split(/\s+/).filter(Boolean);
      if (words.length > 0) allowed.add(commandKey(words[0]!, words.slice(1)));
    }
  }
  return allowed;
}
