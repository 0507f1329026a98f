import { AppError } from '@/lib/errors';
import { requireRole, route } from '@/lib/http/route';
import { approvalIdSchema } from '@/lib/http/schemas';

export const dynamic = 'force-dynamic';

/** One approval request with the approvals given so far. A read: a request past its expiry shows as expired. */
export const GET = route({ role: requireRole('auditor'), params: approvalIdSchema }, async ({ app, params }) => {
  const row = await app.approvals.get(params.id);
  if (!row) throw new AppError('NOT_FOUND', `There is no approval "${params.id}".`);
  return (await app.approvals.toJson([row]))[0];
});
