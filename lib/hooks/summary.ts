/** One line in words for what a hook did, as the trace and the audit row show it. */
import type { HookOutcome } from '@/lib/permissions/call-hooks';

const DID: Record<Exclude<HookOutcome['outcome'], 'rewrote'>, string> = { passed: 'let the call through', skipped: 'did not run', failed: 'failed', blocked: 'blocked the call' };

export function hookSummary(h: HookOutcome): string {
  const what = h.outcome === 'rewrote' ? `rewrote the arguments (${(h.changed ?? []).join(', ')})` : DID[h.outcome];
  return `${h.action} hook ${what}${h.reason && h.outcome !== 'rewrote' ? `: ${h.reason}` : ''}${h.ms !== undefined ? ` (${h.ms} ms)` : ''}`;
}
