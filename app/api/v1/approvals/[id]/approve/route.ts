import { approvalToJson } from '../../../../../../lib/approvals/store';
import { requireRole, route } from '../../../../../../lib/http/route';
import { approvalIdSchema, approveBodySchema } from '../../../../../../lib/http/schemas';

export const dynamic = 'force-dynamic';

/** Approve a pending request. 409 when it was decided already; 403 for the principal who requested it. */
export const POST = route({ role: requireRole('operator'), params: approvalIdSchema, body: approveBodySchema }, ({ app, params, body, principal }) =>
  approvalToJson(app.approvals.approve(params.id, principal.id, body.reason)),
);
