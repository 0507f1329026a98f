/** The 403 content of a console page: says who was refused, by which rule, and that it was recorded. */
export function Forbidden({ ruleSource, reason }: { ruleSource: string; reason: string }) {
  return (
    <section className="panel forbidden" aria-labelledby="forbidden-title">
      <h1 id="forbidden-title">You do not have access to this page</h1>
      <p>{reason}</p>
      <p className="muted">
        Refused by <code>{ruleSource}</code>. This refusal has been recorded in the audit trail.
      </p>
    </section>
  );
}
