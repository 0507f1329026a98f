/**
 * The approval store. States: pending -> approved | rejected | expired; approved -> consumed. Every transition is a
 * conditional UPDATE on the current state, so concurrent operators, retried requests and racing agents leave exactly
 * one outcome. Rows are never deleted (a trigger refuses it).
 */
import { and, asc, eq, getTableColumns, gt, inArray, isNull, lte, ne, or, sql, type SQL } from 'drizzle-orm';
import type Database from 'better-sqlite3';
import type { Db } from '@/db/client';
import { announceWrite } from '@/db/write-intent';
import { approvals, approvalVotes, type ApprovalRow, type ApprovalVoteRow } from '@/db/schema';
import type { ApprovalState, CheckResult, PermissionContext, Principal, Role, ToolContext } from '@/lib/permissions';
import { DEFAULT_APPROVAL_TTL_SECONDS } from './gates';
import type { GateRisk } from '@/lib/permissions/gates';
import { AppError } from '@/lib/errors';
import { isKeyedBinding, storedCanonical, type CallBinding } from './binding';
import { trailProblem, trailSql, type TrailRow } from './trail';
import { actsForAgents, alreadyDecided, EXPIRED_REASON, expiredConflict, expiredFields, judge, newApprovalId, newRequestRow, nowSeconds, refusalOf, requesterOf, stateOf, approvalListQuery, type ApprovalStateFacts, outcomesQuery, type ApprovalListFilter, type ApprovalRefusal } from './rules';

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
  /** distinct people who must approve (default 1; the two-person rule is 2) */
  approvalsRequired?: number;
  /** roles that may approve (default operator and admin) */
  approverRoles?: readonly Role[];
  risk?: GateRisk;
  gateDescription?: string;
  /** the decision that asked */
  decisionId?: string;
  /**
   * the call's approved approval that the audit trail does not hold, which this request replaces: recorded as
   * `approval.unverified` with the request
   */
  unverified?: { id: string; problem: string };
}

/** Who decides: the principal's id and role. */
export interface Decider {
  id: string;
  role: Role;
}


/**
 * Told of every transition, inside the transaction that made it (so the audit row commits with it, or neither does):
 * a new request, each person's approval, a rejection, an expiry, and the run that consumed an approval.
 */
export interface ApprovalEvent {
  /** unverified: an approved, unused approval that the audit trail does not hold was met, and not used */
  type: 'requested' | 'approved' | 'rejected' | 'expired' | 'consumed' | 'refused' | 'unverified';
  row: ApprovalRow;
  /** who decided (approved, rejected), or tried to (refused); for consumed: who ran the call */
  by?: Decider;
  /** for approved: how many approvals are given now, and whether that completes the request */
  given?: number;
  /** for refused: which rule refused the decision, and the message the person saw */
  refusal?: { rule: ApprovalRefusal; message: string };
  /** for unverified: why the trail does not hold the approval */
  problem?: string;
}

export type { ApprovalRefusal };
export { newApprovalId, requesterOf };
export type ApprovalListener = (event: ApprovalEvent) => void;

const now = nowSeconds;

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

/** Columns of approvals selected under their property names (no column of approvals needs drizzle's value mapping). */
const APPROVAL_COLUMNS = getTableColumns(approvals);
const selectAs = (keys: readonly (keyof typeof APPROVAL_COLUMNS)[]) => keys.map((k) => `${APPROVAL_COLUMNS[k].name} AS ${k}`).join(', ');
const WHOLE_ROW = selectAs(Object.keys(APPROVAL_COLUMNS) as (keyof typeof APPROVAL_COLUMNS)[]);
/** What the newest approval of a call is read for: its state, and what the trail must bind it to when it is approved. */
type NewestFacts = ApprovalStateFacts & Pick<ApprovalRow, 'gate' | 'approvalsRequired'>;
const NEWEST_FACTS = selectAs(['id', 'status', 'expiresAt', 'decidedAt', 'decisionReason', 'gate', 'approvalsRequired'] satisfies (keyof NewestFacts)[]);

