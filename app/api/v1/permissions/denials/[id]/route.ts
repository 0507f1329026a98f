import { denialToJson } from '@/lib/audit/denial-export';
import { AppError } from '@/lib/errors';
import { requireRole, route } from '@/lib/http/route';
import { idParamSchema } from '@/lib/http/schemas';

export const dynamic = 'force-dynamic';

/** One denial with the trace of its decision. */
export const GET = route({ role: requireRole('auditor'), params: idParamSchema }, async ({ app, params }) => {
  const row = await app.denials.get(Number(params.id));
  if (!row) throw new AppError('NOT_FOUND', `There is no denial ${params.id}.`);
  // A hook's entry carries a fifth element: what it did (and, for a rewrite, the hash of the arguments the agent sent).
  const trace = row.traceJson ? (JSON.parse(row.traceJson) as [string, number, string, string, Record<string, unknown>?][]) : null;
  return {
    ...denialToJson(row),
    trace: trace?.map(([decision, priority, rule_source, reason, hook]) => ({ decision, priority, rule_source, reason, ...(hook ? { hook } : {}) })) ?? null,
  };
});
