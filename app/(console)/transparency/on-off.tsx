import styles from './transparency.module.css';

/** A flag value: always the word, with a shape beside it, never colour alone. */
export function OnOff({ value, compact = false }: { value: boolean | null; compact?: boolean }) {
  if (value === null) return <span className="muted">unknown</span>;
  return (
    <span className={`${value ? styles.on : styles.off} ${compact ? styles.compact : ''}`}>
      <span aria-hidden="true" className={styles.mark}>
        {value ? '●' : '○'}
      </span>
      {value ? 'On' : 'Off'}
    </span>
  );
}
