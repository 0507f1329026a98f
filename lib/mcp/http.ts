/**
 * The MCP gateway over Streamable HTTP (`/mcp` on the server), for remote clients: the specification's sessions
 * (`Mcp-Session-Id`, given at initialize, ended by DELETE or after an idle hour), resumability (each session's stream
 * events kept in a bounded buffer, replayed after `Last-Event-ID`), and each session bound to the agent whose token
 * opened it: another token presenting its id is told there is no such session.
 *
 * One gateway per server process (getMcpGateway): the upstreams of config/mcp.yaml are connected once, when the first
 * session opens, and follow the file's reloads.
 */
import { randomUUID } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport, type EventStore } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { App } from '@/lib/app';
import { publicBase } from '@/lib/decisions/authzen';
import { principalLabel, type Principal } from '@/lib/permissions';
import type { SsoConfig } from '@/lib/sso/config';
import { InProcessDecider } from './decider';
import { McpGateway } from './gateway';
import { UpstreamPool } from './upstreams';

export const MCP_PATH = '/mcp';
export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource/mcp';

const IDLE_MS = 60 * 60 * 1000;
const MAX_SESSIONS = 1_000;
/** stream events kept per session for a client that reconnects (the oldest are dropped first) */
const EVENTS_KEPT = 500;

interface Session {
  /** whose session it is: the agent, and the person it acts for (principalLabel) */
  owner: string;
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  lastSeen: number;
}

/**
 * The protected-resource metadata (RFC 9728) the MCP authorization specification points a client at after a 401: the
 * resource (the audience its tokens must carry), the authorization servers that issue them (config/sso.yaml's
 * agent_tokens issuers; none when only our own tokens are taken: npx swarm tokens add --agent NAME) and the scopes
 * they ask for.
 */
export function resourceMetadata(origin: string, tokens: SsoConfig['agentTokens']) {
  const scopes = [...new Set(tokens?.issuers.flatMap((i) => i.scopes) ?? [])];
  return {
    resource: tokens?.resource ?? `${origin}${MCP_PATH}`,
    resource_name: 'Swarm Permissions MCP gateway',
    authorization_servers: tokens?.issuers.map((i) => i.issuer) ?? [],
    ...(scopes.length > 0 ? { scopes_supported: scopes } : {}),
    bearer_methods_supported: ['header'],
    resource_documentation: `${origin}/api-docs`,
  };
}

/** The 401's challenge: where the metadata is, and the scopes to ask for (MCP authorization, scope selection). */
export function challengeFor(origin: string, tokens: SsoConfig['agentTokens']): string {
  const metadata = tokens ? `${new URL(tokens.resource).origin}${RESOURCE_METADATA_PATH}` : `${origin}${RESOURCE_METADATA_PATH}`;
  const scopes = [...new Set(tokens?.issuers.flatMap((i) => i.scopes) ?? [])];
  return `Bearer realm="swarm-permissions", resource_metadata="${metadata}"${scopes.length > 0 ? `, scope="${scopes.join(' ')}"` : ''}`;
}

