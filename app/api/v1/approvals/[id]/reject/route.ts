import { approvalToJson } from '../../../../../../lib/approvals/store';
import { requireRole, route } from '../../../../../../lib/http/route';
import { approvalIdSchema, rejectBodySchema } from '../../../../../../lib/http/schemas';

export const dynamic = 'force-dynamic';

/** Reject a pending request with a reason; the rejection is recorded as a denial attributed to its gate. */
export const POST = route({ role: requireRole('operator'), params: approvalIdSchema, body: rejectBodySchema }, ({ app, params, body, principal }) =>
  approvalToJson(app.approvals.reject(params.id, principal.id, body.reason)),
);
