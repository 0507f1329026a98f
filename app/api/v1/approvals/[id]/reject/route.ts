import { requireRole, route } from '@/lib/http/route';
import { approvalIdSchema, rejectBodySchema } from '@/lib/http/schemas';

export const dynamic = 'force-dynamic';

/** Reject a pending request with a reason; recorded as a denial `hitl:<gate>`. One rejection ends the request. */
export const POST = route({ role: requireRole('operator'), params: approvalIdSchema, body: rejectBodySchema }, async ({ app, params, body, principal }) => {
  const row = await app.approvals.reject(params.id, principal, body.reason);
  return (await app.approvals.toJson([row]))[0];
});
