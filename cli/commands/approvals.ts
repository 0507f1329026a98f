/** swarm approvals list|approve|reject: the human-in-the-loop queue (SQLite or PostgreSQL). Deciding needs an operator or admin (--as). */
import type { ApprovalRow } from '@/db/schema';
import { decidersOf } from '@/lib/approvals/store';
import { approvalIdSchema, approvalListQuerySchema, approveBodySchema, rejectBodySchema } from '@/lib/http/schemas';
import { expectPositionals, givenValues, parseCommand, parseOptions, requireOption, runSubcommand, validate, valueOptions } from '@/cli/args';
import { actAs, withAnyApp, type CliContext } from '@/cli/context';
import { cell, isoTime, printJson, printTable } from '@/cli/format';

export function approvalsCommand(ctx: CliContext, sub: string | undefined, args: string[]): Promise<number> {
  return runSubcommand(ctx, 'approvals', sub, args, { list, approve: (c, a) => decide(c, 'approve', a), reject: (c, a) => decide(c, 'reject', a) });
}

function list(ctx: CliContext, args: string[]): Promise<number> {
  const values = parseOptions(args, { ...valueOptions('status', 'gate', 'agent', 'decided-by', 'limit'), json: { type: 'boolean' } });
  const given = givenValues(values, ['status', 'gate', 'agent', 'limit']);
  const query = validate(approvalListQuerySchema, { ...given, ...(values['decided-by'] ? { decided_by: values['decided-by'] } : {}) });
  return withAnyApp(ctx, async (app) => {
    const rows = await app.approvals.list(query);
    if (values.json) return printJson(ctx.io, { approvals: await app.approvals.toJson(rows) });
    // Both people of a two-person decision, in order.
    const votes = await app.approvals.votesFor(rows.map((r) => r.id));
    printTable(
      ctx.io,
      'No approvals match.\n',
      ['ID', 'STATUS', 'GATE', 'AGENT', 'TOOL', 'REQUESTED (UTC)', 'EXPIRES (UTC)', 'DECIDED BY', 'REASON'],
      rows.map((r) => [
        r.id,
        r.status,
        cell(r.gate, 30),
        cell(r.agentName, 40),
        cell(r.toolName, 40),
        isoTime(r.requestedAt),
        isoTime(r.expiresAt),
        cell(decidersOf(r, votes.get(r.id) ?? []).join(', then '), 40),
        cell(r.decisionReason ?? r.reason, 60),
      ]),
    );
    return 0;
  });
}

function decide(ctx: CliContext, action: 'approve' | 'reject', args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, { as: { type: 'string' }, reason: { type: 'string' } });
  const [id] = expectPositionals(positionals, ['ID']);
  validate(approvalIdSchema, { id }, () => 'ID');
  const as = requireOption(values.as, '--as', 'the operator or admin who decides');
  const reason =
    action === 'approve'
      ? validate(approveBodySchema, values.reason === undefined ? {} : { reason: values.reason }).reason
      : validate(rejectBodySchema, { reason: requireOption(values.reason, '--reason', 'it is sent back to the agent') }).reason;
  return withAnyApp(ctx, async (app) => {
    // The same check as POST /api/v1/approvals/{id}/approve|reject, for the acting user.
    const principal = await actAs(app, as, { method: 'POST', path: `/api/v1/approvals/${id}/${action}`, role: 'operator' });
    const row: ApprovalRow = action === 'approve' ? await app.approvals.approve(id!, principal, reason) : await app.approvals.reject(id!, principal, reason!);
    if (row.status === 'pending') {
      const given = (await app.approvals.votesFor([row.id])).get(row.id)?.length ?? 0;
      ctx.io.out(`Approval ${given} of ${row.approvalsRequired} given for ${row.id}: ${cell(row.toolName)} for agent ${cell(row.agentName)} (gate ${cell(row.gate)}), by ${principal.id}. Another person must approve it too.\n`);
      return 0;
    }
    const verb = action === 'approve' ? 'Approved' : 'Rejected';
    ctx.io.out(`${verb} ${row.id}: ${cell(row.toolName)} for agent ${cell(row.agentName)} (gate ${cell(row.gate)}), by ${principal.id}.\n`);
    if (action === 'reject') ctx.io.out('The rejection is recorded as a denial.\n');
    return 0;
  });
}