export class ApprovalStore {
  /**
   * The two lookups of every gated decision, prepared once (building them with drizzle's builder on each call was a
   * fifth of the listener's time in the mix) and on better-sqlite3 directly (drizzle's mapping of a whole row then cost
   * about three times the query itself): the newest approval of the call asked by one requester, from the
   * approvals_call_newest index without a sort, with the columns its state is made of; and the pending one, a whole
   * row.
   */
  private readonly newestLookup: Database.Statement<[string, string, string, string], NewestFacts>;
  private readonly pendingLookup: Database.Statement<[string, string, string, string], ApprovalRow>;
  /** the audit events of one approval (security_events_target): read only when an approved, unused one would be used */
  private readonly trailLookup: Database.Statement<[string], TrailRow>;

  constructor(
    private readonly db: Db,
    private readonly onEvent: ApprovalListener,
    /** the key calls are bound with (lib/approvals/binding.ts), asked for when first needed */
    private readonly binding: () => CallBinding,
  ) {
    // An approval belongs to the call and to who asked for it: another principal's check of the same call never sees it.
    const sameCall = 'agent_name = ? AND tool_name = ? AND arguments_hash = ? AND requested_by = ?';
    this.newestLookup = db.$client.prepare(
      `SELECT ${NEWEST_FACTS} FROM approvals WHERE ${sameCall} ORDER BY requested_at DESC, id DESC LIMIT 1`,
    );
    this.trailLookup = db.$client.prepare(trailSql('?'));
    this.pendingLookup = db.$client.prepare(`SELECT ${WHOLE_ROW} FROM approvals WHERE ${sameCall} AND status = 'pending'`);
  }

  get(id: string): ApprovalRow | undefined {
    return this.db.select().from(approvals).where(eq(approvals.id, id)).get();
  }

  /**
   * The state of this exact call for the engine, as `principal` asks it: the newest approval for (agent, tool,
   * arguments) that the principal requested decides. A consumed approval is spent (the call asks again); a rejection
   * or expiry denies the same call until it is older than its gate's expiry window, then the call may ask again. An
   * administrator may also use the approved call of the agent it names (actsForAgents): a second lookup, for them only.
   */
  stateFor(agent: string, tool: string, args: unknown, ttlSeconds: number, principal: Principal): ApprovalState {
    const hash = this.binding().bind(args);
    const own = this.stateOfRequester(agent, tool, hash, requesterOf(principal), ttlSeconds);
    if (own.status === 'approved' || !actsForAgents(principal)) return own;
    const agents = this.stateOfRequester(agent, tool, hash, `agent:${agent}`, ttlSeconds);
    return agents.status === 'approved' ? agents : own;
  }

  /**
   * The state of the call as one requester asked it. An approved, unused approval counts only when the audit trail
   * holds it (lib/approvals/trail.ts): the one case that reads the trail, so every other call costs nothing more.
   */
  private stateOfRequester(agent: string, tool: string, hash: string, requestedBy: string, ttlSeconds: number): ApprovalState {
    const row = this.newestLookup.get(agent, tool, hash, requestedBy);
    const state = stateOf(row, ttlSeconds);
    if (state.status !== 'approved' || !row) return state;
    const problem = trailProblem({ ...row, agentName: agent, toolName: tool, argumentsHash: hash, requestedBy }, this.trailLookup.all(row.id));
    return problem ? { status: 'unverified', id: row.id, reason: problem } : state;
  }

