/** Approval requests (human-in-the-loop gates): the queue, one request, approve, reject. */
import { AppError } from '@/lib/errors';
import { requireRole, route } from '../route';
import { approvalIdSchema, approvalListQuerySchema, approveBodySchema, rejectBodySchema } from '../schemas';

/** Approval requests, filtered by status, gate and agent; pending ones oldest first, with the approvals given so far. */
export const listApprovals = route({ role: requireRole('auditor'), query: approvalListQuerySchema }, async ({ app, query }) => ({
  approvals: await app.approvals.toJson(await app.approvals.list(query)),
}));

/** One approval request with the approvals given so far. A read: a request past its expiry shows as expired. */
export const getApproval = route({ role: requireRole('auditor'), params: approvalIdSchema }, async ({ app, params }) => {
  const row = await app.approvals.get(params.id);
  if (!row) throw new AppError('NOT_FOUND', `There is no approval "${params.id}".`);
  return (await app.approvals.toJson([row]))[0];
});

/**
 * One person's approval of a pending request. With a two-person gate the request stays pending after the first
 * approval (the answer lists who approved). 409 when it was decided or expired already; 403 for the requester, for a
 * second approval by the same person, and for a role the gate does not accept.
 */
export const approveRequest = route({ role: requireRole('operator'), params: approvalIdSchema, body: approveBodySchema }, async ({ app, params, body, principal }) => {
  const row = await app.approvals.approve(params.id, principal, body.reason);
  return (await app.approvals.toJson([row]))[0];
});

/** Reject a pending request with a reason; recorded as a denial `hitl:<gate>`. One rejection ends the request. */
export const rejectRequest = route({ role: requireRole('operator'), params: approvalIdSchema, body: rejectBodySchema }, async ({ app, params, body, principal }) => {
  const row = await app.approvals.reject(params.id, principal, body.reason);
  return (await app.approvals.toJson([row]))[0];
});
