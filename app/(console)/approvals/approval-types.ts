import type { ApprovalJson } from '@/lib/http/responses';

export type Risk = ApprovalJson['risk'];

/** One approval as the API answers it (lib/http/responses.ts, the schema the console's API client parses with). */
export type ApprovalView = ApprovalJson;

/** One approval as the queue renders it (normalize). */
export type Approval = ApprovalJson;

/** What the queue renders of an answer: a blank gate description is none, and at least one approval is required. */
export function normalize(a: ApprovalView): Approval {
  return { ...a, gate_description: a.gate_description?.trim() || null, approvals_required: Math.max(1, Math.floor(a.approvals_required)) };
}
