import type { CheckResult } from './types';
import { brand } from '@/lib/errors';

/** Thrown by enforce() when the decision is DENY. */
export class PermissionDenied extends Error {
  static readonly kind = 'PermissionDenied';
  readonly code = 'PERMISSION_DENIED';
  constructor(readonly result: CheckResult) {
    super(`Permission denied by ${result.ruleSource}: ${result.reason}`);
    brand(this, PermissionDenied);
  }

  /** the id of the denial in the audit trail */
  get decisionId(): string | undefined {
    return this.result.decisionId;
  }
}

/** Thrown by enforce() when the decision is ASK: a human must approve this exact call first. */
export class ApprovalRequired extends Error {
  static readonly kind = 'ApprovalRequired';
  readonly code = 'APPROVAL_REQUIRED';
  constructor(readonly result: CheckResult, readonly approvalId: string) {
    super(`Approval required (${result.ruleSource}), approval id ${approvalId}: ${result.reason}`);
    brand(this, ApprovalRequired);
  }

  get decisionId(): string | undefined {
    return this.result.decisionId;
  }
}

/** A decision as an outcome to act on: an ALLOW is returned; a DENY throws PermissionDenied, an ASK ApprovalRequired. */
export function enforced(result: CheckResult): CheckResult {
  if (result.decision === 'DENY') throw new PermissionDenied(result);
  if (result.decision === 'ASK') throw new ApprovalRequired(result, result.approvalId ?? '');
  return result;
}