  /**
   * Create the pending approval of this call, or return the one that is already pending for it. One immediate
   * transaction: a read, and a write only when a new request is needed (an expired one is closed first).
   */
  request(r: ApprovalRequest): ApprovalRow {
    const hash = this.binding().bind(r.arguments);
    announceWrite(this.db.$client);
    return this.db.transaction(
      (tx) => {
        const at = now();
        if (r.unverified) {
          // The approval the trail does not hold is recorded (once: this request replaces it as the call's newest).
          const doubted = this.get(r.unverified.id);
          if (doubted) this.onEvent({ type: 'unverified', row: doubted, problem: r.unverified.problem });
        }
        const existing = this.pendingLookup.get(r.agent, r.tool, hash, r.requestedBy);
        if (existing && existing.expiresAt > at) return existing;
        if (existing) {
          const expired = this.expireRow(tx, existing);
          if (expired) this.onEvent({ type: 'expired', row: expired });
        }
        const created = tx.insert(approvals).values(newRequestRow(r, hash, at)).returning().get();
        this.onEvent({ type: 'requested', row: created });
        return created;
      },
      { behavior: 'immediate' },
    );
  }

  /**
   * Re-bind the rows of a release that bound approvals by an unkeyed hash and kept their arguments in clear: the keyed
   * hash of the same arguments replaces the old one (so a pending or rejected call stays what it was) and the secrets
   * leave arguments_canonical. Once per database (at open); a row another process re-bound meanwhile is left alone.
   * Returns how many rows it re-bound.
   */
  rebindLegacy(): number {
    const legacy = this.db.$client.prepare<[], { id: string; canonical: string; hash: string }>(
      "SELECT id, arguments_canonical AS canonical, arguments_hash AS hash FROM approvals WHERE arguments_hash NOT LIKE 'hmac1:%'",
    );
    if (legacy.get() === undefined) return 0;
    const binding = this.binding();
    const update = this.db.$client.prepare('UPDATE approvals SET arguments_hash = ?, arguments_canonical = ? WHERE id = ? AND arguments_hash = ?');
    announceWrite(this.db.$client);
    return this.db.$client
      .transaction(() => {
        let n = 0;
        for (const row of legacy.all()) {
          if (isKeyedBinding(row.hash)) continue;
          const args = JSON.parse(row.canonical) as unknown;
          n += update.run(binding.bind(args), storedCanonical(args), row.id, row.hash).changes;
        }
        return n;
      })
      .immediate();
  }

  /**
   * approved -> consumed, exactly once, by `by` (who ran the call: recorded on the row and in the trail). False when
   * the approval was not (or no longer) approved.
   */
  consume(id: string, by: Decider): boolean {
    announceWrite(this.db.$client);
    return this.db.transaction(
      (tx) => {
        const row = tx
          .update(approvals)
          .set({ status: 'consumed', consumedAt: now(), consumedBy: by.id })
          .where(and(eq(approvals.id, id), eq(approvals.status, 'approved')))
          .returning()
          .get();
        if (row) this.onEvent({ type: 'consumed', row, by });
        return row !== undefined;
      },
      { behavior: 'immediate' },
    );
  }

  /**
   * One person's approval. The request is approved once `approvals_required` distinct people with an approver role
   * have approved it; until then it stays pending and lists who approved. The requester never decides their own call,
   * and nobody gives two of the approvals.
   */
  approve(id: string, by: Decider, reason?: string): ApprovalRow {
    return this.decide(id, 'approve', by, reason ?? null);
  }

  /** One rejection is enough: it ends the request, and it is recorded as a denial. */
  reject(id: string, by: Decider, reason: string): ApprovalRow {
    if (!reason.trim()) throw new AppError('BAD_REQUEST', 'A rejection needs a reason; it is sent back to the agent.');
    return this.decide(id, 'reject', by, reason);
  }

  private decide(id: string, action: 'approve' | 'reject', by: Decider, reason: string | null): ApprovalRow {
    try {
      return this.decideOnce(id, action, by, reason);
    } catch (error) {
      // A refused attempt changes nothing (its transaction is rolled back), and is recorded after it.
      const refusal = refusalOf(error);
      const row = refusal ? this.get(id) : undefined;
      if (refusal && row) this.onEvent({ type: 'refused', row, by, refusal: { rule: refusal, message: error instanceof Error ? error.message : String(error) } });
      throw error;
    }
  }

