/** What operators and orchestrators ask: liveness, readiness, and the API's own description. */
import { readiness } from '@/lib/ops/ready';
import { Reply, requireRole, route } from '../route';

/** Liveness, public on purpose. */
export const checkHealth = route({ role: requireRole('anonymous') }, () => ({ status: 'ok' }));

/**
 * Readiness, public on purpose (load balancers and orchestrators probe it without a token): 200 when the database
 * takes writes, the configuration loaded without error and the background work runs; 503 with the reason otherwise.
 */
export const checkReadiness = route({ role: requireRole('anonymous') }, async ({ app }) => {
  const r = await readiness(app);
  return new Reply({ status: r.ready ? 'ready' : 'not_ready', ...(r.reason ? { reason: r.reason } : {}), checks: r.checks }, { status: r.ready ? 200 : 503 });
});

/**
 * The OpenAPI 3.1 document of this API, generated from the route table's roles and zod schemas; public on purpose.
 * The document reads the route table, which lists this route: the table gives it (the route definitions never import
 * the table; tests/architecture.test.ts).
 */
export const openApiRoute = (document: () => unknown) => route({ role: requireRole('anonymous') }, async () => document());
