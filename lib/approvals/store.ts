/**
 * The approval store, one implementation for SQLite and PostgreSQL over the dialect port (db/dialect.ts). States:
 * pending -> approved | rejected | expired; approved -> consumed. Every transition is a conditional UPDATE on the
 * current state inside one transaction (SQLite's BEGIN IMMEDIATE; PostgreSQL's row lock, SELECT … FOR UPDATE), so
 * concurrent operators, servers, retried requests and racing agents leave exactly one outcome. Rows are never deleted
 * (a trigger refuses it).
 *
 * Every transition is told to the store's listener twice: inside its transaction (the audit rows and the queued
 * notifications are written there, so they commit with it or not at all), and once that transaction has committed
 * (the hooks hear of it then, when every connection can read the transition and its audit rows).
 *
 * The decision's own ports (the state of a call, request an approval, consume one) are here too, asynchronous; on
 * SQLite the engine reaches them synchronously through SqliteApprovalPorts (sqlite-ports.ts), which runs the same
 * transaction bodies (requestSteps, consumeSteps) without yielding, so that a group of decisions commits in one
 * transaction.
 */
import { getTableColumns, sql, type SQL } from 'drizzle-orm';
import { columnsAs } from '@/db/columns';
import type { SqlDatabase, TxRunner, TxSteps } from '@/db/dialect';
import { approvals, type ApprovalRow, type ApprovalVoteRow } from '@/db/schema';
import type { ApprovalState, CheckResult, PermissionContext, Principal, ToolContext } from '@/lib/permissions';
import { DEFAULT_APPROVAL_TTL_SECONDS } from './gates';
import { AppError, messageOf } from '@/lib/errors';
import { isKeyedBinding, storedCanonical, type CallBinding } from './binding';
import { NO_PROOF, PROOF_QUERIES, trailQuery, type TrailProof, type TrailRow } from './trail';
import { AUDIT_TRAIL_LOCK } from '@/lib/audit/trail/chain';
import { alreadyDecided, approvalListQuery, decisionTime, callState, EXPIRED_REASON, expiredConflict, expiredFields, judge, newApprovalId, newRequestRow, nowSeconds, outcomesQuery } from './rules';
import { refusalOf, requesterOf, type ApprovalListFilter, type ApprovalRefusal, type ApprovalRequest, type CallStateReads, type Decider, type NewestFacts } from './rules';

export type { ApprovalRequest, Decider } from './rules';

/**
 * A transition: a new request, each person's approval, a rejection, an expiry, the run that consumed an approval, a
 * refused attempt, an approved approval the trail does not hold.
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

/** Who hears of the transitions (the composition roots: the audit trail, notifications, hooks). */
export interface ApprovalListener {
  /**
   * Inside the transaction of the transition, on its connection (`tx`): what is written here (the audit rows, the
   * queued notifications) commits with the transition, or neither does.
   */
  inTransaction(event: ApprovalEvent, tx: TxRunner): TxSteps<void>;
  /**
   * Once that transaction has committed, in the order the events happened: the transition and what inTransaction
   * wrote are readable from every connection. Must not throw (a failure here is logged: the transition stands).
   * On SQLite inside a transaction the caller holds (the decision listener's group commit), "committed" is the end of
   * the store's savepoint; the caller's COMMIT follows before the next turn of the event loop, where the hooks run.
   */
  afterCommit(event: ApprovalEvent): void;
}

export type { ApprovalRefusal };
export { newApprovalId, requesterOf };

