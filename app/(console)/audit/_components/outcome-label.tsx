import styles from '@/app/(console)/audit/audit.module.css';
import { outcomeText } from './vocabulary';

/** An event's outcome: a mark and a word, the colour only repeating them. */
export function OutcomeLabel({ outcome }: { outcome: string }) {
  const o = outcomeText(outcome);
  return (
    <span className={`${styles.outcome} ${styles[`outcome_${outcome}`] ?? ''}`}>
      <span aria-hidden="true">{o.mark}</span> {o.label}
    </span>
  );
}
