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