/** What the store promises on both databases. */
export interface ApprovalStore {
  get(id: string): Promise<ApprovalRow | undefined>;
  /** the queue or the history (a read: it never writes; requests past their expiry are not listed as pending) */
  list(filter?: ApprovalListFilter): Promise<ApprovalRow[]>;
  /** the state of this exact call for the engine, as `principal` asks it */
  stateFor(agent: string, tool: string, args: unknown, ttlSeconds: number, principal: Principal): Promise<ApprovalState>;
  /** the pending approval of this call: a new one, or the one already pending for it */
  request(r: ApprovalRequest): Promise<ApprovalRow>;
  /** approved -> consumed, exactly once; false when it was not (or no longer) approved */
  consume(id: string, by: Decider): Promise<boolean>;
  /** one person's approval (the request is approved once enough distinct people with an approver role gave theirs) */
  approve(id: string, by: Decider, reason?: string): Promise<ApprovalRow>;
  /** one rejection ends the request (and is recorded as a denial) */
  reject(id: string, by: Decider, reason: string): Promise<ApprovalRow>;
  /** pending -> expired for every request past its expiry, or only those of one call or one id; how many */
  expireDue(scope?: ExpiryScope): Promise<number>;
  votesFor(ids: readonly string[]): Promise<Map<string, ApprovalVoteRow[]>>;
  toJson(rows: readonly ApprovalRow[]): Promise<ApprovalJson[]>;
  /** what an agent runtime that asked must settle: its approved calls not yet run, its rejections and expiries not yet reported */
  outcomesFor(agent: string, requestedBy: string): Promise<ApprovalRow[]>;
  /** mark a rejection or expiry as reported to its runtime; true for the one caller (of any server) that marked it */
  markReported(id: string): Promise<boolean>;
  /** re-bind the rows of a release that bound approvals by an unkeyed hash; how many */
  rebindLegacy(): Promise<number>;
}

/** Which due requests expireDue closes: all of them, or those of one agent, tool, arguments hash or id. */
export interface ExpiryScope {
  agent?: string;
  tool?: string;
  /** the call's binding (approvals.arguments_hash) */
  hash?: string;
  id?: string;
}

/** A transaction body that makes transitions: `tell` each one as it happens. */
export type Transition<T> = (tx: TxRunner, tell: (event: ApprovalEvent) => TxSteps<void>) => TxSteps<T>;

/**
 * Tells a listener of a transition's events: each inside the transaction, then all of them once it has committed.
 * Used by the store and by the SQLite decision ports alike, so that both tell in the same way.
 */
export function transitionOf<T>(listener: ApprovalListener, body: Transition<T>): { body: (tx: TxRunner) => TxSteps<T>; committed: () => void } {
  const told: ApprovalEvent[] = [];
  return {
    body: (tx) =>
      body(tx, (event) => {
        told.push(event);
        return listener.inTransaction(event, tx);
      }),
    committed: () => {
      for (const event of told) {
        try {
          listener.afterCommit(event);
        } catch (error) {
          console.error(`Telling of approval ${event.row.id} (${event.type}) after its commit failed; the transition stands.`, error);
        }
      }
    },
  };
}

const now = nowSeconds;

/** Every column of approvals, by property name (the INSERT of a request names them). */
const APPROVAL_COLUMNS = getTableColumns(approvals);
/** The whole row under its property names, for SELECT and RETURNING. */
export const APPROVAL_ROW = sql.raw(columnsAs(approvals));
/** The columns of a call's newest approval that its state is made of (rules.ts NewestFacts). */
export const NEWEST_FACTS = columnsAs(approvals, ['id', 'status', 'expiresAt', 'decidedAt', 'decisionReason', 'gate', 'approvalsRequired'] satisfies (keyof NewestFacts)[]);
const VOTE_ROW = sql`approval_id AS "approvalId", approver, approver_role AS "approverRole", reason, "at"`;

/** Rows of a release that bound approvals by an unkeyed hash (and kept their arguments in clear). */
export const LEGACY_APPROVALS = sql`SELECT id, arguments_canonical AS canonical, arguments_hash AS hash FROM approvals WHERE arguments_hash NOT LIKE 'hmac1:%'`;

/** A pending request of this call by this requester (an approval belongs to the call and to who asked for it). */
const samePending = (r: Pick<ApprovalRequest, 'agent' | 'tool' | 'requestedBy'>, hash: string): SQL =>
  sql`agent_name = ${r.agent} AND tool_name = ${r.tool} AND arguments_hash = ${hash} AND requested_by = ${r.requestedBy} AND status = 'pending'`;

export class SqlApprovalStore implements ApprovalStore {
  constructor(
    private readonly database: SqlDatabase,
    private readonly listener: ApprovalListener,
    /** the key calls are bound with (lib/approvals/binding.ts), asked for when first needed */
    private readonly binding: () => CallBinding,
    /** what opens the trail's checkpoints and what the key folder remembers (trail.ts TrailProof) */
    private readonly proof: () => TrailProof = () => NO_PROOF,
  ) {}

