import { nextHandlers } from '@/lib/http/next-handlers';

export const dynamic = 'force-dynamic';

/** /api/v1/approvals/{id}/approve: the route table's entry (lib/http/route-table.ts), defined in lib/http/routes/approvals.ts (POST approveRequest). */
export const { POST } = nextHandlers('/api/v1/approvals/{id}/approve');
