import kit from '@/app/(console)/_explorer/explorer.module.css';
import { JsonView, REDACTED } from '@/app/(console)/_explorer/json-view';

/** The arguments of a denied call as the trail stored them: redacted values and cuts set apart. */
export function DenialArguments({ json }: { json: string | null }) {
  if (json === null) return <p className="muted">No arguments were recorded (an HTTP request, or a call without arguments).</p>;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return <pre className={kit.json}>{json}</pre>;
  }
  const redacted = json.includes(`"${REDACTED}"`);
  return (
    <>
      <pre className={kit.json} data-testid="denial-arguments" tabIndex={0} aria-label="Arguments">
        <JsonView value={parsed} />
      </pre>
      {redacted ? <p className={kit.fieldNote}>Values marked “redacted” were removed before the denial was stored (secret-named keys).</p> : null}
    </>
  );
}
