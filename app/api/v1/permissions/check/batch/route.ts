import { checkAnswer, decideBatch, decideCheck } from '@/lib/decisions/check';
import { requireRole, route } from '@/lib/http/route';
import { batchCheckBodySchema } from '@/lib/http/schemas';

export const dynamic = 'force-dynamic';

/**
 * Decide up to 1,000 tool calls in one request, answered in order, each with its decision id. The batch is one
 * transaction: its denials (and approval requests) are committed together before the answer, and a batch that cannot
 * be recorded is refused as a whole (503), nothing of it acknowledged.
 */
export const POST = route({ role: requireRole('viewer'), body: batchCheckBodySchema, maxBodyBytes: 4 * 1024 * 1024 }, ({ app, principal, body, ip }) => {
  const results = decideBatch(app, body.checks, (c) => decideCheck(app, principal, c, ip));
  return { results: results.map((r, i) => checkAnswer(r, body.checks[i]!.dry_run)) };
});
