import type { Approval } from './approval-types';

export interface Operator {
  /** the signed-in principal */
  me: string;
  myRole?: string;
  /** requests this operator gave a (non-final) approval to here, in case the server does not show it yet */
  mine: ReadonlySet<string>;
}

/** Why this operator cannot approve a request, in words, or null when they can. */
export function blockedReason(a: Approval, { me, myRole, mine }: Operator): string | null {
  if (a.approvals.some((g) => g.by === me) || mine.has(a.id)) {
    return a.approvals_required === 2 ? 'You gave the first approval; a second operator must approve it.' : 'You approved it already; another operator must approve it.';
  }
  if (a.requested_by === me) return 'You requested this call; another operator must approve it.';
  // (no role listed: the page names none)
  if (myRole && a.approver_roles.length > 0 && !a.approver_roles.includes(myRole)) {
    return `The “${a.gate}” gate is approved by ${a.approver_roles.join(' or ')}; your role is ${myRole}.`;
  }
  return null;
}
