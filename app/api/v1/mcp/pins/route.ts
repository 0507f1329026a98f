import { nextHandlers } from '@/lib/http/next-handlers';

export const dynamic = 'force-dynamic';

/** /api/v1/mcp/pins: the route table's entry (lib/http/route-table.ts), defined in lib/http/routes/mcp-pins.ts (GET listMcpPins). */
export const { GET } = nextHandlers('/api/v1/mcp/pins');
