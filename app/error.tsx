'use client';

/**
 * A page that could not be read (the database unreachable, say, which also keeps the console's frame from knowing who
 * is signed in): a calm page that says so and offers to try again, instead of a bare error. Nothing was changed.
 */
export default function PageError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <main className="page-error">
      <section className="panel forbidden" aria-labelledby="page-error-title" role="alert">
        <h1 id="page-error-title">This page could not be loaded</h1>
        <p>The server could not read what this page shows. The database may be unavailable for a moment; nothing was changed.</p>
        <p>
          <button type="button" className="button button-primary" onClick={() => reset()}>
            Try again
          </button>
        </p>
        {error.digest ? <p className="muted">Reference for the operators: {error.digest}</p> : null}
      </section>
    </main>
  );
}
