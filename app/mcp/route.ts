import { nextHandlers } from '@/lib/http/next-handlers';

export const dynamic = 'force-dynamic';

/** /mcp: the route table's entry (lib/http/route-table.ts), defined in lib/http/routes/mcp.ts (the MCP gateway, Streamable HTTP). */
export const { GET, POST, DELETE } = nextHandlers('/mcp');
