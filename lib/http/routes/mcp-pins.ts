/**
 * The MCP gateway's pins of upstream tool definitions (issue 42): what is pinned and held (with both definitions, to
 * show the difference), an operator's acceptance of a held definition, and the observations a gateway that decides
 * over REST (`swarm mcp serve` with SWARM_URL) reports of its upstreams' lists.
 */
import { acceptToolDefinition, pinJson, pinListing } from '@/lib/mcp/pins/accept';
import { definitionOf } from '@/lib/mcp/pins/definition';
import { requireRole, route } from '../route';
import { acceptPinBodySchema, observationBodySchema } from '../schemas';

/** Every pin in force and every definition held for an operator, with the pinned one it differs from. */
export const listMcpPins = route({ role: requireRole('viewer') }, ({ app }) => pinListing(app));

/**
 * An operator accepts a held definition: it is pinned (recorded as mcp.tool.accepted, with the difference) and the
 * tool is listed and callable again; under change control the acceptance is a proposal, activated like a rule change.
 */
export const acceptMcpPin = route({ role: requireRole('operator'), body: acceptPinBodySchema }, async ({ app, body, principal }) => {
  const r = await acceptToolDefinition(app, body, { id: principal.id, role: principal.role });
  return r.status === 'accepted'
    ? { status: r.status, pin: pinJson(r.pin), previous: r.previous ? pinJson(r.previous) : null, proposal: null }
    : { status: r.status, pin: null, previous: null, proposal: { id: r.proposal.id, revision: r.proposal.revision, approvals_required: r.proposal.approvalsRequired } };
});

/**
 * What one upstream of a gateway lists now (a gateway deciding over REST reports it before it lists or calls a tool):
 * a tool first seen is pinned (or held, when a profile holds new tools), a changed definition is held, a refused name
 * recorded once. Answers the state of each tool.
 */
export const observeMcpTools = route(
  { role: requireRole('viewer'), scope: 'decide', principals: 'agent', body: observationBodySchema, maxBodyBytes: 4 * 1024 * 1024 },
  async ({ app, body, principal }) => {
    const tools = body.tools.map((t) => ({ name: t.name as string, ...definitionOf(t as Parameters<typeof definitionOf>[0]) }));
    const observed = await app.mcpPins.observe(body.server, tools, body.refused, `agent:${principal.agent ?? principal.id}`);
    return { tools: observed.map((o) => ({ tool: o.tool, sha256: o.sha256, state: o.state === 'held' ? 'held' : 'pinned' })) };
  },
);
