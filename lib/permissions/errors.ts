import type { CheckResult } from './types';

/** Thrown by enforce() when the decision is DENY. */
export class PermissionDenied extends Error {
  readonly code = 'PERMISSION_DENIED';
  constructor(readonly result: CheckResult) {
    super(`Permission denied by ${result.ruleSource}: ${result.reason}`);
    this.name = 'PermissionDenied';
  }
}

/** Thrown by enforce() when the decision is ASK: a human must approve this exact call first. */
export class ApprovalRequired extends Error {
  readonly code = 'APPROVAL_REQUIRED';
  constructor(readonly result: CheckResult, readonly approvalId: string) {
    super(`Approval required (${result.ruleSource}), approval id ${approvalId}: ${result.reason}`);
    this.name = 'ApprovalRequired';
  }
}
