/**
 * The rules of approvals, once for every store (SQLite, PostgreSQL): what a call's newest request means for the
 * engine, what a new request holds, and whether a person may decide a request (separation of duties, the two-person
 * rule, expiry). Pure: rows in, a verdict out; each store applies the verdict with its own conditional updates.
 */
import { randomBytes } from 'node:crypto';
import { and, asc, desc, eq, gt, inArray, isNull, lte, ne, or, sql, type Column, type SQL } from 'drizzle-orm';
import type { ApprovalRow, ApprovalVoteRow } from '@/db/schema';
import { AppError, isError } from '@/lib/errors';
import { redact } from '@/lib/audit/redact';
import { principalLabel, type ApprovalState, type Principal, type Role } from '@/lib/permissions';
import type { GateRisk } from '@/lib/permissions/gates';
import type { Step } from '@/db/dialect';
import { storedCanonical } from './binding';
import { proofProblem, trailProblem, type ApprovalBinding, type TrailProof, type TrailRow } from './trail';

export const DEFAULT_DECIDER_ROLES = 'operator,admin';
export const EXPIRED_REASON = 'Expired before an operator decided it.';

export const nowSeconds = () => Date.now() / 1000;

export function newApprovalId(): string {
  return `apr_${randomBytes(12).toString('base64url')}`;
}


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
  /** the MCP client that made the call, as it named itself (ToolContext.client): shown on the approval card */
  client?: string;
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

/** How an approval request names who asked: `agent:<name>` for an agent token, the user name otherwise. */
export function requesterOf(principal: Pick<Principal, 'kind' | 'id' | 'onBehalfOf'>): string {
  return principalLabel(principal);
}

/**
 * May this principal use the approvals an agent asked for, besides its own? Only an administrator acts for an agent
 * (the explicit rule of who may; never a viewer, an auditor or an operator, who would otherwise run an agent's approved
 * call in its place).
 */
export function actsForAgents(principal: Pick<Principal, 'kind' | 'role'>): boolean {
  return principal.kind === 'user' && principal.role === 'admin';
}

/**
 * Who uses (consumes) an approval when this principal's call runs: the caller that really asks (an administrator
 * naming another subject through AuthZEN is `actor`), so that the trail names them, not the one they acted for.
 */
export function consumerOf(principal: Principal): Decider {
  const who = principal.actor ?? principal;
  return { id: requesterOf(who), role: who.role };
}

/** What the state of a call is made of: the columns of its newest approval that stateOf reads. */
export type ApprovalStateFacts = Pick<ApprovalRow, 'id' | 'status' | 'expiresAt' | 'decidedAt' | 'decisionReason'>;

/**
 * The state of this exact call for the engine, from its newest request. A consumed approval is spent (the call asks
 * again); a rejection or expiry denies the same call until it is older than its gate's expiry window. A read never
 * writes: a request past its expiry reads as expired (the sweeper records it).
 */
export function stateOf(row: ApprovalStateFacts | undefined, ttlSeconds: number, at = nowSeconds()): ApprovalState {
  if (!row || row.status === 'consumed') return { status: 'none' };
  const status = row.status === 'pending' && row.expiresAt <= at ? 'expired' : row.status;
  const settledAt = status === 'expired' ? (row.decidedAt ?? row.expiresAt) : row.decidedAt;
  if ((status === 'rejected' || status === 'expired') && (settledAt ?? 0) + ttlSeconds < at) return { status: 'none' };
  return { status, id: row.id, reason: row.decisionReason ?? undefined };
}

/** What the newest approval of a call is read for: its state, and what the trail must bind it to when it is approved. */
export type NewestFacts = ApprovalStateFacts & Pick<ApprovalRow, 'gate' | 'approvalsRequired'>;

