/**
 * The TypeScript agent runtime: an agent calls its tools through the engine. ALLOW runs the tool (with the arguments
 * the before_tool_call hooks left, and the after_tool_call hooks hear how it went); DENY throws
 * PermissionDenied; ASK throws ApprovalRequired, and the call waits in the approval store with its canonical
 * arguments. On the next turn, resume() re-runs the calls approved since, reports the rejected and expired ones with
 * their reasons, and never runs a call twice. Everything it needs is in the store, not in this process's memory: a
 * runtime started after a restart settles what its predecessor asked for.
 */
import { requesterOf } from '@/lib/approvals/store';
import type { PermissionEngine, Principal } from '@/lib/permissions';
import type { ApprovalStore } from '@/lib/approvals/store';
import type { PgApprovalStore } from '@/lib/approvals/pg-store';
import { AppError } from '@/lib/errors';
import type { ToolDefinition } from './tool';

export type ResumeOutcome =
  | { approvalId: string; tool: string; status: 'ran'; result: unknown }
  | { approvalId: string; tool: string; status: 'rejected' | 'expired'; reason: string }
  | { approvalId: string; tool: string; status: 'failed'; error: string };

export class AgentRuntime {
  private readonly tools: ReadonlyMap<string, ToolDefinition>;
  readonly principal: Principal;

  constructor(
    private readonly engine: PermissionEngine,
    /** the application's approval store, on either database */
    private readonly approvals: Pick<ApprovalStore | PgApprovalStore, 'outcomesFor' | 'markReported'>,
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
    const allowed = await this.engine.enforceAsync(input);
    // A before_tool_call hook may have rewritten the arguments: the call runs with what was decided, and checked again.
    const runWith = allowed.arguments ? (def.schema.parse(allowed.arguments) as Record<string, unknown>) : canonical;
    const finished = { context: { ...input, arguments: runWith }, decisionId: allowed.decisionId };
    let result: unknown;
    try {
      result = await def.run(runWith);
    } catch (error) {
      this.engine.finished({ ...finished, outcome: 'failed', error: error instanceof Error ? error.message : String(error) });
      throw error;
    }
    this.engine.finished({ ...finished, outcome: 'succeeded', result });
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
        const args = JSON.parse(row.argumentsCanonical) as Record<string, unknown>;
        try {
          outcomes.push({ approvalId: row.id, tool: row.toolName, status: 'ran', result: await this.call(row.toolName, args, row.toolCallId ?? undefined) });
        } catch (error) {
          outcomes.push({ approvalId: row.id, tool: row.toolName, status: 'failed', error: error instanceof Error ? error.message : String(error) });
        }
        continue;
      }
      if (!(await this.approvals.markReported(row.id))) continue;
      const status = row.status === 'rejected' ? 'rejected' : 'expired';
      outcomes.push({ approvalId: row.id, tool: row.toolName, status, reason: status === 'expired' ? 'The request expired before anyone decided it.' : (row.decisionReason ?? status) });
    }
    return outcomes;
  }
}