export class McpHttpEndpoint {
  private readonly sessions = new Map<string, Session>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly app: App,
    readonly gateway: McpGateway,
  ) {
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  /** One HTTP request of an agent already authenticated and allowed to reach /mcp. */
  async handle(request: Request, principal: Principal): Promise<Response> {
    const agent = principal.agent;
    if (principal.kind !== 'agent' || !agent) {
      return json(403, { error: { code: 'FORBIDDEN', message: 'The MCP endpoint serves agents: use an agent token (npx swarm tokens add --agent NAME).' } });
    }
    const owner = principalLabel(principal);
    const id = request.headers.get('mcp-session-id');
    if (id) {
      const session = this.sessions.get(id);
      // Another agent's session (or the same agent's for another person) is answered as an unknown one: its id tells nothing.
      if (!session || session.owner !== owner) return jsonRpcError(404, 'Session not found: initialize a new one.');
      session.lastSeen = Date.now();
      return session.transport.handleRequest(request);
    }
    if (request.method !== 'POST') return jsonRpcError(400, 'Bad Request: no Mcp-Session-Id header (initialize first, with a POST).');
    if (this.sessions.size >= MAX_SESSIONS) this.sweep(true);
    const origin = publicBase(request, this.app.env);
    const server = this.gateway.session(new InProcessDecider(this.app, principal, this.app.env.SWARM_CONSOLE_URL || origin));
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: new BoundedEventStore(EVENTS_KEPT),
      onsessioninitialized: (sessionId) => {
        this.sessions.set(sessionId, { owner, transport, server, lastSeen: Date.now() });
      },
      onsessionclosed: (sessionId) => {
        this.sessions.delete(sessionId);
        void server.close();
      },
    });
    await server.connect(transport);
    const response = await transport.handleRequest(request);
    // Not an initialize (or a refused one): no session was made, and this server has nothing more to do.
    if (!transport.sessionId) void server.close();
    return response;
  }

  sessionCount(): number {
    return this.sessions.size;
  }

  /** Close the sessions idle for an hour (all but the newest half, when `crowded`). */
  private sweep(crowded = false): void {
    const now = Date.now();
    const byAge = [...this.sessions.entries()].sort((a, b) => a[1].lastSeen - b[1].lastSeen);
    const drop = crowded ? Math.ceil(byAge.length / 2) : 0;
    byAge.forEach(([id, s], i) => {
      if (i < drop || now - s.lastSeen > IDLE_MS) {
        this.sessions.delete(id);
        void s.server.close();
      }
    });
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((s) => s.server.close().catch(() => {})));
    await this.gateway.pool.close();
  }
}

/** The events of each stream, the newest `kept` of all streams together, for a client that resumes. */
class BoundedEventStore implements EventStore {
  private readonly events = new Map<string, { stream: string; message: JSONRPCMessage }>();

  constructor(private readonly kept: number) {}

  async storeEvent(stream: string, message: JSONRPCMessage): Promise<string> {
    const id = `${stream}:${randomUUID()}`;
    this.events.set(id, { stream, message });
    if (this.events.size > this.kept) this.events.delete(this.events.keys().next().value!);
    return id;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.events.get(eventId)?.stream;
  }

  async replayEventsAfter(lastEventId: string, { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> }): Promise<string> {
    const last = this.events.get(lastEventId);
    if (!last) return '';
    let after = false;
    for (const [id, e] of this.events) {
      if (id === lastEventId) after = true;
      else if (after && e.stream === last.stream) await send(id, e.message);
    }
    return last.stream;
  }
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' } });
}

function jsonRpcError(status: number, message: string): Response {
  return json(status, { jsonrpc: '2.0', error: { code: -32000, message }, id: null });
}

const ENDPOINT_KEY = Symbol.for('swarm-permissions.mcp-endpoint');
type WithEndpoint = typeof globalThis & { [ENDPOINT_KEY]?: { app: App; endpoint: McpHttpEndpoint } };

/** This process's MCP endpoint for its application (made at the first /mcp request). */
export function mcpEndpointFor(app: App): McpHttpEndpoint {
  const g = globalThis as WithEndpoint;
  const held = g[ENDPOINT_KEY];
  if (held && held.app === app) return held.endpoint;
  if (held) void held.endpoint.close();
  const endpoint = new McpHttpEndpoint(app, new McpGateway(new UpstreamPool(() => app.mcpFile.current)));
  g[ENDPOINT_KEY] = { app, endpoint };
  return endpoint;
}

/** The endpoint of this process, if one was made (for /transparency and shutdown). */
export function currentMcpEndpoint(): McpHttpEndpoint | undefined {
  return (globalThis as WithEndpoint)[ENDPOINT_KEY]?.endpoint;
}
