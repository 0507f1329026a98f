/**
 * The approval store. States: pending -> approved | rejected | expired; approved -> consumed. Every transition is a
 * conditional UPDATE on the current state, so concurrent operators, retried requests and racing agents leave exactly
 * one outcome. Rows are never deleted (a trigger refuses it).
 */
import { randomBytes } from 'node:crypto';
import { and, asc, desc, eq, lte, ne, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { approvals, type ApprovalRow } from '../../db/schema';
import type { ApprovalState } from '../permissions';
import { AppError } from '../errors';
import { redact } from '../audit/redact';
import { canonicalJson, hashArguments } from './canonical';

export type ApprovalStatusValue = ApprovalRow['status'];

export interface ApprovalRequest {
  gate: string;
  agent: string;
  tool: string;
  arguments: Readonly<Record<string, unknown>>;
  toolCallId?: string;
  requestedBy: string;
  ruleSource: string;
  reason: string;
  expiresInSeconds: number;
}

/** Called for each approval that turned into a denial (rejected or expired), inside the same transaction. */
export type DeniedApprovalListener = (row: ApprovalRow) => void;

const now = () => Date.now() / 1000;

export function newApprovalId(): string {
  return `apr_${randomBytes(12).toString('base64url')}`;
}

export class ApprovalStore {
  constructor(
    private readonly db: Db,
    private readonly onDenied: DeniedApprovalListener = () => {},
  ) {}

  get(id: string): ApprovalRow | undefined {
    return this.db.select().from(approvals).where(eq(approvals.id, id)).get();
  }

  /**
   * The state of this exact call for the engine: the newest approval for (agent, tool, arguments) decides.
   * A consumed approval is spent (the call asks again); a rejection or expiry denies the same call until it is
   * older than its gate's expiry window, then the call may ask again.
   */
  stateFor(agent: string, tool: string, args: unknown, ttlSeconds: number): ApprovalState {
    const hash = hashArguments(args);
    let row = this.newestFor(agent, tool, hash);
    if (row?.status === 'pending' && row.expiresAt <= now()) {
      // Only a request past its expiry needs a write; the common path is one indexed read.
      this.expireDue({ id: row.id });
      row = this.get(row.id);
    }
    if (!row || row.status === 'consumed') return { status: 'none' };
    if ((row.status === 'rejected' || row.status === 'expired') && (row.decidedAt ?? 0) + ttlSeconds < now()) {
      return { status: 'none' };
    }
    return { status: row.status, id: row.id, reason: row.decisionReason ?? undefined };
  }

  private newestFor(agent: string, tool: string, hash: string): ApprovalRow | undefined {
    return this.db
      .select()
      .from(approvals)
      .where(and(eq(approvals.agentName, agent), eq(approvals.toolName, tool), eq(approvals.argumentsHash, hash)))
      .orderBy(desc(approvals.requestedAt), desc(approvals.id))
      .limit(1)
      .get();
  }

  /**
   * Create the pending approval of this call, or return the one that is already pending for it. One immediate
   * transaction: a read, and a write only when a new request is needed (an expired one is closed first).
   */
  request(r: ApprovalRequest): ApprovalRow {
    const hash = hashArguments(r.arguments);
    return this.db.transaction(
      (tx) => {
        const at = now();
        const samePending = and(eq(approvals.agentName, r.agent), eq(approvals.toolName, r.tool), eq(approvals.argumentsHash, hash), eq(approvals.status, 'pending'));
        const existing = tx.select().from(approvals).where(samePending).get();
        if (existing && existing.expiresAt > at) return existing;
        if (existing) {
          const expired = tx
            .update(approvals)
            .set({ status: 'expired', decidedBy: 'system', decidedAt: at, decisionReason: 'Expired before an operator decided it.' })
            .where(and(eq(approvals.id, existing.id), eq(approvals.status, 'pending')))
            .returning()
            .get();
          if (expired) this.onDenied(expired);
        }
        return tx
          .insert(approvals)
          .values({
            id: newApprovalId(),
            gate: r.gate,
            agentName: r.agent,
            toolName: r.tool,
            argumentsCanonical: canonicalJson(r.arguments),
            argumentsRedacted: JSON.stringify(redact(r.arguments)),
            argumentsHash: hash,
            toolCallId: r.toolCallId ?? null,
            requestedBy: r.requestedBy,
            requestedAt: at,
            expiresAt: at + r.expiresInSeconds,
            ruleSource: r.ruleSource,
            reason: r.reason,
            status: 'pending',
          })
          .returning()
          .get();
      },
      { behavior: 'immediate' },
    );
  }

  /** approved -> consumed, exactly once. False when the approval was not (or no longer) approved. */
  consume(id: string): boolean {
    const res = this.db
      .update(approvals)
      .set({ status: 'consumed', consumedAt: now() })
      .where(and(eq(approvals.id, id), eq(approvals.status, 'approved')))
      .run();
    return res.changes === 1;
  }

  approve(id: string, by: string, reason?: string): ApprovalRow {
    return this.decide(id, 'approved', by, reason ?? null);
  }

  reject(id: string, by: string, reason: string): ApprovalRow {
    if (!reason.trim()) throw new AppError('BAD_REQUEST', 'A rejection needs a reason; it is sent back to the agent.');
    return this.decide(id, 'rejected', by, reason);
  }

  private decide(id: string, to: 'approved' | 'rejected', by: string, reason: string | null): ApprovalRow {
    this.expireDue({ id });
    return this.db.transaction(
      (tx) => {
        const row = tx.select().from(approvals).where(eq(approvals.id, id)).get();
        if (!row) throw new AppError('NOT_FOUND', `There is no approval "${id}".`);
        if (row.requestedBy === by) {
          throw new AppError('FORBIDDEN', 'Separation of duties: the principal who requested a call cannot decide its approval.');
        }
        const updated = tx
          .update(approvals)
          .set({ status: to, decidedBy: by, decidedAt: now(), decisionReason: reason })
          .where(and(eq(approvals.id, id), eq(approvals.status, 'pending')))
          .returning()
          .get();
        if (!updated) {
          const current = tx.select().from(approvals).where(eq(approvals.id, id)).get()!;
          throw new AppError(
            'CONFLICT',
            `Approval ${id} is already ${current.status}${current.decidedBy ? ` (by ${current.decidedBy})` : ''}.`,
            { status: current.status, decided_by: current.decidedBy, decided_at: current.decidedAt },
          );
        }
        if (to === 'rejected') this.onDenied(updated);
        return updated;
      },
      { behavior: 'immediate' },
    );
  }

  /** pending -> expired for every approval past its expiry (optionally one call or one id); each becomes a denial. */
  expireDue(scope: { agent?: string; tool?: string; hash?: string; id?: string } = {}): number {
    const c: SQL[] = [eq(approvals.status, 'pending'), lte(approvals.expiresAt, now())];
    if (scope.id) c.push(eq(approvals.id, scope.id));
    if (scope.agent) c.push(eq(approvals.agentName, scope.agent));
    if (scope.tool) c.push(eq(approvals.toolName, scope.tool));
    if (scope.hash) c.push(eq(approvals.argumentsHash, scope.hash));
    const at = now();
    return this.db.transaction((tx) => {
      const expired = tx
        .update(approvals)
        .set({ status: 'expired', decidedBy: 'system', decidedAt: at, decisionReason: 'Expired before an operator decided it.' })
        .where(and(...c))
        .returning()
        .all();
      for (const row of expired) this.onDenied(row);
      return expired.length;
    });
  }

  list(filter: { status?: ApprovalStatusValue | 'decided'; gate?: string; agent?: string; decided_by?: string; limit?: number } = {}): ApprovalRow[] {
    this.expireDue();
    const c: SQL[] = [];
    if (filter.status === 'decided') c.push(ne(approvals.status, 'pending'));
    else if (filter.status) c.push(eq(approvals.status, filter.status));
    if (filter.decided_by) c.push(eq(approvals.decidedBy, filter.decided_by));
    if (filter.gate) c.push(eq(approvals.gate, filter.gate));
    if (filter.agent) c.push(eq(approvals.agentName, filter.agent));
    // The queue is oldest first (who waited longest); the history newest decision first.
    const pendingFirst = filter.status === 'pending';
    return this.db
      .select()
      .from(approvals)
      .where(c.length ? and(...c) : undefined)
      .orderBy(pendingFirst ? asc(approvals.requestedAt) : desc(sql`coalesce(${approvals.decidedAt}, ${approvals.requestedAt})`))
      .limit(filter.limit ?? 200)
      .all();
  }
}

const OUTCOME: Record<ApprovalStatusValue, string> = {
  pending: 'waiting for an operator',
  approved: 'approved, not yet run',
  consumed: 'approved and run',
  rejected: 'rejected',
  expired: 'expired',
};

export function approvalToJson(row: ApprovalRow) {
  return {
    id: row.id,
    gate: row.gate,
    status: row.status,
    outcome: OUTCOME[row.status],
    agent: row.agentName,
    tool: row.toolName,
    arguments: JSON.parse(row.argumentsRedacted) as unknown,
    arguments_hash: row.argumentsHash,
    tool_call_id: row.toolCallId,
    requested_by: row.requestedBy,
    requested_at: row.requestedAt,
    expires_at: row.expiresAt,
    rule_source: row.ruleSource,
    reason: row.reason,
    decided_by: row.decidedBy,
    decided_at: row.decidedAt,
    decision_reason: row.decisionReason,
    consumed_at: row.consumedAt,
  };
}
