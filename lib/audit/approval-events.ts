/**
 * What an approval's transition leaves in the audit trail, for every store: a security event for each transition (a
 * request, each person's approval, a rejection, an expiry, a run, a refused attempt), and for a rejection or an expiry
 * also a denial, attributed to the gate, with the decision id of the call that asked. Written by one function for both
 * applications (recordApprovalTransition), through the recorder the engine uses, inside the transition's transaction.
 */
import { step, type Step, type TxRunner, type TxSteps } from '@/db/dialect';
import type { ApprovalEvent } from '@/lib/approvals/store';
import type { SecurityEvent } from '@/lib/permissions';
import type { DenialInput } from './trail/recorder';
import { maskedArgumentsJson } from './redact';

export function approvalSecurityEvent(e: ApprovalEvent): SecurityEvent {
  const row = e.row;
  return {
    kind: 'approval',
    type: `approval.${e.type}`,
    actor: e.by?.id ?? (e.type === 'requested' || e.type === 'consumed' ? row.requestedBy : 'system'),
    actorRole: e.by?.role ?? null,
    outcome: e.type === 'refused' || e.type === 'unverified' ? 'refused' : 'succeeded',
    target: row.id,
    decisionId: row.decisionId,
    detail: {
      gate: row.gate,
      agent: row.agentName,
      tool: row.toolName,
      // What binds the approval to one call and one requester, and what its gate asks for, in the chained trail: an
      // approval lets a call run only when these events hold it (lib/approvals/trail.ts), whatever its row says. A
      // consumption by someone else than the requester (an administrator acting for the agent) shows here too.
      arguments_hash: row.argumentsHash,
      requested_by: row.requestedBy,
      approvals_required: row.approvalsRequired,
      ...(e.type === 'requested' ? { approver_roles: row.approverRoles.split(',') } : {}),
      ...(e.given === undefined ? {} : { approvals_given: e.given, complete: e.given >= row.approvalsRequired }),
      ...(e.problem ? { problem: e.problem } : {}),
      ...(e.type === 'rejected' || e.type === 'approved' ? { reason: row.decisionReason } : {}),
      ...(e.type === 'expired' ? { expired_at: row.expiresAt } : {}),
      ...(e.refusal ? { refusal: e.refusal.rule, message: e.refusal.message } : {}),
    },
  };
}

/** The denial a rejected or expired request is (undefined for the other transitions). */
export function approvalDenial(e: ApprovalEvent, maskKeys: ReadonlySet<string>): DenialInput | undefined {
  if (e.type !== 'rejected' && e.type !== 'expired') return undefined;
  const row = e.row;
  const masked = maskKeys.size > 0 ? maskedArgumentsJson(JSON.parse(row.argumentsRedacted) as unknown, maskKeys) : undefined;
  return {
    toolCallId: row.toolCallId,
    toolName: row.toolName,
    agentName: row.agentName,
    argumentsJson: masked ? masked.json : row.argumentsRedacted,
    ...(masked && masked.maskedPaths.length > 0 ? { maskedPaths: JSON.stringify(masked.maskedPaths) } : {}),
    ruleSource: row.ruleSource,
    reason: row.status === 'rejected' ? `Rejected by ${row.decidedBy}: ${row.decisionReason ?? ''}`.trim() : `Approval ${row.id} expired before an operator decided it.`,
    userRole: null,
    principal: row.requestedBy,
    traceJson: null,
    decisionId: row.decisionId,
    // An expiry is recorded at the moment the request expired, not when the sweeper noticed it.
    timestamp: row.status === 'expired' ? row.expiresAt : undefined,
  };
}

/**
 * The recorder the engine uses, as an approval's transition writes through it: inside the transition's transaction
 * (`tx`, a transaction of the dialect port), so that the audit rows commit with the transition or neither does. SQLite's
 * recorder writes at once on the transaction's connection, PostgreSQL's on the connection the transaction holds.
 */
export interface TransitionRecorder {
  recordWithin(tx: TxRunner, event: SecurityEvent): Step<unknown>;
  appendDenialWithin(tx: TxRunner, denial: DenialInput): Step<unknown>;
}

/**
 * The audit rows of one approval transition, on either database: its security event, and for a rejection or an expiry
 * its denial (with the active profiles' masking). The one writer of these rows: both applications call it from the
 * approval store's listener (ApprovalListener.inTransaction).
 */
export function* recordApprovalTransition(recorder: TransitionRecorder, e: ApprovalEvent, tx: TxRunner, maskKeys: ReadonlySet<string>): TxSteps<void> {
  yield* step(recorder.recordWithin(tx, approvalSecurityEvent(e)));
  const denial = approvalDenial(e, maskKeys);
  if (denial) yield* step(recorder.appendDenialWithin(tx, denial));
}