  private decideOnce(id: string, action: 'approve' | 'reject', by: Decider, reason: string | null): ApprovalRow {
    const outcome = this.db.transaction(
      (tx): ApprovalRow | { expiredAt: number } => {
        const row = tx.select().from(approvals).where(eq(approvals.id, id)).get();
        if (!row) throw new AppError('NOT_FOUND', `There is no approval "${id}".`);
        const votes = action === 'approve' ? tx.select().from(approvalVotes).where(eq(approvalVotes.approvalId, id)).all() : [];
        const verdict = judge(row, votes, action, by, reason);
        if (verdict.kind === 'expire') {
          // The expiry is committed (and recorded) before the refusal is thrown.
          const expired = this.expireRow(tx, row);
          if (expired) this.onEvent({ type: 'expired', row: expired });
          return { expiredAt: row.expiresAt };
        }
        if (action === 'approve') tx.insert(approvalVotes).values({ approvalId: id, approver: by.id, approverRole: by.role, reason, at: verdict.kind === 'settle' ? verdict.to.decidedAt! : now() }).run();
        if (verdict.kind === 'vote') {
          this.onEvent({ type: 'approved', row, by, given: verdict.given });
          return row;
        }
        const updated = this.settle(tx, id, verdict.to);
        this.onEvent(action === 'reject' ? { type: 'rejected', row: updated, by } : { type: 'approved', row: updated, by, given: verdict.given });
        return updated;
      },
      { behavior: 'immediate' },
    );
    if ('expiredAt' in outcome) throw expiredConflict(outcome.expiredAt);
    return outcome;
  }

  private settle(tx: Tx, id: string, to: Pick<ApprovalRow, 'status' | 'decidedBy' | 'decidedAt' | 'decisionReason'>): ApprovalRow {
    const updated = tx
      .update(approvals)
      .set(to)
      .where(and(eq(approvals.id, id), eq(approvals.status, 'pending')))
      .returning()
      .get();
    if (!updated) throw alreadyDecided(tx.select().from(approvals).where(eq(approvals.id, id)).get()!);
    return updated;
  }

  private expireRow(tx: Tx, row: ApprovalRow): ApprovalRow | undefined {
    return tx
      .update(approvals)
      .set(expiredFields(row))
      .where(and(eq(approvals.id, row.id), eq(approvals.status, 'pending')))
      .returning()
      .get();
  }

  /** The approvals given so far, per request, in the order given. */
  votesFor(ids: readonly string[]): Map<string, ApprovalVoteRow[]> {
    const out = new Map<string, ApprovalVoteRow[]>();
    if (ids.length === 0) return out;
    const rows = this.db.select().from(approvalVotes).where(inArray(approvalVotes.approvalId, [...ids])).orderBy(asc(approvalVotes.at)).all();
    for (const v of rows) {
      const list = out.get(v.approvalId);
      if (list) list.push(v);
      else out.set(v.approvalId, [v]);
    }
    return out;
  }

  /** Rows as the API shows them, with the approvals given so far. */
  toJson(rows: readonly ApprovalRow[]): ApprovalJson[] {
    const votes = this.votesFor(rows.map((r) => r.id));
    return rows.map((r) => approvalToJson(r, votes.get(r.id) ?? []));
  }

  /**
   * What an agent runtime that asked must settle: its approved calls not yet run, and its rejected or expired calls
   * not yet reported. Survives restarts: the calls and their canonical arguments are in the store.
   */
  outcomesFor(agent: string, requestedBy: string): ApprovalRow[] {
    const q = outcomesQuery(approvals, agent, requestedBy);
    return this.db.select().from(approvals).where(q.where).orderBy(q.orderBy).all();
  }

