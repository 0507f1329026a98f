/**
 * The TypeScript agent runtime: an agent calls its tools through the engine. ALLOW runs the tool (with the arguments
 * the before_tool_call hooks left, and the after_tool_call hooks hear how it went); DENY throws
 * PermissionDenied; ASK throws ApprovalRequired, and the call waits in the approval store with its canonical
 * arguments. On the next turn, resume() re-runs the calls approved since, reports the rejected and expired ones with
 * their reasons, and never runs a call twice. What it needs is in the store, not in this process's memory, so a
 * runtime started after a restart settles what its predecessor asked for, with one exception: the store never keeps a
 * secret argument (a password, a token: lib/approvals/binding.ts), so the whole arguments of a call that had one are
 * remembered here, and after a restart such a call is reported `call_again` (the agent makes the call again with its
 * secrets; the approval waits for exactly that call).
 */
import { requesterOf } from '@/lib/approvals/store';
import { isComplete } from '@/lib/approvals/binding';
import { ApprovalRequired, enforced, type CheckInput, type CheckResult, type DecisionMeta, type Principal, type ToolCallFinished } from '@/lib/permissions';
import type { ApprovalStore } from '@/lib/approvals/store';
import { AppError, messageOf, isError } from '@/lib/errors';
import type { ToolDefinition } from './tool';

export type ResumeOutcome =
  | { approvalId: string; tool: string; status: 'ran'; result: unknown }
  | { approvalId: string; tool: string; status: 'rejected' | 'expired'; reason: string }
  | { approvalId: string; tool: string; status: 'failed'; error: string }
  /** approved, but its secret arguments are not stored (and this runtime did not ask it): make the call again */
  | { approvalId: string; tool: string; status: 'call_again'; reason: string };

/** How many asked calls with secret arguments a runtime remembers (the oldest are forgotten first). */
const REMEMBERED_CALLS = 1_000;

/** What the runtime needs of the decision service (lib/decisions/service.ts): to decide a call, and to report it ran. */
export interface RuntimeDecisions {
  decide(input: CheckInput, meta?: DecisionMeta): Promise<CheckResult>;
  finished(call: ToolCallFinished): void;
}

export class AgentRuntime {
  private readonly tools: ReadonlyMap<string, ToolDefinition>;
  readonly principal: Principal;
  /** the whole arguments of the calls this runtime asked whose secrets the store does not keep, by approval id */
  private readonly asked = new Map<string, Record<string, unknown>>();

  constructor(
    /** the application's decision service: the one way a call is decided */
    private readonly decisions: RuntimeDecisions,
    /** the application's approval store, on either database */
    private readonly approvals: Pick<ApprovalStore, 'outcomesFor' | 'markReported'>,
    readonly agent: string,
    tools: readonly ToolDefinition[],
    principal?: Principal,
  ) {
    this.tools = new Map(tools.map((t) => [t.name, t]));
    this.principal = principal ?? { kind: 'agent', id: agent, role: 'viewer', agent };
  }

  /** Validate the arguments, ask the engine, and run the tool if allowed. */
  async call(toolName: string, args: unknown, toolCallId?: string): Promise<unknown> {
    const def = this.tools.get(toolName);
    if (!def) throw new AppError('NOT_FOUND', `This runtime has no tool "${toolName}".`);
    const parsed = def.schema.safeParse(args);
    if (!parsed.success) {
      throw new AppError('BAD_REQUEST', `Arguments of "${toolName}" are not valid.`, parsed.error.issues);
    }
    const canonical = parsed.data as Record<string, unknown>;
    const input = { kind: 'tool' as const, principal: this.principal, agent: this.agent, tool: toolName, arguments: canonical, toolCallId };
    let allowed;
    try {
      allowed = enforced(await this.decisions.decide(input));
    } catch (error) {
      if (isError(error, ApprovalRequired) && error.approvalId && !isComplete(canonical)) this.remember(error.approvalId, canonical);
      throw error;
    }
    // A before_tool_call hook may have rewritten the arguments: the call runs with what was decided, and checked again.
    const runWith = allowed.arguments ? (def.schema.parse(allowed.arguments) as Record<string, unknown>) : canonical;
    const finished = { context: { ...input, arguments: runWith }, decisionId: allowed.decisionId };
    let result: unknown;
    try {
      result = await def.run(runWith);
    } catch (error) {
      this.decisions.finished({ ...finished, outcome: 'failed', error: messageOf(error) });
      throw error;
    }
    this.decisions.finished({ ...finished, outcome: 'succeeded', result });
    return result;
  }

  /**
   * The next turn: settle every call this agent asked for whose approval was decided since. Approved calls run once
   * (the engine consumes the approval: a second runtime resuming the same call asks again instead of running it);
   * rejections and expiries are reported once, to the first runtime that picks them up.
   */
  async resume(): Promise<ResumeOutcome[]> {
    const outcomes: ResumeOutcome[] = [];
    for (const row of await this.approvals.outcomesFor(this.agent, requesterOf(this.principal))) {
      if (row.status === 'approved') {
        const remembered = this.asked.get(row.id);
        const args = remembered ?? (JSON.parse(row.argumentsCanonical) as Record<string, unknown>);
        // (the stored arguments lack a secret when a secret key is in them: its value was redacted)
        if (!remembered && !isComplete(args)) {
          outcomes.push({ approvalId: row.id, tool: row.toolName, status: 'call_again', reason: 'Approved, but its secret arguments are not stored: make the call again with them (the approval waits for exactly that call).' });
          continue;
        }
        this.asked.delete(row.id);
        try {
          outcomes.push({ approvalId: row.id, tool: row.toolName, status: 'ran', result: await this.call(row.toolName, args, row.toolCallId ?? undefined) });
        } catch (error) {
          outcomes.push({ approvalId: row.id, tool: row.toolName, status: 'failed', error: messageOf(error) });
        }
        continue;
      }
      if (!(await this.approvals.markReported(row.id))) continue;
      const status = row.status === 'rejected' ? 'rejected' : 'expired';
      outcomes.push({ approvalId: row.id, tool: row.toolName, status, reason: status === 'expired' ? 'The request expired before anyone decided it.' : (row.decisionReason ?? status) });
    }
    return outcomes;
  }

  private remember(approvalId: string, args: Record<string, unknown>): void {
    if (this.asked.size >= REMEMBERED_CALLS) this.asked.delete(this.asked.keys().next().value!);
    this.asked.set(approvalId, args);
  }
}
