/**
 * An approval opens its gate only when the chained audit trail holds it (issue 23). The approvals table says what a
 * call's state is, but anyone who can write the database file can change a row of it (a rejection made an approval, a
 * spent approval made unused, another call's arguments, fewer approvals needed); the security events are hash-chained,
 * signed at checkpoints and verified. So before an approved, unused approval lets a call run, the events of that
 * approval are read (one indexed lookup, in this one case only) and must hold: each event matches its own hash; the
 * request and the `approval.approved` events name this very call (agent, tool, arguments hash, gate, requester); the
 * approvals come from as many distinct people as the gate needed when the call asked (the request's event says it),
 * with a role it accepted, none of them the requester, the last one completing it; and nothing recorded the approval
 * consumed, rejected or expired. Anything else is a mismatch: the approval is not used (the call
 * asks again, and the mismatch is recorded as `approval.unverified`).
 *
 * What this does not catch on its own: a forged event appended at the head of the chain with hashes recomputed, which
 * only the signed (and witnessed) checkpoints and `swarm audit verify` reveal.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { ApprovalRow } from '@/db/schema';
import { CHAIN_COLUMNS, chainHash, encodeRow } from '@/lib/audit/trail/chain';

/** A security event as both databases return it: its id, the chained columns, and the hashes. */
export interface TrailRow {
  id: number | string;
  decision_id: string | null;
  type: string;
  actor: string;
  actor_role: string | null;
  outcome: string;
  target: string | null;
  detail_json: string | null;
  policy_revision: string | null;
  ip: string | null;
  timestamp: number;
  prev_hash: string | null;
  row_hash: string | null;
}

/** The events of one approval (its id is the events' target), oldest first; one parameter, `?` or `$1`. */
export function trailSql(param: '?' | '$1'): string {
  return `SELECT id, ${CHAIN_COLUMNS.security_events.join(', ')}, prev_hash, row_hash FROM security_events WHERE target = ${param} ORDER BY id`;
}

/** The same read as a statement of the dialect port (db/dialect.ts), for either database. */
export function trailQuery(approvalId: string): SQL {
  return sql`SELECT id, ${sql.raw(CHAIN_COLUMNS.security_events.join(', '))}, prev_hash, row_hash FROM security_events WHERE target = ${approvalId} ORDER BY id`;
}

/** What an approval must be bound to in the trail: the row's call, gate, requester and the approvals it needs. */
export type ApprovalBinding = Pick<ApprovalRow, 'id' | 'gate' | 'agentName' | 'toolName' | 'argumentsHash' | 'requestedBy' | 'approvalsRequired'>;

interface ApprovalDetail {
  gate?: unknown;
  agent?: unknown;
  tool?: unknown;
  arguments_hash?: unknown;
  requested_by?: unknown;
  approvals_required?: unknown;
  approver_roles?: unknown;
  complete?: unknown;
}

/** Events that end an approval: after any of them it can never open its gate again. */
const ENDED = new Set(['approval.consumed', 'approval.rejected', 'approval.expired']);

/**
 * Why the trail does not hold this approved, unused approval (a sentence), or undefined when it does. Pure: the rows
 * are the approval's events (trailSql). What the gate asked for is taken from the trail where it says it (the request's
 * event: how many people, which roles), so that an edit of the row between the request and the approvals is caught too.
 */
export function trailProblem(approval: ApprovalBinding, events: readonly TrailRow[]): string | undefined {
  const approvers = new Map<string, string | null>();
  let required = approval.approvalsRequired;
  let roles: readonly unknown[] | undefined;
  let complete = false;
  for (const e of events) {
    const values = CHAIN_COLUMNS.security_events.map((c) => e[c]);
    if (e.row_hash === null || chainHash(e.prev_hash ?? '', Number(e.id), encodeRow(values)) !== e.row_hash) {
      return `security event ${e.id} of the approval does not match its hash (changed after it was recorded)`;
    }
    if (ENDED.has(e.type)) return `the audit trail records it as ${e.type.slice('approval.'.length)} (event ${e.id})`;
    const requested = e.type === 'approval.requested';
    if (!requested && (e.type !== 'approval.approved' || e.outcome !== 'succeeded')) continue;
    const d = parseDetail(e.detail_json);
    if (d.gate !== approval.gate || d.agent !== approval.agentName || d.tool !== approval.toolName || !sameBinding(d, approval, requested)) {
      return `event ${e.id} records ${requested ? 'the request' : 'an approval'} of another call or requester than the approvals row says`;
    }
    if (typeof d.approvals_required === 'number' && d.approvals_required > required) required = d.approvals_required;
    if (requested) {
      if (Array.isArray(d.approver_roles)) roles = d.approver_roles;
      continue;
    }
    if (e.actor === approval.requestedBy) return `event ${e.id} records an approval by the requester itself`;
    approvers.set(e.actor, e.actor_role);
    if (d.complete === true) complete = true;
  }
  if (approvers.size === 0) return 'the audit trail holds no approval of it';
  if (roles) {
    for (const [who, role] of approvers) if (!roles.includes(role)) return `${who} approved it as ${role ?? 'no role'}, a role its gate did not accept when it was asked`;
  }
  if (approvers.size < required || !complete) return `the audit trail holds ${approvers.size} of the ${required} approvals it needs`;
  return undefined;
}

/**
 * Do the arguments hash and the requester of an event match the row? An approval always names them (an approval
 * recorded before they were recorded is not trusted: it asks again). A request recorded before then is let be: its
 * approvals name them.
 */
function sameBinding(d: ApprovalDetail, approval: ApprovalBinding, requested: boolean): boolean {
  if (requested && d.arguments_hash === undefined && d.requested_by === undefined) return true;
  return d.arguments_hash === approval.argumentsHash && d.requested_by === approval.requestedBy;
}

function parseDetail(json: string | null): ApprovalDetail {
  if (!json) return {};
  try {
    const d = JSON.parse(json) as unknown;
    return d !== null && typeof d === 'object' ? (d as ApprovalDetail) : {};
  } catch {
    return {};
  }
}
