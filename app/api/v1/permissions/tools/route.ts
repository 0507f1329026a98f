import { nextHandlers } from '@/lib/http/next-handlers';

export const dynamic = 'force-dynamic';

/** /api/v1/permissions/tools: the route table's entry (lib/http/route-table.ts), defined in lib/http/routes/decisions.ts (POST listUsableTools). */
export const { POST } = nextHandlers('/api/v1/permissions/tools');