  /**
   * Run a transition in a transaction of its own; its events are told after the commit. It takes the audit trail's
   * lock first, before any row: a transition locks its approval row and then appends to the trail, so two of them
   * taking those in opposite orders (a decision locking a pending row while a new request of the same call, holding
   * the trail, waits for that row) would deadlock on PostgreSQL. On SQLite BEGIN IMMEDIATE is that lock.
   */
  private async transition<T>(body: Transition<T>): Promise<T> {
    const t = transitionOf(this.listener, body);
    const out = await this.database.transaction(t.body, { serialise: AUDIT_TRAIL_LOCK });
    t.committed();
    return out;
  }

  async get(id: string): Promise<ApprovalRow | undefined> {
    return this.database.one<ApprovalRow>(sql`SELECT ${APPROVAL_ROW} FROM approvals WHERE id = ${id}`);
  }

  /**
   * The state of this exact call for the engine, as `principal` asks it (rules.ts callState, its reads awaited). The
   * row and its trail are two reads: another server consuming or re-asking the call between them would make an intact
   * approval look unverified, so a doubt is read again in one snapshot before it is believed.
   */
  async stateFor(agent: string, tool: string, args: unknown, ttlSeconds: number, principal: Principal): Promise<ApprovalState> {
    const call = { agentName: agent, toolName: tool, argumentsHash: this.binding().bind(args) };
    const newest = (by: string) =>
      sql`SELECT ${sql.raw(NEWEST_FACTS)} FROM approvals WHERE agent_name = ${agent} AND tool_name = ${tool} AND arguments_hash = ${call.argumentsHash} AND requested_by = ${by}
          ORDER BY requested_at DESC, id DESC LIMIT 1`;
    const db = this.database;
    const proof = this.proof();
    const steps = callState(
      {
        newest: (by) => db.one<NewestFacts>(newest(by)),
        trail: (id) => db.all<TrailRow>(trailQuery(id)),
        checkpoint: () => db.one(PROOF_QUERIES.checkpoint),
        rowHash: (id) => db.one(PROOF_QUERIES.rowHash(id)),
        count: (from, to) => db.one(PROOF_QUERIES.count(from, to)),
        proof,
      },
      call,
      ttlSeconds,
      principal,
    );
    let next = steps.next();
    while (!next.done) next = steps.next(await next.value);
    if (next.value.status !== 'unverified') return next.value;
    return this.database.transaction(
      function* (tx) {
        // the same rules, each read a step of the snapshot's transaction
        const again = callState(
          {
            newest: (by: string) => tx.one(newest(by)),
            trail: (id: string) => tx.all(trailQuery(id)),
            checkpoint: () => tx.one(PROOF_QUERIES.checkpoint),
            rowHash: (id: number) => tx.one(PROOF_QUERIES.rowHash(id)),
            count: (from: number, to: number) => tx.one(PROOF_QUERIES.count(from, to)),
            proof,
          } as unknown as CallStateReads,
          call,
          ttlSeconds,
          principal,
        );
        let step = again.next();
        while (!step.done) step = again.next(yield* step.value as TxSteps<unknown>);
        return step.value;
      },
      { readOnly: true },
    );
  }

  request(r: ApprovalRequest): Promise<ApprovalRow> {
    const hash = this.binding().bind(r.arguments);
    return this.transition((tx, tell) => this.requestSteps(tx, tell, r, hash));
  }

