/** One line in words for what a hook did, as the trace and the audit row show it. */
import type { HookOutcome } from '@/lib/permissions/call-hooks';

export function hookSummary(h: HookOutcome): string {
  const what =
    h.outcome === 'rewrote'
      ? `rewrote the arguments (${(h.changed ?? []).join(', ')})`
      : h.outcome === 'passed'
        ? 'let the call through'
        : h.outcome === 'skipped'
          ? 'did not run'
          : h.outcome === 'failed'
            ? 'failed'
            : 'blocked the call';
  return `${h.action} hook ${what}${h.reason && h.outcome !== 'rewrote' ? `: ${h.reason}` : ''}${h.ms !== undefined ? ` (${h.ms} ms)` : ''}`;
}
