import { approvalToJson } from '../../../../lib/approvals/store';
import { requireRole, route } from '../../../../lib/http/route';
import { approvalListQuerySchema } from '../../../../lib/http/schemas';

export const dynamic = 'force-dynamic';

/** Approval requests, filtered by status, gate and agent; pending ones oldest first. */
export const GET = route({ role: requireRole('auditor'), query: approvalListQuerySchema }, ({ app, query }) => ({
  approvals: app.approvals.list(query).map(approvalToJson),
}));