  /**
   * The transaction of a request: the pending approval of this call, or the one already pending for it (an expired one
   * is closed first). Two servers asking at once are kept to one pending row by the partial unique index: the loser
   * returns the winner's row.
   */
  *requestSteps(tx: TxRunner, tell: (e: ApprovalEvent) => TxSteps<void>, r: ApprovalRequest, hash: string): TxSteps<ApprovalRow> {
    const at = now();
    if (r.unverified) {
      // The approval the trail does not hold is recorded (once: this request replaces it as the call's newest).
      const doubted = yield* tx.one<ApprovalRow>(sql`SELECT ${APPROVAL_ROW} FROM approvals WHERE id = ${r.unverified.id}`);
      if (doubted) yield* tell({ type: 'unverified', row: doubted, problem: r.unverified.problem });
    }
    const existing = yield* tx.one<ApprovalRow>(sql`SELECT ${APPROVAL_ROW} FROM approvals WHERE ${samePending(r, hash)}${this.database.forUpdate}`);
    if (existing && existing.expiresAt > at) return existing;
    if (existing) {
      const expired = yield* expireRow(tx, existing);
      if (expired) yield* tell({ type: 'expired', row: expired });
    }
    const n = newRequestRow(r, hash, at);
    const keys = Object.keys(n) as (keyof typeof APPROVAL_COLUMNS)[];
    const created = yield* tx.one<ApprovalRow>(sql`
      INSERT INTO approvals (${sql.raw(keys.map((k) => APPROVAL_COLUMNS[k].name).join(', '))}) VALUES (${sql.join(keys.map((k) => sql`${n[k]}`), sql`, `)})
      ON CONFLICT DO NOTHING RETURNING ${APPROVAL_ROW}`);
    if (!created) {
      // Another server created it a moment ago (the partial unique index kept them to one): that request it is.
      const winner = yield* tx.one<ApprovalRow>(sql`SELECT ${APPROVAL_ROW} FROM approvals WHERE ${samePending(r, hash)}`);
      if (!winner) throw new Error('The pending request of this call vanished while it was being created; try again.');
      return winner;
    }
    yield* tell({ type: 'requested', row: created });
    return created;
  }

  /**
   * Re-bind the rows of a release that bound approvals by an unkeyed hash and kept their arguments in clear: the keyed
   * hash of the same arguments replaces the old one (so a pending or rejected call stays what it was) and the secrets
   * leave arguments_canonical. Once per database (at open, by the first server that has the key); a row another process
   * re-bound meanwhile is left alone. Returns how many rows it re-bound.
   */
  async rebindLegacy(): Promise<number> {
    if ((await this.database.one(sql`${LEGACY_APPROVALS} LIMIT 1`)) === undefined) return 0;
    return this.database.transaction((tx) => this.rebindSteps(tx));
  }

  /** The transaction of rebindLegacy (run synchronously by a SQLite application as it opens). */
  *rebindSteps(tx: TxRunner): TxSteps<number> {
    const rows = yield* tx.all<{ id: string; canonical: string; hash: string }>(LEGACY_APPROVALS);
    if (rows.length === 0) return 0;
    const binding = this.binding();
    let n = 0;
    for (const row of rows) {
      if (isKeyedBinding(row.hash)) continue;
      const args = JSON.parse(row.canonical) as unknown;
      n += yield* tx.run(sql`UPDATE approvals SET arguments_hash = ${binding.bind(args)}, arguments_canonical = ${storedCanonical(args)} WHERE id = ${row.id} AND arguments_hash = ${row.hash}`);
    }
    return n;
  }

  consume(id: string, by: Decider): Promise<boolean> {
    return this.transition((tx, tell) => consumeSteps(tx, tell, id, by));
  }

  approve(id: string, by: Decider, reason?: string): Promise<ApprovalRow> {
    return this.decide(id, 'approve', by, reason ?? null);
  }

  async reject(id: string, by: Decider, reason: string): Promise<ApprovalRow> {
    if (!reason.trim()) throw new AppError('BAD_REQUEST', 'A rejection needs a reason; it is sent back to the agent.');
    return this.decide(id, 'reject', by, reason);
  }

  private async decide(id: string, action: 'approve' | 'reject', by: Decider, reason: string | null): Promise<ApprovalRow> {
    try {
      return await this.decideOnce(id, action, by, reason);
    } catch (error) {
      // A refused attempt changes nothing (its transaction is rolled back), and is recorded after it.
      const refusal = refusalOf(error);
      if (refusal) {
        const message = messageOf(error);
        await this.transition(function* (tx, tell) {
          const row = yield* tx.one<ApprovalRow>(sql`SELECT ${APPROVAL_ROW} FROM approvals WHERE id = ${id}`);
          if (row) yield* tell({ type: 'refused', row, by, refusal: { rule: refusal, message } });
        });
      }
      throw error;
    }
  }

