/** Durations as text an operator reads at a glance: "4m", "2h 05m", "3d". */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

/** How urgent the remaining time is: text first, colour only as a second signal. */
export function urgency(secondsLeft: number): { label: string; level: 'ok' | 'soon' | 'now' } {
  if (secondsLeft <= 0) return { label: 'expired', level: 'now' };
  if (secondsLeft < 15 * 60) return { label: `expires in ${formatDuration(secondsLeft)} — urgent`, level: 'now' };
  if (secondsLeft < 2 * 3600) return { label: `expires in ${formatDuration(secondsLeft)} — soon`, level: 'soon' };
  return { label: `expires in ${formatDuration(secondsLeft)}`, level: 'ok' };
}

/** How long ago, in words: "just now", "2 min ago", "3 h ago", "2 days ago". */
export function ago(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  const d = Math.floor(s / 86400);
  return `${d} ${d === 1 ? 'day' : 'days'} ago`;
}
