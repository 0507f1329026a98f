/**
 * The decision path of the check API, shared by `POST /api/v1/permissions/check`, its batch form and the AuthZEN
 * evaluation endpoints: one input shape, one answer shape, and batches committed as one transaction.
 */
import type { App } from '@/lib/app';
import type { PgSwarmApp } from '@/lib/pg-app';
import { isPromise, PRIORITY, ruleSourceOf, type CheckInput, type CheckResult, type HookOutcome, type Principal, type ToolContext } from '@/lib/permissions';
import type { PreparedCall } from '@/lib/permissions/engine';
import { hookSummary } from '@/lib/hooks/summary';
import { announceWrite } from '@/db/write-intent';

export interface CheckRequest {
  agent: string;
  tool: string;
  arguments: Record<string, unknown>;
  tool_call_id?: string;
  dry_run: boolean;
}

/** The engine's input for a tool call checked by `principal`. */
export function toolInput(principal: Principal, c: Omit<CheckRequest, 'dry_run'>): ToolContext {
  return { kind: 'tool', principal, agent: c.agent, tool: c.tool, arguments: c.arguments, toolCallId: c.tool_call_id };
}

/** One check as the API answers it. */
export function checkAnswer(r: CheckResult, dryRun: boolean) {
  const changedBy = r.argumentsChangedBy ?? NO_HOOKS;
  return {
    // joins the caller's log line to the audit row (null for a dry run, which records nothing)
    decision_id: r.decisionId ?? null,
    decision: r.decision,
    rule_source: r.ruleSource,
    reason: r.reason,
    approval_id: r.approvalId ?? null,
    recorded: !dryRun && r.decision === 'DENY',
    // The hooks that rewrote the arguments, and the arguments the call was decided on: the ones to run it with.
    arguments_changed_by: changedBy,
    // nothing runs after a DENY: no arguments to run it with
    arguments: changedBy.length > 0 && r.decision !== 'DENY' ? (r.arguments ?? null) : null,
    hooks: r.hooks ? r.hooks.map(hookAnswer) : NO_HOOKS,
    trace: traceAnswer(r),
  };
}

/** The rules of the trace, then what each before_tool_call hook did (a block that decided is among the rules already). */
function traceAnswer(r: CheckResult) {
  const trace: { decision: string; priority: number; rule_source: string; reason: string }[] = r.trace.map((t) => ({
    decision: t.decision,
    priority: t.priority,
    rule_source: ruleSourceOf(t.attribution),
    reason: t.reason,
  }));
  if (!r.hooks) return trace;
  for (const h of r.hooks) {
    if (h.blocks && r.ruleSource === `hook:${h.hook}`) continue;
    trace.push({ decision: h.blocks ? 'DENY' : 'ALLOW', priority: PRIORITY.hook, rule_source: `hook:${h.hook}`, reason: hookSummary(h) });
  }
  return trace;
}

function hookAnswer(h: HookOutcome) {
  return { hook: h.hook, event: h.event, action: h.action, outcome: h.outcome, blocks: h.blocks === true, reason: h.reason ?? null, changed: h.changed ?? [], ms: h.ms ?? null };
}

export type CheckAnswer = ReturnType<typeof checkAnswer>;

const NO_HOOKS: readonly never[] = Object.freeze([]);

/**
 * Decide one check (or only ask the question, for a dry run: no hook runs and nothing is recorded). A plain result when
 * no hook of the call had to be waited for, else a promise of it.
 */
export function decideCheck(app: App, principal: Principal, c: CheckRequest, ip: string | undefined): CheckResult | Promise<CheckResult> {
  const input = toolInput(principal, c);
  if (app.kind === 'postgres') return c.dry_run ? app.engine.checkAsync(input) : app.engine.decideAsync(input, { ip });
  if (c.dry_run) return app.engine.check(input);
  const prepared = app.engine.prepare(input, { sync: app.decisionsHoldTransaction });
  return isPromise<PreparedCall>(prepared) ? prepared.then((p) => app.engine.commit(p, { ip })) : app.engine.commit(prepared, { ip });
}

/**
 * Decide several checks in order inside one transaction: their denials, approval requests and consumptions are
 * committed together, before any answer leaves; a failure to record any of them refuses the whole batch (nothing of
 * it is acknowledged or kept). The hooks of every call run first, in order, outside the transaction (a webhook is
 * never waited for with the database locked). `stop(result)` ends the batch early (AuthZEN's evaluation semantics).
 */
export async function decideBatch(app: App, inputs: readonly (CheckInput | { dryRun: CheckInput })[], ip: string | undefined, stop?: (r: CheckResult) => boolean): Promise<CheckResult[]> {
  if (app.kind === 'postgres') return decideBatchPg(app, inputs, ip, stop);
  const prepared: (PreparedCall | { dryRun: CheckInput })[] = [];
  for (const input of inputs) {
    if ('dryRun' in input) prepared.push(input);
    else {
      const p = app.engine.prepare(input, { sync: app.decisionsHoldTransaction });
      prepared.push(p instanceof Promise ? await p : p);
    }
  }
  const run = () => {
    const out: CheckResult[] = [];
    for (const p of prepared) {
      const r = 'dryRun' in p ? app.engine.check(p.dryRun) : app.engine.commit(p, { ip });
      out.push(r);
      if (stop?.(r)) break;
    }
    return out;
  };
  // IMMEDIATE: the write lock first, so that a read that turns into a write cannot fail on another writer's commit.
  // In the decision listener's group commit, the batch joins the group's transaction (announced: it opens it).
  announceWrite(app.db.$client);
  try {
    return app.db.$client.transaction(run).immediate();
  } catch (error) {
    app.forgetUncommitted();
    throw error;
  }
}

/**
 * A batch on PostgreSQL: decided in order, each decision committed (its denial durable, its approval requested) before
 * the next, and the answer only after the last. Unlike SQLite's batch, the decisions are not one transaction: a failure
 * to record one refuses the batch (500, nothing acknowledged), but the decisions before it stay recorded.
 */
async function decideBatchPg(app: PgSwarmApp, inputs: readonly (CheckInput | { dryRun: CheckInput })[], ip: string | undefined, stop?: (r: CheckResult) => boolean): Promise<CheckResult[]> {
  const prepared: (PreparedCall | { dryRun: CheckInput })[] = [];
  for (const input of inputs) prepared.push('dryRun' in input ? input : await app.engine.prepare(input));
  const out: CheckResult[] = [];
  for (const p of prepared) {
    const r = 'dryRun' in p ? await app.engine.checkAsync(p.dryRun) : await app.engine.commitAsync(p, { ip });
    out.push(r);
    if (stop?.(r)) break;
  }
  return out;
}
