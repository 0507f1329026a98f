/** A timestamp (seconds since the epoch) shown in UTC, with the exact ISO value on hover. */
export function Time({ seconds }: { seconds: number }) {
  const d = new Date(seconds * 1000);
  const iso = d.toISOString();
  return (
    <time dateTime={iso} title={iso}>
      {iso.slice(0, 19).replace('T', ' ')} UTC
    </time>
  );
}

export function ago(seconds: number, now = Date.now() / 1000): string {
  const s = Math.max(0, Math.round(now - seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d`;
}
