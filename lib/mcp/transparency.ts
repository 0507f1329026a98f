/**
 * The MCP gateway on /transparency: the servers of config/mcp.yaml with their state as this server's gateway sees
 * them (connected, how many tools, the last error), a matrix of the agents by the MCP tools with the decision each
 * would get today for a call without arguments (what tools/list shows them: hidden, needs approval, allowed), and the
 * pins of the tools' definitions with those held for an operator (lib/mcp/pins).
 */
import type { App } from '@/lib/app';
import { fileStatusJson } from '@/lib/config/watched-file';
import { effectiveHint } from '@/lib/permissions/annotations';
import { declaredAnnotations } from './gateway';
import { mcpEndpointFor } from './http';
import { nameTools } from './names';
import { definitionOf } from './pins/definition';
import { pinListing, type PinListing } from './pins/accept';
import { toolVisibility, type Visibility } from './visibility';

export interface McpTransparency {
  file: ReturnType<typeof fileStatusJson>;
  separator: string;
  approval_wait_seconds: number;
  servers: {
    id: string;
    description: string | null;
    transport: 'stdio' | 'http';
    /** the command and its arguments, or the URL without its query */
    shown: string;
    /** the names of the variables it is given (never their values) */
    env_from: string[];
    on_ask: 'wait' | 'return';
    position: string;
    state: 'starting' | 'connected' | 'restarting' | 'stopped';
    tools: number;
    last_error: { message: string; at: number } | null;
    restarts: number;
  }[];
  /** every listed tool (as agents see its name), and per agent what tools/list gives it */
  tools: { name: string; server: string; destructive: boolean; read_only: boolean }[];
  agents: { agent: string; visibility: Visibility[] }[];
  /**
   * the pins of the upstream tools' definitions (lib/mcp/pins): what is pinned, and what is held for an operator, each
   * held definition with whether this server's gateway sees it listed now (null: this server does not connect to it)
   */
  pins: Omit<PinListing, 'held'> & { held: (PinListing['held'][number] & { listed_now: boolean | null })[] };
}

/** How long a page waits for the upstreams that are still starting (their first start, when the page starts them). */
const FIRST_START_WAIT_MS = 3_000;

export async function mcpTransparency(app: App): Promise<McpTransparency> {
  const config = app.mcpFile.current;
  const listing = await pinListing(app);
  if (config.servers.length === 0) {
    // Nothing to connect: no gateway is started for a page (gateways deciding over REST may still have pinned tools).
    const pins = { ...listing, held: listing.held.map((h) => ({ ...h, listed_now: null })) };
    return { file: fileStatusJson(app.mcpFile.status()), separator: config.separator, approval_wait_seconds: config.approvalWaitMs / 1000, servers: [], tools: [], agents: [], pins };
  }
  const pool = mcpEndpointFor(app).gateway.pool;
  pool.sync();
  await pool.settled(FIRST_START_WAIT_MS);
  const statuses = new Map(pool.statuses().map((s) => [s.id, s]));
  const servers = config.servers.map((s) => {
    const st = statuses.get(s.id);
    return {
      id: s.id,
      description: s.description ?? null,
      transport: s.transport.kind,
      shown: s.shown,
      env_from: Object.values(s.envFrom),
      on_ask: s.onAsk,
      position: s.position,
      state: st?.state ?? 'starting',
      tools: st?.tools ?? 0,
      last_error: st?.lastError ?? null,
      restarts: st?.restarts ?? 0,
    };
  });
  // The tools as the gateway lists them: a name that could impersonate is not among them (lib/mcp/names.ts), and a
  // definition that is not the pinned one is hidden from every agent, as its tools/list hides it.
  const tools = nameTools(pool.live().map((upstream) => ({ upstream, tools: upstream.tools })), config.separator).listed.map(({ name, upstream, tool }) => {
    const annotations = declaredAnnotations(tool.annotations);
    return {
      name,
      server: upstream.config.id,
      annotations,
      mcp: { server: upstream.config.id, tool: tool.name, sha256: definitionOf(tool).sha256 },
      read_only: effectiveHint(annotations, 'readOnlyHint'),
      destructive: effectiveHint(annotations, 'destructiveHint'),
    };
  });
  const agents = [];
  for (const agent of [...app.agentsFile.current.agents.keys()].sort()) {
    const principal = { kind: 'agent' as const, id: agent, role: 'viewer' as const, agent };
    const { tools: visibility } = await toolVisibility(app, principal, agent, tools.map((t) => ({ tool: t.name, annotations: t.annotations, mcp: t.mcp })));
    agents.push({ agent, visibility });
  }
  // Whether the gateway of this server sees each held definition listed by its upstream now.
  const listedNow = (server: string, tool: string, sha256: string): boolean | null => {
    const upstream = pool.get(server);
    if (!upstream) return null;
    return upstream.tools.some((t) => t.name === tool && definitionOf(t).sha256 === sha256);
  };
  return {
    file: fileStatusJson(app.mcpFile.status()),
    separator: config.separator,
    approval_wait_seconds: config.approvalWaitMs / 1000,
    servers,
    tools: tools.map(({ name, server, destructive, read_only }) => ({ name, server, destructive, read_only })),
    agents,
    pins: { ...listing, held: listing.held.map((h) => ({ ...h, listed_now: listedNow(h.server, h.tool, h.sha256) })) },
  };
}
