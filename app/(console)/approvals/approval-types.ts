import type { ApprovalJson } from '@/lib/http/responses';

export type Risk = ApprovalJson['risk'];

/** One approval as the API answers it (lib/http/responses.ts, the schema the console's API client parses with). */
export type Approval = ApprovalJson;

/** What the queue renders of an answer: a blank gate description is none, and at least one approval is required. */
export function normalize(a: Approval): Approval {
  return { ...a, gate_description: a.gate_description?.trim() || null, approvals_required: Math.max(1, Math.floor(a.approvals_required)) };
}
