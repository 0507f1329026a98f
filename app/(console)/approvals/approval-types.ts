import type { ApprovalJson } from '@/lib/http/responses';

export type Risk = 'low' | 'medium' | 'high';

/** One approval given so far on a request (a two-person gate collects two). */
export interface GivenApproval {
  by: string;
  role: string;
  at: number;
  reason: string | null;
}

/** Fields the backend adds to each approval; absent on an older server, so every one is optional here. */
export interface ApprovalExtras {
  gate_description: string | null;
  risk: Risk;
  approvals_required: number;
  approvals: GivenApproval[];
  /** the roles that may approve at this gate; null when the server does not say */
  approver_roles: string[] | null;
}

/** One approval as the API answers it (lib/http/responses.ts, the schema the console's API client parses with). */
type Base = ApprovalJson;

/** One approval as a page may hold it (the newer fields possibly absent: a request recorded before they existed). */
export type ApprovalView = Omit<Base, keyof ApprovalExtras> & Partial<ApprovalExtras>;

/** One approval with every newer field filled in: what the queue renders. */
export type Approval = Omit<Base, keyof ApprovalExtras> & ApprovalExtras;

const RISKS: readonly Risk[] = ['low', 'medium', 'high'];

/** Sensible fallbacks for a server that does not send the newer fields yet. */
export function normalize(a: ApprovalView): Approval {
  const raw = a as ApprovalView & Record<string, unknown>;
  const risk = RISKS.includes(raw.risk as Risk) ? (raw.risk as Risk) : 'medium';
  const required = typeof raw.approvals_required === 'number' && raw.approvals_required >= 1 ? Math.floor(raw.approvals_required) : 1;
  const given = Array.isArray(raw.approvals) ? (raw.approvals as GivenApproval[]).filter((g) => g && typeof g.by === 'string') : [];
  const description = typeof raw.gate_description === 'string' && raw.gate_description.trim() !== '' ? raw.gate_description.trim() : null;
  const roles = Array.isArray(raw.approver_roles) ? (raw.approver_roles as unknown[]).filter((r): r is string => typeof r === 'string') : null;
  return { ...a, gate_description: description, risk, approvals_required: required, approvals: given, approver_roles: roles && roles.length ? roles : null };
}