/** The reads the state of a call needs: answered at once (SQLite's prepared statements) or as promises (PostgreSQL). */
export interface CallStateReads {
  /** the newest approval of the call asked by `requestedBy` (an approval belongs to who asked for it) */
  newest(requestedBy: string): Step<NewestFacts | undefined>;
  /** the audit events of one approval (trail.ts) */
  trail(approvalId: string): Step<TrailRow[]>;
  /** the newest checkpoint of security_events */
  checkpoint(): Step<{ size: number | string; note: string } | undefined>;
  /** the row_hash of one security event */
  rowHash(id: number): Step<{ rowHash: string | null } | undefined>;
  /** how many security events have ids from `from` to `to` */
  count(from: number, to: number): Step<{ n: number | string } | undefined>;
  /** what opens checkpoints and what the key folder remembers (trail.ts TrailProof) */
  proof: TrailProof;
}

/**
 * The state of this exact call for the engine, as `principal` asks it, as a generator of its reads (driven at once on
 * SQLite, awaited on PostgreSQL): the newest approval the principal requested decides (stateOf). An approved, unused
 * approval counts only when the audit trail holds it (trail.ts): the one case that reads the trail. An administrator
 * may also use the approved call of the agent it names (actsForAgents): a second lookup, for them only.
 */
export function* callState(reads: CallStateReads, call: Pick<ApprovalBinding, 'agentName' | 'toolName' | 'argumentsHash'>, ttlSeconds: number, principal: Principal): Generator<Step<unknown>, ApprovalState, unknown> {
  const own = yield* requesterState(reads, call, requesterOf(principal), ttlSeconds);
  if (own.status === 'approved' || !actsForAgents(principal)) return own;
  const agents = yield* requesterState(reads, call, `agent:${call.agentName}`, ttlSeconds);
  return agents.status === 'approved' ? agents : own;
}

function* requesterState(reads: CallStateReads, call: Pick<ApprovalBinding, 'agentName' | 'toolName' | 'argumentsHash'>, requestedBy: string, ttlSeconds: number): Generator<Step<unknown>, ApprovalState, unknown> {
  const row = (yield reads.newest(requestedBy)) as NewestFacts | undefined;
  const state = stateOf(row, ttlSeconds);
  if (state.status !== 'approved' || !row) return state;
  const events = (yield reads.trail(row.id)) as TrailRow[];
  const problem = trailProblem({ ...row, ...call, requestedBy }, events);
  if (problem) return { status: 'unverified', id: row.id, reason: problem };
  // Every event of the approval still in the chain, up to its newest signed checkpoint: a consumption or a rejection
  // taken out of the trail (with the row reset) does not reopen the gate.
  const firstId = Number(events[0]!.id);
  const read = (yield reads.checkpoint()) as { size: number | string; note: string } | undefined;
  const cp = read ? { size: Number(read.size), note: read.note } : undefined;
  const covered = cp !== undefined && cp.size >= firstId;
  const head = covered ? ((yield reads.rowHash(cp.size)) as { rowHash: string | null } | undefined)?.rowHash : undefined;
  const count = covered ? Number(((yield reads.count(firstId, cp.size)) as { n: number | string } | undefined)?.n ?? 0) : 0;
  const unproven = proofProblem(firstId, cp, head, count, reads.proof);
  return unproven ? { status: 'unverified', id: row.id, reason: unproven } : state;
}

/** The row of a new pending request: bound to `hash` (the keyed hash of its arguments), its secrets never stored. */
export function newRequestRow(r: ApprovalRequest, hash: string, at = nowSeconds()): ApprovalRow {
  return {
    id: newApprovalId(),
    gate: r.gate,
    agentName: r.agent,
    toolName: r.tool,
    argumentsCanonical: storedCanonical(r.arguments),
    argumentsRedacted: JSON.stringify(redact(r.arguments)),
    argumentsHash: hash,
    toolCallId: r.toolCallId ?? null,
    requestedBy: r.requestedBy,
    requestedAt: at,
    expiresAt: at + r.expiresInSeconds,
    ruleSource: r.ruleSource,
    reason: r.reason,
    status: 'pending',
    decidedBy: null,
    decidedAt: null,
    decisionReason: null,
    consumedAt: null,
    consumedBy: null,
    approvalsRequired: r.approvalsRequired ?? 1,
    approverRoles: r.approverRoles?.join(',') ?? DEFAULT_DECIDER_ROLES,
    risk: r.risk ?? 'medium',
    gateDescription: r.gateDescription ?? null,
    reportedAt: null,
    decisionId: r.decisionId ?? null,
    // Named by the client itself: bounded like the check API bounds it, whoever built the request.
    client: r.client?.trim().slice(0, 200) || null,
  };
}

