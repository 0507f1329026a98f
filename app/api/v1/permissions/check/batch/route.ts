import { checkAnswer, decideBatch, toolInput } from '@/lib/decisions/check';
import { requireRole, route } from '@/lib/http/route';
import { batchCheckBodyFast, batchCheckBodySchema } from '@/lib/http/schemas';

export const dynamic = 'force-dynamic';

/**
 * Decide up to 1,000 tool calls in one request, answered in order, each with its decision id. The batch is one
 * transaction: its denials (and approval requests) are committed together before the answer, and a batch that cannot
 * be recorded is refused as a whole (503), nothing of it acknowledged. The calls' before_tool_call hooks run first, in
 * order, outside the transaction.
 */
export const POST = route({ role: requireRole('viewer'), body: batchCheckBodySchema, fastBody: batchCheckBodyFast, maxBodyBytes: 4 * 1024 * 1024 }, async ({ app, principal, body, ip }) => {
  const inputs = body.checks.map((c) => (c.dry_run ? { dryRun: toolInput(principal, c) } : toolInput(principal, c)));
  const results = await decideBatch(app, inputs, ip);
  return { results: results.map((r, i) => checkAnswer(r, body.checks[i]!.dry_run)) };
});
