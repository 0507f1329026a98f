/**
 * The approval store on PostgreSQL, for several servers on one database: the same rules as the SQLite store
 * (lib/approvals/rules.ts), applied with row locks and conditional updates so that whatever two servers do at the same
 * moment leaves exactly one outcome.
 *
 * - A decision locks the request's row (SELECT … FOR UPDATE) for its transaction: an approval on one server and a
 *   rejection on another are applied one after the other, and the second finds the request decided (409).
 * - Consumption is one conditional UPDATE (approved -> consumed): one run per approval, whichever server runs it.
 * - A request for a call that is already waiting returns that request; two servers asking at once are kept to one
 *   pending row by the partial unique index, and the loser returns the winner's row.
 * Listeners are told of every transition inside its transaction, with the transaction, so that the audit row commits
 * with it or neither does.
 */
import { and, asc, desc, eq, inArray, isNull, lte, sql } from 'drizzle-orm';
import type pg from 'pg';
import { inTransaction, pgDatabase, type PgDb, type PgTx } from '@/db/pg/client';
import { approvals, approvalVotes } from '@/db/pg/schema';
import type { ApprovalRow, ApprovalVoteRow } from '@/db/schema';
import { AppError } from '@/lib/errors';
import type { ApprovalState, Principal } from '@/lib/permissions';
import { isKeyedBinding, storedCanonical, type CallBinding } from './binding';
import { trailProblem, trailSql, type TrailRow } from './trail';
import { actsForAgents, alreadyDecided, EXPIRED_REASON, expiredConflict, expiredFields, judge, newRequestRow, nowSeconds, refusalOf, requesterOf, stateOf, approvalListQuery, outcomesQuery, type ApprovalListFilter } from './rules';
import { approvalToJson, type ApprovalEvent, type ApprovalJson, type ApprovalRequest, type Decider } from './store';

const TRAIL_SQL = trailSql('$1');

export type PgApprovalListener = (event: ApprovalEvent, tx: PgTx) => void | Promise<void>;

export class PgApprovalStore {
  private readonly db: PgDb;

  constructor(
    private readonly pool: pg.Pool,
    private readonly onEvent: PgApprovalListener,
    /** the key calls are bound with (lib/approvals/binding.ts), asked for when first needed */
    private readonly binding: () => CallBinding,
  ) {
    this.db = pgDatabase(pool);
  }

