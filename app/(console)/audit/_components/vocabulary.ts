/**
 * How the audit page names security events, beside the readable label of each type (lib/audit/event-labels.ts): the
 * type families the filter offers, and the outcomes in words. The raw type is always shown beside its label; an unknown
 * type (a newer server) still reads sensibly.
 */
import type { Outcome } from './url-state';

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
  { value: 'decision', label: 'Logged decisions (allowed and asked, decision_log_all)' },
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
