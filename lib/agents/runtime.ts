/**
 * The TypeScript agent runtime: an agent calls its tools through the engine. ALLOW runs the tool; DENY throws
 * PermissionDenied; ASK stores the call and throws ApprovalRequired. On the next turn, resume() re-runs the calls
 * approved since, reports the rejected and expired ones with their reasons, and never runs a call twice.
 */
import { ApprovalRequired, type PermissionEngine, type Principal } from '@/lib/permissions';
import type { ApprovalStore } from '@/lib/approvals/store';
import { AppError } from '@/lib/errors';
import type { ToolDefinition } from './tool';

export interface PendingCall {
  approvalId: string;
  tool: string;
  arguments: Record<string, unknown>;
  toolCallId?: string;
}

export type ResumeOutcome =
  | { approvalId: string; tool: string; status: 'ran'; result: unknown }
  | { approvalId: string; tool: string; status: 'rejected' | 'expired'; reason: string }
  | { approvalId: string; tool: string; status: 'failed'; error: string };

export class AgentRuntime {
  private readonly tools: ReadonlyMap<string, ToolDefinition>;
  private readonly pending = new Map<string, PendingCall>();
  readonly principal: Principal;

  constructor(
    private readonly engine: PermissionEngine,
    private readonly approvals: ApprovalStore,
    readonly agent: string,
    tools: readonly ToolDefinition[],
    principal?: Principal,
  ) {
    this.tools = new Map(tools.map((t) => [t.name, t]));
    this.principal = principal ?? { kind: 'agent', id: agent, role: 'viewer', agent };
  }

  pendingCalls(): PendingCall[] {
    return [...this.pending.values()];
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
    try {
      this.engine.enforce({ kind: 'tool', principal: this.principal, agent: this.agent, tool: toolName, arguments: canonical, toolCallId });
    } catch (error) {
      if (error instanceof ApprovalRequired) {
        this.pending.set(error.approvalId, { approvalId: error.approvalId, tool: toolName, arguments: canonical, toolCallId });
      }
      throw error;
    }
    return def.run(canonical);
  }

  /** The next turn: settle every stored call whose approval was decided since. */
  async resume(): Promise<ResumeOutcome[]> {
    const outcomes: ResumeOutcome[] = [];
    for (const call of [...this.pending.values()]) {
      this.approvals.expireDue({ id: call.approvalId });
      const row = this.approvals.get(call.approvalId);
      if (!row || row.status === 'pending') continue;
      this.pending.delete(call.approvalId);
      if (row.status === 'rejected' || row.status === 'expired') {
        outcomes.push({ approvalId: call.approvalId, tool: call.tool, status: row.status, reason: row.decisionReason ?? row.status });
        continue;
      }
      if (row.status === 'consumed') {
        outcomes.push({ approvalId: call.approvalId, tool: call.tool, status: 'failed', error: 'The approval was already used by another run of this call.' });
        continue;
      }
      try {
        outcomes.push({ approvalId: call.approvalId, tool: call.tool, status: 'ran', result: await this.call(call.tool, call.arguments, call.toolCallId) });
      } catch (error) {
        outcomes.push({ approvalId: call.approvalId, tool: call.tool, status: 'failed', error: error instanceof Error ? error.message : String(error) });
      }
    }
    return outcomes;
  }
}
