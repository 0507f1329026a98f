/**
 * What a console page shows while the server reads its data (after signing in, on every navigation): the shell with
 * its navigation at once, and this line in place of the page, never a blank screen.
 */
export default function Loading() {
  return (
    <p className="muted" role="status" aria-live="polite">
      Loading…
    </p>
  );
}
