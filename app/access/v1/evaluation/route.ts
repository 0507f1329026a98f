import { evaluate, evaluationSchema, withRequestId } from '@/lib/decisions/authzen';
import { requireRole, route } from '@/lib/http/route';

export const dynamic = 'force-dynamic';

/** AuthZEN Access Evaluation API 1.0: one decision, recorded like a check (see lib/decisions/authzen.ts). */
export const POST = route({ role: requireRole('viewer'), body: evaluationSchema }, async ({ app, principal, body, ip, header }) =>
  withRequestId(header, await evaluate(app, principal, body, ip)),
);
