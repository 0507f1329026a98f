/**
 * What a console page shows while the server reads its data (after signing in, on every navigation): the shell and
 * its navigation at once, and this line in place of the page, never a blank screen. Each section's loading.tsx; the
 * section's layout checks the role first, so a refusal still answers 403.
 */
export function PageLoading() {
  return (
    <p className="muted" role="status" aria-live="polite">
      Loading…
    </p>
  );
}