  /** Mark a rejection or expiry as reported to its runtime; true for the one caller that marked it. */
  markReported(id: string): boolean {
    return this.db.update(approvals).set({ reportedAt: now() }).where(and(eq(approvals.id, id), isNull(approvals.reportedAt))).run().changes === 1;
  }

  /** pending -> expired for every approval past its expiry (optionally one call or one id); each becomes a denial. */
  expireDue(scope: { agent?: string; tool?: string; hash?: string; id?: string } = {}): number {
    const c: SQL[] = [eq(approvals.status, 'pending'), lte(approvals.expiresAt, now())];
    if (scope.id) c.push(eq(approvals.id, scope.id));
    if (scope.agent) c.push(eq(approvals.agentName, scope.agent));
    if (scope.tool) c.push(eq(approvals.toolName, scope.tool));
    if (scope.hash) c.push(eq(approvals.argumentsHash, scope.hash));
    // decided_at is the moment it expired, not the moment it was noticed.
    return this.db.transaction(
      (tx) => {
        const expired = tx
          .update(approvals)
          .set({ status: 'expired', decidedBy: 'system', decidedAt: sql`${approvals.expiresAt}`, decisionReason: EXPIRED_REASON })
          .where(and(...c))
          .returning()
          .all();
        for (const row of expired) this.onEvent({ type: 'expired', row });
        return expired.length;
      },
      { behavior: 'immediate' },
    );
  }

  /** A read: it never writes. Requests past their expiry are not listed as pending (the sweeper records them). */
  list(filter: ApprovalListFilter = {}): ApprovalRow[] {
    const q = approvalListQuery(approvals, filter);
    return this.db.select().from(approvals).where(q.where).orderBy(q.orderBy).limit(q.limit).all();
  }

}

const OUTCOME: Record<ApprovalStatusValue, string> = {
  pending: 'waiting for an operator',
  approved: 'approved, not yet run',
  consumed: 'approved and run',
  rejected: 'rejected',
  expired: 'expired',
};

export type ApprovalJson = ReturnType<typeof approvalToJson>;

export function approvalToJson(row: ApprovalRow, votes: readonly ApprovalVoteRow[] = []) {
  // A read never writes: a request past its expiry that the sweeper has not closed yet is shown as what it is.
  const status: ApprovalStatusValue = row.status === 'pending' && row.expiresAt <= now() ? 'expired' : row.status;
  return {
    id: row.id,
    gate: row.gate,
    status,
    outcome: OUTCOME[status],
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
    consumed_by: row.consumedBy,
    gate_description: row.gateDescription,
    risk: row.risk,
    approvals_required: row.approvalsRequired,
    approver_roles: row.approverRoles.split(','),
    approvals: votes.map((v) => ({ by: v.approver, role: v.approverRole, at: v.at, reason: v.reason })),
  };
}

/** The request an ASK of the engine makes: this exact call, bound to its gate's approvers, risk and expiry. */
export function approvalRequestOf(ctx: PermissionContext & ToolContext, result: CheckResult): ApprovalRequest {
  const gate = ctx.gate;
  return {
    gate: gate?.id ?? result.ruleSource,
    agent: ctx.agent,
    tool: ctx.tool,
    arguments: ctx.arguments,
    toolCallId: ctx.toolCallId,
    requestedBy: requesterOf(ctx.principal),
    ruleSource: result.ruleSource,
    reason: result.reason,
    expiresInSeconds: gate?.expiresInSeconds ?? DEFAULT_APPROVAL_TTL_SECONDS,
    approvalsRequired: gate?.approvers.count,
    approverRoles: gate?.approvers.roles,
    risk: gate?.risk,
    gateDescription: gate?.description,
    decisionId: result.decisionId,
    ...(ctx.approval?.status === 'unverified' && ctx.approval.id ? { unverified: { id: ctx.approval.id, problem: ctx.approval.reason ?? 'the audit trail does not hold it' } } : {}),
  };
}
