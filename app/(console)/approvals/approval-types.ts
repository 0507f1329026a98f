import type { approvalToJson } from '../../../lib/approvals/store';

/** One approval as the API returns it. */
export type ApprovalView = ReturnType<typeof approvalToJson>;
