/**
 * `swarm mcp pins`: the pins of the upstream tools' definitions (cli/commands/mcp-pins.ts).
 *
 * `swarm mcp serve`: the MCP gateway on stdio, for a client that launches its MCP servers itself (Claude Desktop,
 * Cursor, Claude Code). It starts the upstream servers of config/mcp.yaml and decides every call of theirs:
 *
 * - over REST when SWARM_URL is set: a running server decides, as the agent of SWARM_TOKEN (an agent token);
 * - else in process, on the database SWARM_DB names, as the agent given by --agent (or SWARM_AGENT).
 *
 * stdout carries the protocol and nothing else: whatever this command has to say goes to stderr.
 */
import { join, resolve } from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { openApp, type App } from '@/lib/app';
import { locationTarget } from '@/db/location';
import { WatchedFile } from '@/lib/config/watched-file';
import { NO_MCP, parseMcpConfig } from '@/lib/mcp/config';
import { InProcessDecider, RestDecider, type GatewayDecider } from '@/lib/mcp/decider';
import { McpGateway } from '@/lib/mcp/gateway';
import { guardedStdin } from '@/lib/mcp/stdio';
import { UpstreamPool } from '@/lib/mcp/upstreams';
import { messageOf } from '@/lib/errors';
import { expectPositionals, parseCommand } from '@/cli/args';
import { dbLocation, type Env, type Io } from '@/cli/context';
import { UsageError } from '@/cli/errors';
import { pinsCommand } from './mcp-pins';

export interface McpServeIo extends Io {
  /** the protocol's streams (the process's stdin and stdout) */
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
}

export async function mcpCommand(io: McpServeIo, env: Env, sub: string | undefined, argv: string[]): Promise<number> {
  if (sub === 'pins') return pinsCommand({ io, env }, argv[0], argv.slice(1));
  if (sub !== 'serve') throw new UsageError(sub === undefined ? 'swarm mcp needs a subcommand: serve or pins.' : `unknown subcommand "mcp ${sub}": use serve or pins.`);
  const { values, positionals } = parseCommand(argv, { agent: { type: 'string' }, 'config-dir': { type: 'string' } });
  expectPositionals(positionals, []);
  const configDir = resolve(values['config-dir'] ?? (env.SWARM_CONFIG_DIR || 'config'));
  const file = new WatchedFile(join(configDir, 'mcp.yaml'), (text, path) => parseMcpConfig(text, path, env, { secrets: 'required' }), NO_MCP);

  let app: App | undefined;
  let decider: GatewayDecider;
  if (env.SWARM_URL) {
    if (!env.SWARM_TOKEN) throw new UsageError('SWARM_URL is set but SWARM_TOKEN is not: give the agent\'s token (npx swarm tokens add --agent NAME).');
    decider = await RestDecider.connect(env.SWARM_URL, env.SWARM_TOKEN, { agent: values.agent ?? (env.SWARM_AGENT || undefined), timeoutMs: Number(env.SWARM_MCP_DECISION_TIMEOUT_MS ?? 10_000) });
  } else {
    const agent = values.agent ?? env.SWARM_AGENT;
    if (!agent) throw new UsageError('swarm mcp serve decides for one agent: give --agent NAME (or SWARM_AGENT), or SWARM_URL and the agent\'s SWARM_TOKEN.');
    app = await openApp({ dbPath: locationTarget(dbLocation(env)), env, watchConfig: true, configDir });
    decider = new InProcessDecider(app, { kind: 'agent', id: agent, role: 'viewer', agent }, env.SWARM_CONSOLE_URL || undefined);
  }

  if (file.current.servers.length === 0) io.err(`swarm mcp serve: ${file.path} names no MCP server (see docs/mcp-gateway.md): the client will see no tools.\n`);
  file.onRefused((error) => io.err(`swarm mcp serve: ${file.path} was changed but cannot be used; the last good version stays: ${error}\n`));
  file.watch();
  const pool = new UpstreamPool(() => file.current);
  // Over REST each check of the tool list is a request to the server: every 3 s rather than every second.
  const gateway = new McpGateway(pool, { watchMs: env.SWARM_URL ? 3_000 : 1_000 });
  const server = gateway.session(decider);
  const closed = new Promise<void>((done) => {
    server.onclose = ((previous) => () => {
      previous?.();
      done();
    })(server.onclose);
  });
  const stop = () => void server.close();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  try {
    await server.connect(new StdioServerTransport(guardedStdin(io.stdin, io.stdout), io.stdout as never));
    io.stdin.once('end', stop);
    await closed;
  } catch (error) {
    io.err(`swarm mcp serve: ${messageOf(error)}\n`);
    return 1;
  } finally {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
    file.close();
    await pool.close();
    if (app) {
      await app.hooks.drain();
      await app.close();
    }
  }
  return 0;
}
