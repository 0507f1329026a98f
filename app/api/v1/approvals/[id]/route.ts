import { approvalToJson } from '../../../../../lib/approvals/store';
import { AppError } from '../../../../../lib/errors';
import { requireRole, route } from '../../../../../lib/http/route';
import { approvalIdSchema } from '../../../../../lib/http/schemas';

export const dynamic = 'force-dynamic';

export const GET = route({ role: requireRole('auditor'), params: approvalIdSchema }, ({ app, params }) => {
  app.approvals.expireDue({ id: params.id });
  const row = app.approvals.get(params.id);
  if (!row) throw new AppError('NOT_FOUND', `There is no approval "${params.id}".`);
  return approvalToJson(row);
});