/** What closing an expired request sets. */
export function expiredFields(row: Pick<ApprovalRow, 'expiresAt'>) {
  return { status: 'expired' as const, decidedBy: 'system', decidedAt: row.expiresAt, decisionReason: EXPIRED_REASON };
}

/**
 * Why a person's decision was refused (each refusal is recorded, naming who tried: approval.refused): the rules of
 * separation of duties, and a request no longer open to a decision (decided by someone else already, or expired).
 */
export type ApprovalRefusal = 'self_decision' | 'role_not_allowed' | 'second_vote_by_same_person' | 'already_decided' | 'expired';

/** What a person's decision does to a request. */
export type Verdict =
  /** past its expiry: close it as expired (and refuse the decision) */
  | { kind: 'expire' }
  /** the decision settles the request: rejected, or approved by the last approval needed (the vote is recorded too) */
  | { kind: 'settle'; to: Pick<ApprovalRow, 'status' | 'decidedBy' | 'decidedAt' | 'decisionReason'>; vote: boolean; given: number }
  /** one more approval, more are needed */
  | { kind: 'vote'; given: number };

/**
 * May `by` decide this request now, and what follows? Throws AppError for a refusal (FORBIDDEN with `refusal`) or a
 * request that is no longer pending (CONFLICT). `votes`: the approvals given so far.
 */
export function judge(row: ApprovalRow, votes: readonly ApprovalVoteRow[], action: 'approve' | 'reject', by: Decider, reason: string | null, at = nowSeconds()): Verdict {
  // Past its expiry, it is expired whatever the sweeper has done so far, and nobody can decide it.
  if (row.status === 'pending' && row.expiresAt <= at) return { kind: 'expire' };
  if (row.requestedBy === by.id) {
    throw new AppError('FORBIDDEN', 'Separation of duties: the principal who requested a call cannot decide its approval.', { refusal: 'self_decision' });
  }
  const roles = row.approverRoles.split(',');
  if (!roles.includes(by.role)) {
    throw new AppError('FORBIDDEN', `Gate "${row.gate}" is decided by ${roles.join(' or ')}; your role is ${by.role}.`, { refusal: 'role_not_allowed' });
  }
  if (row.status !== 'pending') throw alreadyDecided(row);
  if (action === 'reject') return { kind: 'settle', to: { status: 'rejected', decidedBy: by.id, decidedAt: at, decisionReason: reason }, vote: false, given: votes.length };
  if (votes.some((v) => v.approver === by.id)) {
    throw new AppError('FORBIDDEN', `You already gave approval 1 of ${row.approvalsRequired}; a second person must give the next one (two-person rule).`, {
      refusal: 'second_vote_by_same_person',
    });
  }
  const given = votes.length + 1;
  if (given < row.approvalsRequired) return { kind: 'vote', given };
  return { kind: 'settle', to: { status: 'approved', decidedBy: by.id, decidedAt: at, decisionReason: reason }, vote: true, given };
}

/**
 * The time of a decision on a request with these votes: now, or a millisecond after the latest vote if the clock has not
 * moved past it (two votes in one millisecond, or a clock set back). The votes are listed in time order, so two votes
 * never share a time and the order in which people approved is never lost.
 */
export function decisionTime(votes: readonly Pick<ApprovalVoteRow, 'at'>[], at = nowSeconds()): number {
  const latest = votes.reduce((max, v) => Math.max(max, v.at), -Infinity);
  return at > latest ? at : latest + 0.001;
}