  private transaction<T>(fn: (t: PgTx['db'], tx: PgTx) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, (tx) => fn(tx.db, tx));
  }

  async get(id: string): Promise<ApprovalRow | undefined> {
    return (await this.db.select().from(approvals).where(eq(approvals.id, id)).limit(1))[0];
  }

  /** The state of this exact call as `principal` asks it (the SQLite store's stateFor, the same rules). */
  async stateFor(agent: string, tool: string, args: unknown, ttlSeconds: number, principal: Principal): Promise<ApprovalState> {
    const hash = this.binding().bind(args);
    const own = await this.stateOfRequester(agent, tool, hash, requesterOf(principal), ttlSeconds);
    if (own.status === 'approved' || !actsForAgents(principal)) return own;
    const agents = await this.stateOfRequester(agent, tool, hash, `agent:${agent}`, ttlSeconds);
    return agents.status === 'approved' ? agents : own;
  }

  /** The state of the call as one requester asked it; an approved, unused approval counts only when the trail holds it. */
  private async stateOfRequester(agent: string, tool: string, hash: string, requestedBy: string, ttlSeconds: number): Promise<ApprovalState> {
    const row = await this.newestOf(agent, tool, hash, requestedBy);
    const state = stateOf(row, ttlSeconds);
    if (state.status !== 'approved' || !row) return state;
    const events = await this.pool.query<TrailRow>(TRAIL_SQL, [row.id]);
    const problem = trailProblem(row, events.rows);
    return problem ? { status: 'unverified', id: row.id, reason: problem } : state;
  }

  /** The newest approval of a call asked by one requester (an approval belongs to who asked for it). */
  private async newestOf(agent: string, tool: string, hash: string, requestedBy: string): Promise<ApprovalRow | undefined> {
    const rows = await this.db
      .select()
      .from(approvals)
      .where(and(eq(approvals.agentName, agent), eq(approvals.toolName, tool), eq(approvals.argumentsHash, hash), eq(approvals.requestedBy, requestedBy)))
      .orderBy(desc(approvals.requestedAt), desc(approvals.id))
      .limit(1);
    return rows[0];
  }

  /** Create the pending approval of this call, or return the one already pending for it (on any server). */
  request(r: ApprovalRequest): Promise<ApprovalRow> {
    const hash = this.binding().bind(r.arguments);
    const samePending = and(
      eq(approvals.agentName, r.agent),
      eq(approvals.toolName, r.tool),
      eq(approvals.argumentsHash, hash),
      eq(approvals.requestedBy, r.requestedBy),
      eq(approvals.status, 'pending'),
    );
    return this.transaction(async (tx, t) => {
      const at = nowSeconds();
      if (r.unverified) {
        // The approval the trail does not hold is recorded, with the request that replaces it.
        const [doubted] = await tx.select().from(approvals).where(eq(approvals.id, r.unverified.id));
        if (doubted) await this.onEvent({ type: 'unverified', row: doubted, problem: r.unverified.problem }, t);
      }
      const [existing] = await tx.select().from(approvals).where(samePending).for('update');
      if (existing && existing.expiresAt > at) return existing;
      if (existing) {
        const [expired] = await tx.update(approvals).set(expiredFields(existing)).where(and(eq(approvals.id, existing.id), eq(approvals.status, 'pending'))).returning();
        if (expired) await this.onEvent({ type: 'expired', row: expired }, t);
      }
      const [created] = await tx.insert(approvals).values(newRequestRow(r, hash, at)).onConflictDoNothing().returning();
      if (!created) {
        // Another server created it a moment ago (the partial unique index kept them to one): that request it is.
        const [winner] = await tx.select().from(approvals).where(samePending);
        if (!winner) throw new Error('The pending request of this call vanished while it was being created; try again.');
        return winner;
      }
      await this.onEvent({ type: 'requested', row: created }, t);
      return created;
    });
  }

  /** The SQLite store's rebindLegacy: rows bound by an unkeyed hash, their arguments in clear, re-bound once. */
  async rebindLegacy(): Promise<number> {
    const legacy = "SELECT id, arguments_canonical AS canonical, arguments_hash AS hash FROM approvals WHERE arguments_hash NOT LIKE 'hmac1:%'";
    if ((await this.pool.query(`${legacy} LIMIT 1`)).rowCount === 0) return 0;
    const binding = this.binding();
    return this.transaction(async (_, t) => {
      let n = 0;
      for (const row of (await t.client.query<{ id: string; canonical: string; hash: string }>(legacy)).rows) {
        if (isKeyedBinding(row.hash)) continue;
        const args = JSON.parse(row.canonical) as unknown;
        const r = await t.client.query('UPDATE approvals SET arguments_hash = $1, arguments_canonical = $2 WHERE id = $3 AND arguments_hash = $4', [binding.bind(args), storedCanonical(args), row.id, row.hash]);
        n += r.rowCount ?? 0;
      }
      return n;
    });
  }

  /**
   * approved -> consumed, exactly once across every server, by `by` (recorded on the row and in the trail). False when
   * it was not (or no longer) approved.
   */
  consume(id: string, by: Decider): Promise<boolean> {
    return this.transaction(async (tx, t) => {
      const [row] = await tx
        .update(approvals)
        .set({ status: 'consumed', consumedAt: nowSeconds(), consumedBy: by.id })
        .where(and(eq(approvals.id, id), eq(approvals.status, 'approved')))
        .returning();
      if (row) await this.onEvent({ type: 'consumed', row, by }, t);
      return row !== undefined;
    });
  }

  approve(id: string, by: Decider, reason?: string): Promise<ApprovalRow> {
    return this.decide(id, 'approve', by, reason ?? null);
  }

  reject(id: string, by: Decider, reason: string): Promise<ApprovalRow> {
    if (!reason.trim()) return Promise.reject(new AppError('BAD_REQUEST', 'A rejection needs a reason; it is sent back to the agent.'));
    return this.decide(id, 'reject', by, reason);
  }

  private async decide(id: string, action: 'approve' | 'reject', by: Decider, reason: string | null): Promise<ApprovalRow> {
    try {
      return await this.decideOnce(id, action, by, reason);
    } catch (error) {
      // A refused attempt changes nothing (its transaction is rolled back), and is recorded after it.
      const refusal = refusalOf(error);
      if (refusal) {
        await this.transaction(async (tx, t) => {
          const [row] = await tx.select().from(approvals).where(eq(approvals.id, id));
          if (row) await this.onEvent({ type: 'refused', row, by, refusal: { rule: refusal, message: error instanceof Error ? error.message : String(error) } }, t);
        });
      }
      throw error;
    }
  }

  private async decideOnce(id: string, action: 'approve' | 'reject', by: Decider, reason: string | null): Promise<ApprovalRow> {
    const outcome = await this.transaction(async (tx, t): Promise<ApprovalRow | { expiredAt: number }> => {
      // The row lock: decisions of one request on several servers are applied one after the other.
      const [row] = await tx.select().from(approvals).where(eq(approvals.id, id)).for('update');
      if (!row) throw new AppError('NOT_FOUND', `There is no approval "${id}".`);
      const votes = action === 'approve' ? await tx.select().from(approvalVotes).where(eq(approvalVotes.approvalId, id)) : [];
      const verdict = judge(row, votes, action, by, reason);
      if (verdict.kind === 'expire') {
        const [expired] = await tx.update(approvals).set(expiredFields(row)).where(and(eq(approvals.id, id), eq(approvals.status, 'pending'))).returning();
        if (expired) await this.onEvent({ type: 'expired', row: expired }, t);
        return { expiredAt: row.expiresAt };
      }
      if (action === 'approve') {
        await tx.insert(approvalVotes).values({ approvalId: id, approver: by.id, approverRole: by.role, reason, at: verdict.kind === 'settle' ? verdict.to.decidedAt! : nowSeconds() });
      }
      if (verdict.kind === 'vote') {
        await this.onEvent({ type: 'approved', row, by, given: verdict.given }, t);
        return row;
      }
      const [updated] = await tx.update(approvals).set(verdict.to).where(and(eq(approvals.id, id), eq(approvals.status, 'pending'))).returning();
      if (!updated) throw alreadyDecided((await tx.select().from(approvals).where(eq(approvals.id, id)))[0]!);
      await this.onEvent(action === 'reject' ? { type: 'rejected', row: updated, by } : { type: 'approved', row: updated, by, given: verdict.given }, t);
      return updated;
    });
    if ('expiredAt' in outcome) throw expiredConflict(outcome.expiredAt);
    return outcome;
  }

  /** pending -> expired for every request past its expiry; each server's sweeper may run it, each expiry happens once. */
  expireDue(): Promise<number> {
    return this.transaction(async (tx, t) => {
      const expired = await tx
        .update(approvals)
        .set({ status: 'expired', decidedBy: 'system', decidedAt: sql`${approvals.expiresAt}`, decisionReason: EXPIRED_REASON })
        .where(and(eq(approvals.status, 'pending'), lte(approvals.expiresAt, nowSeconds())))
        .returning();
      for (const row of expired) await this.onEvent({ type: 'expired', row }, t);
      return expired.length;
    });
  }

  /** The approvals given so far, per request, in the order given. */
  async votesFor(ids: readonly string[]): Promise<Map<string, ApprovalVoteRow[]>> {
    const out = new Map<string, ApprovalVoteRow[]>();
    if (ids.length === 0) return out;
    for (const v of await this.db.select().from(approvalVotes).where(inArray(approvalVotes.approvalId, [...ids])).orderBy(asc(approvalVotes.at))) {
      const list = out.get(v.approvalId);
      if (list) list.push(v);
      else out.set(v.approvalId, [v]);
    }
    return out;
  }

  /** The queue or the history, as the SQLite store lists them. */
  async list(filter: ApprovalListFilter = {}): Promise<ApprovalRow[]> {
    const q = approvalListQuery(approvals, filter);
    return this.db.select().from(approvals).where(q.where).orderBy(q.orderBy).limit(q.limit);
  }

  /** Rows as the API shows them, with the approvals given so far. */
  async toJson(rows: readonly ApprovalRow[]): Promise<ApprovalJson[]> {
    const votes = await this.votesFor(rows.map((r) => r.id));
    return rows.map((r) => approvalToJson(r, votes.get(r.id) ?? []));
  }

  /** What an agent runtime that asked must settle (outcomesQuery), as the SQLite store answers it. */
  async outcomesFor(agent: string, requestedBy: string): Promise<ApprovalRow[]> {
    const q = outcomesQuery(approvals, agent, requestedBy);
    return this.db.select().from(approvals).where(q.where).orderBy(q.orderBy);
  }

  /** Mark a rejection or expiry as reported to its runtime; true for the one caller (of any server) that marked it. */
  async markReported(id: string): Promise<boolean> {
    const marked = await this.db.update(approvals).set({ reportedAt: nowSeconds() }).where(and(eq(approvals.id, id), isNull(approvals.reportedAt))).returning({ id: approvals.id });
    return marked.length === 1;
  }
}
