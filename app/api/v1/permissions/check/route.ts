import { checkAnswer, decideCheck } from '@/lib/decisions/check';
import { isPromise, type CheckResult } from '@/lib/permissions';
import { requireRole, route } from '@/lib/http/route';
import { checkBodyFast, checkBodySchema } from '@/lib/http/schemas';

export const dynamic = 'force-dynamic';

/**
 * Decide one tool call for an agent. A DENY is recorded before this answers; an ASK returns the approval id; once an
 * operator approved this exact call, the next check answers ALLOW, exactly once. `dry_run` only asks the question.
 * Every answer carries the decision_id of its audit row; a decision that cannot be recorded is refused (503). The
 * before_tool_call hooks (config/hooks.yaml) may block the call or rewrite its arguments: `arguments_changed_by` names
 * them and `arguments` is what the call must run with; `hooks` says what each did. A dry run runs no hook.
 */
export const POST = route({ role: requireRole('viewer'), body: checkBodySchema, fastBody: checkBodyFast }, ({ app, principal, body, ip }) => {
  const r = decideCheck(app, principal, body, ip);
  return isPromise<CheckResult>(r) ? r.then((x) => checkAnswer(x, body.dry_run)) : checkAnswer(r, body.dry_run);
});