/** The refusal of a decision on a request that is no longer pending. */
export function alreadyDecided(current: ApprovalRow): AppError {
  return new AppError(
    'CONFLICT',
    `This request is already ${current.status === 'consumed' ? 'approved and run' : current.status}${current.decidedBy && current.decidedBy !== 'system' ? ` (by ${current.decidedBy})` : ''}.`,
    { refusal: 'already_decided', status: current.status, decided_by: current.decidedBy, decided_at: current.decidedAt },
  );
}

/** The refusal of a decision on a request that expired. */
export function expiredConflict(expiresAt: number): AppError {
  return new AppError('CONFLICT', `This request expired at ${new Date(expiresAt * 1000).toISOString()} before anyone decided it.`, { refusal: 'expired', status: 'expired' });
}

/** The refusal rule of an error thrown by judge(), if it is one. */
export function refusalOf(error: unknown): ApprovalRefusal | undefined {
  return isError(error, AppError) ? (error.details as { refusal?: ApprovalRefusal } | undefined)?.refusal : undefined;
}

/** The filter of an approval list (the queue, the history), as the API and the pages give it. */
export interface ApprovalListFilter {
  status?: ApprovalRow['status'] | 'decided';
  gate?: string;
  agent?: string;
  decided_by?: string;
  limit?: number;
}

type ApprovalColumns = Record<'id' | 'status' | 'expiresAt' | 'decidedBy' | 'gate' | 'agentName' | 'requestedAt' | 'decidedAt', Column>;

/** The condition and the order of an approval list, for either database's approvals table. */
export function approvalListQuery(t: ApprovalColumns, filter: ApprovalListFilter): { where: SQL | undefined; orderBy: SQL; limit: number } {
  const c: SQL[] = [];
  if (filter.status === 'decided') c.push(ne(t.status, 'pending'));
  else if (filter.status) c.push(eq(t.status, filter.status));
  if (filter.status === 'pending') c.push(gt(t.expiresAt, nowSeconds()));
  // Who decided: the person who settled it, or any who approved it before (both people of a two-person decision).
  if (filter.decided_by) {
    c.push(or(eq(t.decidedBy, filter.decided_by), sql`EXISTS (SELECT 1 FROM approval_votes v WHERE v.approval_id = ${t.id} AND v.approver = ${filter.decided_by})`)!);
  }
  if (filter.gate) c.push(eq(t.gate, filter.gate));
  if (filter.agent) c.push(eq(t.agentName, filter.agent));
  // The queue is oldest first (who waited longest); the history newest decision first.
  const orderBy = filter.status === 'pending' ? asc(t.requestedAt) : desc(sql`coalesce(${t.decidedAt}, ${t.requestedAt})`);
  return { where: c.length ? and(...c) : undefined, orderBy, limit: filter.limit ?? 200 };
}

type OutcomeColumns = Record<'agentName' | 'requestedBy' | 'status' | 'reportedAt' | 'expiresAt' | 'requestedAt' | 'id', Column>;

/**
 * What an agent runtime that asked must settle, for either database's approvals table: its approved calls not yet run,
 * and its rejected or expired calls not yet reported (a request past its expiry that the sweeper has not closed yet
 * counts as expired), oldest first (ties in the same millisecond by id, so that every read gives one order).
 */
export function outcomesQuery(t: OutcomeColumns, agent: string, requestedBy: string): { where: SQL | undefined; orderBy: SQL } {
  return {
    where: and(
      eq(t.agentName, agent),
      eq(t.requestedBy, requestedBy),
      or(
        eq(t.status, 'approved'),
        and(inArray(t.status, ['rejected', 'expired']), isNull(t.reportedAt)),
        and(eq(t.status, 'pending'), lte(t.expiresAt, nowSeconds()), isNull(t.reportedAt)),
      ),
    ),
    orderBy: sql`${t.requestedAt} ASC, ${t.id} ASC`,
  };
}
