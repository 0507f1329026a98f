import { nextHandlers } from '@/lib/http/next-handlers';

export const dynamic = 'force-dynamic';

/** /api/v1/mcp/pins/accept: the route table's entry (lib/http/route-table.ts), defined in lib/http/routes/mcp-pins.ts (POST acceptMcpPin). */
export const { POST } = nextHandlers('/api/v1/mcp/pins/accept');
