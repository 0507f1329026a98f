/**
 * The Next.js server's own metrics (its registry as JSON), for the decision listener that serves GET /metrics with both
 * processes merged. Not part of the API: it answers only with the secret of this start (lib/ops/internal.ts), and the
 * listener never forwards /internal/ from outside; anything else is a plain 404.
 */
import { INTERNAL_SECRET_HEADER, internalSecretMatches } from '@/lib/ops/internal';
import { processMetrics } from '@/lib/ops/metrics';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export async function GET(request: Request): Promise<Response> {
  if (!internalSecretMatches(request.headers.get(INTERNAL_SECRET_HEADER))) return new Response('Not found', { status: 404 });
  return Response.json(await processMetrics().registry.getMetricsAsJSON(), { headers: { 'cache-control': 'no-store' } });
}
