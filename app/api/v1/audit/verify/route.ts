import { nextHandlers } from '@/lib/http/next-handlers';

export const dynamic = 'force-dynamic';

/** /api/v1/audit/verify: the route table's entry (lib/http/route-table.ts), defined in lib/http/routes/audit.ts (GET verifyAuditTrail). */
export const { GET } = nextHandlers('/api/v1/audit/verify');
