import { nextHandlers } from '@/lib/http/next-handlers';

export const dynamic = 'force-dynamic';

/** /api/v1/approvals/{id}/reject: the route table's entry (lib/http/route-table.ts), defined in lib/http/routes/approvals.ts (POST rejectRequest). */
export const { POST } = nextHandlers('/api/v1/approvals/{id}/reject');