  private async decideOnce(id: string, action: 'approve' | 'reject', by: Decider, reason: string | null): Promise<ApprovalRow> {
    const forUpdate = this.database.forUpdate;
    const outcome = await this.transition(function* (tx, tell): TxSteps<ApprovalRow | { expiredAt: number }> {
      // The row lock: decisions of one request on several servers are applied one after the other.
      const row = yield* tx.one<ApprovalRow>(sql`SELECT ${APPROVAL_ROW} FROM approvals WHERE id = ${id}${forUpdate}`);
      if (!row) throw new AppError('NOT_FOUND', `There is no approval "${id}".`);
      const votes = action === 'approve' ? yield* tx.all<ApprovalVoteRow>(sql`SELECT ${VOTE_ROW} FROM approval_votes WHERE approval_id = ${id}`) : [];
      const verdict = judge(row, votes, action, by, reason, decisionTime(votes));
      if (verdict.kind === 'expire') {
        // The expiry is committed (and recorded) before the refusal is thrown.
        const expired = yield* expireRow(tx, row);
        if (expired) yield* tell({ type: 'expired', row: expired });
        return { expiredAt: row.expiresAt };
      }
      if (action === 'approve') {
        const at = verdict.kind === 'settle' ? verdict.to.decidedAt! : decisionTime(votes);
        yield* tx.run(sql`INSERT INTO approval_votes (approval_id, approver, approver_role, reason, "at") VALUES (${id}, ${by.id}, ${by.role}, ${reason}, ${at})`);
      }
      if (verdict.kind === 'vote') {
        yield* tell({ type: 'approved', row, by, given: verdict.given });
        return row;
      }
      const to = verdict.to;
      const updated = yield* tx.one<ApprovalRow>(sql`
        UPDATE approvals SET status = ${to.status}, decided_by = ${to.decidedBy}, decided_at = ${to.decidedAt}, decision_reason = ${to.decisionReason}
        WHERE id = ${id} AND status = 'pending'
        RETURNING ${APPROVAL_ROW}`);
      if (!updated) throw alreadyDecided((yield* tx.one<ApprovalRow>(sql`SELECT ${APPROVAL_ROW} FROM approvals WHERE id = ${id}`))!);
      yield* tell(action === 'reject' ? { type: 'rejected', row: updated, by } : { type: 'approved', row: updated, by, given: verdict.given });
      return updated;
    });
    if ('expiredAt' in outcome) throw expiredConflict(outcome.expiredAt);
    return outcome;
  }

  /**
   * pending -> expired for every approval past its expiry (or only those of `scope`); each becomes a denial. Every
   * server's sweeper may run it at once: each expiry happens once.
   */
  expireDue(scope: ExpiryScope = {}): Promise<number> {
    const c: SQL[] = [sql`status = 'pending'`, sql`expires_at <= ${now()}`];
    if (scope.id !== undefined) c.push(sql`id = ${scope.id}`);
    if (scope.agent !== undefined) c.push(sql`agent_name = ${scope.agent}`);
    if (scope.tool !== undefined) c.push(sql`tool_name = ${scope.tool}`);
    if (scope.hash !== undefined) c.push(sql`arguments_hash = ${scope.hash}`);
    return this.transition(function* (tx, tell) {
      // decided_at is the moment it expired, not the moment it was noticed.
      const expired = yield* tx.all<ApprovalRow>(sql`
        UPDATE approvals SET status = 'expired', decided_by = 'system', decided_at = expires_at, decision_reason = ${EXPIRED_REASON}
        WHERE ${sql.join(c, sql` AND `)}
        RETURNING ${APPROVAL_ROW}`);
      for (const row of expired) yield* tell({ type: 'expired', row });
      return expired.length;
    });
  }

  /** The approvals given so far, per request, in the order given. */
  async votesFor(ids: readonly string[]): Promise<Map<string, ApprovalVoteRow[]>> {
    const out = new Map<string, ApprovalVoteRow[]>();
    if (ids.length === 0) return out;
    const rows = await this.database.all<ApprovalVoteRow>(
      sql`SELECT ${VOTE_ROW} FROM approval_votes WHERE approval_id IN (${sql.join(ids.map((id) => sql`${id}`), sql`, `)}) ORDER BY "at"`,
    );
    for (const v of rows) {
      const list = out.get(v.approvalId);
      if (list) list.push(v);
      else out.set(v.approvalId, [v]);
    }
    return out;
  }

  /** Rows as the API shows them, with the approvals given so far. */
  async toJson(rows: readonly ApprovalRow[]): Promise<ApprovalJson[]> {
    const votes = await this.votesFor(rows.map((r) => r.id));
    return rows.map((r) => approvalToJson(r, votes.get(r.id) ?? []));
  }

