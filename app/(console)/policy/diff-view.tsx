import { diffCounts, diffParts, lineDiff } from '@/lib/text/line-diff';
import styles from './policy.module.css';

/**
 * One file's change: every changed line with three unchanged ones around it, the old and new line numbers, and a sign
 * for each line (+ added, − removed), so that the change reads without colour.
 */
export function FileDiff({ name, before, after }: { name: string; before: string | null; after: string | null }) {
  const lines = lineDiff(before, after);
  const { added, removed } = diffCounts(lines);
  const parts = diffParts(lines);
  return (
    <section className={styles.diffFile} aria-label={`Changes to ${name}`}>
      <h3 className={styles.diffHead}>
        <code>{name}</code>{' '}
        <span className="muted">
          {before === null ? 'new file' : after === null ? 'removed' : null} +{added} −{removed}
        </span>
      </h3>
      <div className={styles.diffScroll}>
        <table className={styles.diff}>
          <caption className="visually-hidden">
            Lines of {name}: added lines start with +, removed lines with −
          </caption>
          <thead className="visually-hidden">
            <tr>
              <th scope="col">Old line</th>
              <th scope="col">New line</th>
              <th scope="col">Change</th>
              <th scope="col">Text</th>
            </tr>
          </thead>
          <tbody>
            {parts.map((part, n) =>
              part.kind === 'skipped' ? (
                <tr key={n} className={styles.diffSkipped}>
                  <td colSpan={4}>
                    … {part.count} unchanged {part.count === 1 ? 'line' : 'lines'}
                  </td>
                </tr>
              ) : (
                part.lines.map((l, k) => (
                  <tr key={`${n}-${k}`} className={l.kind === 'added' ? styles.diffAdded : l.kind === 'removed' ? styles.diffRemoved : undefined} data-diff={l.kind}>
                    <td className={styles.diffNo}>{l.kind === 'added' ? '' : l.oldNo}</td>
                    <td className={styles.diffNo}>{l.kind === 'removed' ? '' : l.newNo}</td>
                    <td className={styles.diffSign} aria-label={l.kind === 'added' ? 'added' : l.kind === 'removed' ? 'removed' : 'unchanged'}>
                      {l.kind === 'added' ? '+' : l.kind === 'removed' ? '−' : ' '}
                    </td>
                    <td className={styles.diffText}>{l.text}</td>
                  </tr>
                ))
              ),
            )}
          </tbody>
        </table>
      </div>
    </section>
  );
}
