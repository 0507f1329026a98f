/** Approval requests (human-in-the-loop gates): the queue, one request, approve, reject. */
import type { ApprovalRow } from '@/db/schema';
import { requesterOf } from '@/lib/approvals/rules';
import { AppError } from '@/lib/errors';
import { isRoleAtLeast } from '@/lib/permissions/types';
import { requireRole, route } from '../route';
import { approvalIdSchema, approvalListQuerySchema, approvalReadQuerySchema, approveBodySchema, rejectBodySchema } from '../schemas';

/** Approval requests, filtered by status, gate and agent; pending ones oldest first, with the approvals given so far. */
export const listApprovals = route({ role: requireRole('auditor'), query: approvalListQuerySchema }, async ({ app, query }) => ({
  approvals: await app.approvals.toJson(await app.approvals.list(query)),
}));

/**
 * One approval request with the approvals given so far. A read: a request past its expiry shows as expired. With
 * `wait` (seconds, at most 60) it answers once the request is no longer pending, or when the wait (or the request's
 * own expiry) is up, as it stands then (lib/approvals/wait.ts). Auditors and above read any request; the one who asked
 * (an agent's token, or a person) reads its own, and may wait for it, as may an operator. Anyone else is told there is
 * no such request.
 */
export const getApproval = route(
  { role: requireRole('viewer'), scope: 'none', params: approvalIdSchema, query: approvalReadQuerySchema },
  async ({ app, params, query, principal, request }) => {
    const wait = query.wait ?? 0;
    const person = principal.kind === 'user' ? principal.role : undefined;
    const mayRead = (row: ApprovalRow) => row.requestedBy === requesterOf(principal) || (person !== undefined && isRoleAtLeast(person, wait > 0 ? 'operator' : 'auditor'));
    const first = await app.approvals.get(params.id);
    if (!first || !mayRead(first)) throw new AppError('NOT_FOUND', `There is no approval "${params.id}".`);
    const row =
      wait > 0
        ? await app.approvalWaits.until(
            () => app.approvals.get(params.id),
            (r) => r === undefined || r.status !== 'pending',
            wait,
            request.signal,
            (r) => (r ? r.expiresAt * 1000 + 50 : 0),
          )
        : first;
    if (!row) throw new AppError('NOT_FOUND', `There is no approval "${params.id}".`);
    return (await app.approvals.toJson([row]))[0];
  },
);

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
