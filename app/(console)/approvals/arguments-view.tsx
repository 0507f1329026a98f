/**
 * Tool arguments, readable at a glance: one line per argument, long values folded behind a disclosure,
 * redacted values shown as redacted. With `markProduction`, values that point at production (env prod, target live…)
 * are marked in text ("production"), in bold and framed, never by colour alone.
 */
import { isProductionValue } from './approval-text';
import styles from './approvals.module.css';

const FOLD_AT = 120;

/** A production value with its text label; `data-production` lets tests and styles find it. */
export function ProductionValue({ text }: { text: string }) {
  return (
    <mark className={styles.prodValue} data-production="true">
      <code>{text}</code>
      <span className={styles.prodLabel}>
        <span aria-hidden="true">⚠ </span>production
      </span>
    </mark>
  );
}

function render(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

export function ArgumentsView({ args, markProduction = false }: { args: unknown; markProduction?: boolean }) {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    return <pre className="args-block">{JSON.stringify(args, null, 2)}</pre>;
  }
  const entries = Object.entries(args as Record<string, unknown>);
  if (entries.length === 0) return <span className="muted">no arguments</span>;
  return (
    <dl className="args-list">
      {entries.map(([key, value]) => {
        const text = render(value);
        const redacted = text === '[REDACTED]';
        return (
          <div key={key} className="args-row">
            <dt>{key}</dt>
            <dd>
              {redacted ? (
                <span className="redacted">redacted</span>
              ) : text.length > FOLD_AT || text.includes('\n') ? (
                <details>
                  <summary>
                    <code>{text.slice(0, 60).replace(/\s+/g, ' ')}…</code> <span className="muted">({text.length} characters)</span>
                  </summary>
                  <pre className="args-block">{text}</pre>
                </details>
              ) : markProduction && isProductionValue(key, value) ? (
                <ProductionValue text={text} />
              ) : (
                <code>{text}</code>
              )}
            </dd>
          </div>
        );
      })}
    </dl>
  );
}
