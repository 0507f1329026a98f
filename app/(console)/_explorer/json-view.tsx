import type { ReactNode } from 'react';
import styles from './explorer.module.css';

/** The value the trail stores in place of a secret (lib/audit/redact.ts). */
export const REDACTED = '[REDACTED]';

/** Pretty JSON with redacted values and cut markers set apart, so an auditor sees at once what was withheld. */
export function JsonView({ value, depth = 0 }: { value: unknown; depth?: number }): ReactNode {
  const indent = '  '.repeat(depth + 1);
  const close = '  '.repeat(depth);
  if (value === null) return <span className={styles.jsonLiteral}>null</span>;
  if (typeof value === 'string') {
    if (value === REDACTED) return <span className={styles.redacted} title="The value was redacted before it was stored">redacted</span>;
    if (/…\[truncated: \d+ more characters\]$/.test(value)) {
      const cut = value.lastIndexOf('…[truncated');
      return (
        <span className={styles.jsonString}>
          {JSON.stringify(value.slice(0, cut))}
          <span className={styles.truncated}>{value.slice(cut)}</span>
        </span>
      );
    }
    return <span className={styles.jsonString}>{JSON.stringify(value)}</span>;
  }
  if (typeof value === 'number' || typeof value === 'boolean') return <span className={styles.jsonLiteral}>{String(value)}</span>;
  if (typeof value === 'object') {
    // An array's items and an object's entries alike, one a line; only an object's show their keys.
    const array = Array.isArray(value);
    const items = array ? value.map((v, i) => [String(i), v] as const) : Object.entries(value as Record<string, unknown>);
    if (items.length === 0) return array ? '[]' : '{}';
    return (
      <>
        {array ? '[\n' : '{\n'}
        {items.map(([k, v], i) => (
          <span key={k}>
            {indent}
            {array ? null : (
              <>
                <span className={k === '[truncated]' ? styles.truncated : styles.jsonKey}>{JSON.stringify(k)}</span>:{' '}
              </>
            )}
            <JsonView value={v} depth={depth + 1} />
            {i < items.length - 1 ? ',\n' : '\n'}
          </span>
        ))}
        {close}
        {array ? ']' : '}'}
      </>
    );
  }
  return String(value);
}
