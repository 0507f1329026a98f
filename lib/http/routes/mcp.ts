/**
 * The MCP gateway's HTTP endpoint (`/mcp`, Streamable HTTP) and its protected-resource metadata. An agent's bearer
 * token opens a session; the request itself is decided by the engine like every endpoint (RBAC, flags, policy on
 * method and path), and each tools/call inside it again, as that agent's tool call (lib/mcp/gateway.ts). A call
 * without a valid token is answered 401 with the WWW-Authenticate challenge the MCP authorization specification asks
 * for, naming the metadata document.
 */
import { publicBase } from '@/lib/decisions/authzen';
import { challengeFor, mcpEndpointFor, resourceMetadata } from '@/lib/mcp/http';
import { requireRole, route } from '../route';

const mcpRoute = route({ role: requireRole('viewer'), scope: 'decide', principals: 'agent', challenge: (request, app) => challengeFor(publicBase(request, app.env), app.ssoFile.current.agentTokens) }, async ({ app, principal, request }) =>
  mcpEndpointFor(app).handle(request, principal),
);

/** A JSON-RPC message (or a batch) of a session; an initialize opens one. */
export const postMcpMessage = mcpRoute;
/** The session's stream of server messages (resumed after Last-Event-ID). */
export const openMcpStream = mcpRoute;
/** End a session. */
export const endMcpSession = mcpRoute;

/** RFC 9728 metadata of the /mcp resource: where it is, and that it takes bearer tokens in the header. */
export const getMcpResourceMetadata = route({ role: requireRole('anonymous') }, ({ app, request }) => resourceMetadata(publicBase(request, app.env), app.ssoFile.current.agentTokens));
