import { evaluate, evaluateMany, evaluationSchema, evaluationsSchema, withRequestId } from '@/lib/decisions/authzen';
import { AppError } from '@/lib/errors';
import { requireRole, route } from '@/lib/http/route';

export const dynamic = 'force-dynamic';

/**
 * AuthZEN Access Evaluations API 1.0: up to 1,000 evaluations in order, one transaction, with
 * options.evaluations_semantic (execute_all, deny_on_first_deny, permit_on_first_permit). Without `evaluations` it
 * is one evaluation of the top-level subject, action and resource.
 */
export const POST = route({ role: requireRole('viewer'), body: evaluationsSchema, maxBodyBytes: 4 * 1024 * 1024 }, async ({ app, principal, body, ip, header }) => {
  if (body.evaluations && body.evaluations.length > 0) return withRequestId(header, await evaluateMany(app, principal, body, ip));
  const single = evaluationSchema.safeParse(body);
  if (!single.success) throw new AppError('BAD_REQUEST', 'Without evaluations, the request is one evaluation: subject, action and resource are required.');
  return withRequestId(header, await evaluate(app, principal, single.data, ip));
});
