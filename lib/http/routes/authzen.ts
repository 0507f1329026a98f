/**
 * The OpenID AuthZEN Authorization API 1.0 (lib/decisions/authzen.ts): one evaluation, many, and the PDP's metadata.
 */
import { evaluate, evaluateMany, evaluationSchema, evaluationsSchema, metadata, publicBase, withRequestId } from '@/lib/decisions/authzen';
import { AppError } from '@/lib/errors';
import { requireRole, route } from '../route';
import type { DeclaredRoutes } from '../route-entry';

/**
 * The evaluations, given what the product's own routes declare (the route table gives it: it lists these routes, so
 * they cannot load it).
 */
export function authzenEvaluations(routes: DeclaredRoutes) {
  /** AuthZEN Access Evaluation API 1.0: one decision, recorded like a check. */
  const evaluateAccess = route({ role: requireRole('viewer'), scope: 'decide', body: evaluationSchema }, async ({ app, principal, body, ip, header }) =>
    withRequestId(header, await evaluate(app, principal, body, ip, routes)),
  );

  /**
   * AuthZEN Access Evaluations API 1.0: up to 1,000 evaluations in order, one transaction, with
   * options.evaluations_semantic (execute_all, deny_on_first_deny, permit_on_first_permit). Without `evaluations` it
   * is one evaluation of the top-level subject, action and resource.
   */
  const evaluateAccessMany = route({ role: requireRole('viewer'), scope: 'decide', body: evaluationsSchema, maxBodyBytes: 4 * 1024 * 1024 }, async ({ app, principal, body, ip, header }) => {
    if (body.evaluations && body.evaluations.length > 0) return withRequestId(header, await evaluateMany(app, principal, body, ip, routes));
    const single = evaluationSchema.safeParse(body);
    if (!single.success) throw new AppError('BAD_REQUEST', 'Without evaluations, the request is one evaluation: subject, action and resource are required.');
    return withRequestId(header, await evaluate(app, principal, single.data, ip, routes));
  });

  return { evaluateAccess, evaluateAccessMany };
}

/** AuthZEN PDP metadata, public on purpose; served at /.well-known/authzen-configuration (a rewrite in next.config). */
export const getAuthzenConfiguration = route({ role: requireRole('anonymous') }, ({ app, request }) => metadata(publicBase(request, app.env)));
