import { requireRole, route, Reply } from '@/lib/http/route';
import { readiness } from '@/lib/ops/ready';

export const dynamic = 'force-dynamic';

/**
 * Readiness, public on purpose (load balancers and orchestrators probe it without a token): 200 when the database
 * takes writes, the configuration loaded without error and the background work runs; 503 with the reason otherwise.
 */
export const GET = route({ role: requireRole('anonymous') }, async ({ app }) => {
  const r = await readiness(app);
  return new Reply({ status: r.ready ? 'ready' : 'not_ready', ...(r.reason ? { reason: r.reason } : {}), checks: r.checks }, { status: r.ready ? 200 : 503 });
});