  /**
   * What an agent runtime that asked must settle: its approved calls not yet run, and its rejected or expired calls
   * not yet reported. Survives restarts: the calls and their canonical arguments are in the store.
   */
  async outcomesFor(agent: string, requestedBy: string): Promise<ApprovalRow[]> {
    const q = outcomesQuery(approvals, agent, requestedBy);
    return this.database.all<ApprovalRow>(sql`SELECT ${APPROVAL_ROW} FROM approvals WHERE ${q.where} ORDER BY ${q.orderBy}`);
  }

  async markReported(id: string): Promise<boolean> {
    return (await this.database.run(sql`UPDATE approvals SET reported_at = ${now()} WHERE id = ${id} AND reported_at IS NULL`)) === 1;
  }

  /** A read: it never writes. Requests past their expiry are not listed as pending (the sweeper records them). */
  async list(filter: ApprovalListFilter = {}): Promise<ApprovalRow[]> {
    const q = approvalListQuery(approvals, filter);
    return this.database.all<ApprovalRow>(sql`SELECT ${APPROVAL_ROW} FROM approvals${q.where ? sql` WHERE ${q.where}` : sql``} ORDER BY ${q.orderBy} LIMIT ${q.limit}`);
  }
}

/** The transaction of a consumption: approved -> consumed, exactly once, by `by` (recorded on the row and in the trail). */
export function* consumeSteps(tx: TxRunner, tell: (e: ApprovalEvent) => TxSteps<void>, id: string, by: Decider): TxSteps<boolean> {
  const row = yield* tx.one<ApprovalRow>(sql`
    UPDATE approvals SET status = 'consumed', consumed_at = ${now()}, consumed_by = ${by.id}
    WHERE id = ${id} AND status = 'approved'
    RETURNING ${APPROVAL_ROW}`);
  if (row) yield* tell({ type: 'consumed', row, by });
  return row !== undefined;
}

/** Close a pending request past its expiry (as of its expiry); undefined when it is no longer pending. */
function* expireRow(tx: TxRunner, row: ApprovalRow): TxSteps<ApprovalRow | undefined> {
  const f = expiredFields(row);
  return yield* tx.one<ApprovalRow>(sql`
    UPDATE approvals SET status = ${f.status}, decided_by = ${f.decidedBy}, decided_at = ${f.decidedAt}, decision_reason = ${f.decisionReason}
    WHERE id = ${row.id} AND status = 'pending'
    RETURNING ${APPROVAL_ROW}`);
}

const OUTCOME: Record<ApprovalRow['status'], string> = {
  pending: 'waiting for an operator',
  approved: 'approved, not yet run',
  consumed: 'approved and run',
  rejected: 'rejected',
  expired: 'expired',
};

export type ApprovalJson = ReturnType<typeof approvalToJson>;

export function approvalToJson(row: ApprovalRow, votes: readonly ApprovalVoteRow[] = []) {
  // A read never writes: a request past its expiry that the sweeper has not closed yet is shown as what it is.
  const status: ApprovalRow['status'] = row.status === 'pending' && row.expiresAt <= now() ? 'expired' : row.status;
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
    /** the MCP client that asked, as it named itself (null: the call did not come through the MCP gateway) */
    client: row.client,
    risk: row.risk,
    approvals_required: row.approvalsRequired,
    approver_roles: row.approverRoles.split(','),
    approvals: votes.map((v) => ({ by: v.approver, role: v.approverRole, at: v.at, reason: v.reason })),
    deciders: decidersOf(row, votes),
  };
}

/**
 * Everyone who decided a request, in order: each approval given (both people of a two-person decision), then whoever
 * settled it otherwise (a rejection); "system" for an expiry; empty while nobody has.
 */
export function decidersOf(row: Pick<ApprovalRow, 'decidedBy'>, votes: readonly Pick<ApprovalVoteRow, 'approver'>[]): string[] {
  const out = votes.map((v) => v.approver);
  if (row.decidedBy && !out.includes(row.decidedBy)) out.push(row.decidedBy);
  return out;
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
    ...(ctx.client ? { client: ctx.client } : {}),
    ...(ctx.approval?.status === 'unverified' && ctx.approval.id ? { unverified: { id: ctx.approval.id, problem: ctx.approval.reason ?? 'the audit trail does not hold it' } } : {}),
  };
}
