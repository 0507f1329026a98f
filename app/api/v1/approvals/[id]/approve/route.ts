import { requireRole, route } from '@/lib/http/route';
import { approvalIdSchema, approveBodySchema } from '@/lib/http/schemas';

export const dynamic = 'force-dynamic';

/**
 * One person's approval of a pending request. With a two-person gate the request stays pending after the first
 * approval (the answer lists who approved). 409 when it was decided or expired already; 403 for the requester, for a
 * second approval by the same person, and for a role the gate does not accept.
 */
export const POST = route({ role: requireRole('operator'), params: approvalIdSchema, body: approveBodySchema }, async ({ app, params, body, principal }) => {
  const row = await app.approvals.approve(params.id, principal, body.reason);
  return (await app.approvals.toJson([row]))[0];
});
