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
 * An event taken out of the trail (a consumption deleted, the row reset) is found by proofProblem below: the chain still
 * holds every id from the approval's first event to the newest signed checkpoint, whose head the row at its size has.
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

/**
 * What proves that none of an approval's events has been taken out of the chain since (a deleted `approval.consumed`
 * would make a spent approval look unused; issue 39): the newest signed checkpoint of security_events, opened with the
 * installation's trusted keys, and the newest head its key folder remembers signing.
 */
export interface TrailProof {
  /** the size and head a checkpoint note signs, when a trusted key signed it; undefined otherwise */
  open(note: string): { size: number; headHash: string } | undefined;
  /** the newest size of security_events the key folder remembers signing for this database (undefined: none known) */
  signedSize(): number | undefined;
}

/**
 * Why the chain cannot be shown to still hold every event of an approval from `firstId` on, or undefined when it can:
 * the newest checkpoint (no older than the key folder remembers: deleted checkpoints are found), signed by a trusted
 * key, whose head the row at its size still has (rows renumbered or rehashed are found), and no id missing from
 * `firstId` to it (a row deleted is found). Events newer than the newest checkpoint (the last few seconds) are taken as
 * they are: docs/threat-model.md says so.
 */
export function proofProblem(
  firstId: number,
  cp: { size: number; note: string } | undefined,
  /** the row_hash of security event `cp.size` */
  headRowHash: string | null | undefined,
  /** how many security events have ids from `firstId` to `cp.size` */
  count: number,
  proof: TrailProof,
): string | undefined {
  const signed = proof.signedSize();
  if (signed !== undefined && (cp === undefined || cp.size < signed)) {
    return `the audit trail's checkpoints end ${cp ? `at row ${cp.size}` : 'before any row'}, but the key folder remembers signing row ${signed} of security events: checkpoints were removed`;
  }
  if (!cp || cp.size < firstId) return undefined;
  const opened = proof.open(cp.note);
  if (!opened || opened.size !== cp.size) return `the newest checkpoint of the security events (row ${cp.size}) is not signed by a trusted key`;
  if (headRowHash !== opened.headHash) return `security event ${cp.size} no longer has the head its checkpoint signed: the trail was rewritten`;
  if (count !== cp.size - firstId + 1) return `${cp.size - firstId + 1 - count} security events between ${firstId} and ${cp.size} are missing from the trail`;
  return undefined;
}

/** No proof to be had (stores built without an application): checkpoints cannot be opened, none is remembered. */
export const NO_PROOF: TrailProof = { open: () => undefined, signedSize: () => undefined };

/** The proof's reads (proofProblem) as statements of the dialect port; SQLite prepares them once (sqlite-ports.ts). */
export const PROOF_QUERIES = {
  checkpoint: sql`SELECT size, note FROM audit_checkpoints WHERE chain = 'security_events' ORDER BY size DESC LIMIT 1`,
  rowHash: (id: number) => sql`SELECT row_hash AS "rowHash" FROM security_events WHERE id = ${id}`,
  count: (from: number, to: number) => sql`SELECT count(*) AS n FROM security_events WHERE id >= ${from} AND id <= ${to}`,
};
