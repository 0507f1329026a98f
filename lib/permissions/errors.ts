import type { CheckResult } from './types';

/** Thrown by enforce() when the decision is DENY. */
export class PermissionDenied extends Error {
  readonly code = 'PERMISSION_DENIED';
  constructor(readonly result: CheckResult) {
    super(`Permission denied by ${result.ruleSource}: ${result.reason}`);
    this.name = 'PermissionDenied';
  }

  /** the id of the denial in the audit trail */
  get decisionId(): string | undefined {
    return this.result.decisionId;
  }
}

/** Thrown by enforce() when the decision is ASK: a human must approve this exact call first. */
export class ApprovalRequired extends Error {
  readonly code = 'APPROVAL_REQUIRED';
  constructor(readonly result: CheckResult, readonly approvalId: string) {
    super(`Approval required (${result.ruleSource}), approval id ${approvalId}: ${result.reason}`);
    this.name = 'ApprovalRequired';
  }

  get decisionId(): string | undefined {
    return this.result.decisionId;
  }
}
