/**
 * How the audit page names security events: a readable label for each type the recorder writes
 * (lib/permissions/recorder.ts), the type families the filter offers, and the outcomes in words. The raw type is
 * always shown beside its label; an unknown type (a newer server) still reads sensibly.
 */
import type { Outcome } from './url-state';

const TYPE_LABELS: Record<string, string> = {
  'auth.login.succeeded': 'Signed in',
  'auth.login.failed': 'Sign-in failed',
  'auth.logout': 'Signed out',
  'user.created': 'User created',
  'user.role_changed': 'Role changed',
  'token.created': 'Token created',
  'token.revoked': 'Token revoked',
  'approval.requested': 'Approval requested',
  'approval.approved': 'Call approved',
  'approval.rejected': 'Call rejected',
  'approval.expired': 'Approval expired',
  'approval.consumed': 'Approved call ran',
  'approval.refused': 'Approval refused (separation of duties)',
  'flag.changed': 'Flag changed',
  'flag.refused': 'Flag change refused',
  'config.loaded': 'Configuration loaded',
  'config.refused': 'Configuration refused',
  'profile.switched': 'Profile switched',
  'audit.queried': 'Audit trail read',
  'audit.exported': 'Audit trail exported',
  'audit.verified': 'Integrity verified',
  'audit.explained': 'Decision explained',
  'audit.checkpointed': 'Checkpoint signed',
  'audit.report_generated': 'Audit report generated',
  'retention.archived': 'Rows archived',
  'server.started': 'Server started',
  'server.stopped': 'Server stopped',
  'decision.allowed': 'Call allowed',
  'decision.asked': 'Approval asked',
};

/** "Sign-in failed" for auth.login.failed; an unknown type in words ("widget.spun" → "Widget spun"). */
export function typeLabel(type: string): string {
  const known = TYPE_LABELS[type];
  if (known) return known;
  const words = type.replace(/[._]/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The families the type filter offers, in the order a reader looks for them. */
export const TYPE_FAMILIES: readonly { value: string; label: string }[] = [
  { value: 'auth', label: 'Sign-in and sign-out' },
  { value: 'user', label: 'Users' },
  { value: 'token', label: 'Tokens' },
  { value: 'approval', label: 'Approvals' },
  { value: 'flag', label: 'Feature flags' },
  { value: 'config', label: 'Configuration' },
  { value: 'profile', label: 'Compliance profiles' },
  { value: 'audit', label: 'Audit trail reads and checks' },
  { value: 'retention', label: 'Retention' },
  { value: 'server', label: 'Server start and stop' },
  { value: 'decision', label: 'Allowed and asked decisions' },
];

export function familyLabel(type: string): string | undefined {
  return TYPE_FAMILIES.find((f) => f.value === type)?.label;
}

/** The filter's type in words: "the Users family", "type auth.login.failed". */
export function typeFilterWords(type: string): string {
  const family = familyLabel(type);
  return family ? `${family.toLowerCase()} (${type}.*)` : `type ${type}`;
}

export const OUTCOME_TEXT: Record<Outcome, { label: string; mark: string }> = {
  succeeded: { label: 'Succeeded', mark: '✓' },
  failed: { label: 'Failed', mark: '✕' },
  refused: { label: 'Refused', mark: '⊘' },
};

export function outcomeText(outcome: string): { label: string; mark: string } {
  return OUTCOME_TEXT[outcome as Outcome] ?? { label: outcome, mark: '•' };
}
