import { nextHandlers } from '@/lib/http/next-handlers';

export const dynamic = 'force-dynamic';

/** /api/v1/approvals: the route table's entry (lib/http/route-table.ts), defined in lib/http/routes/approvals.ts (GET listApprovals). */
export const { GET } = nextHandlers('/api/v1/approvals');
