import { requireRole, route } from '@/lib/http/route';
import { approvalListQuerySchema } from '@/lib/http/schemas';

export const dynamic = 'force-dynamic';

/** Approval requests, filtered by status, gate and agent; pending ones oldest first, with the approvals given so far. */
export const GET = route({ role: requireRole('auditor'), query: approvalListQuerySchema }, async ({ app, query }) => ({
  approvals: await app.approvals.toJson(await app.approvals.list(query)),
}));
