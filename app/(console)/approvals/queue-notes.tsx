import styles from './approvals.module.css';
import type { Note } from './use-notes';

/** The queue's notes, read out politely as they come (role status). */
export function QueueNotes({ notes }: { notes: readonly Note[] }) {
  return (
    <div className={styles.notes} role="status" aria-live="polite">
      {notes.map((n) => (
        <p key={n.id} className={n.kind === 'error' ? styles.noteError : styles.note}>
          {n.text}
        </p>
      ))}
    </div>
  );
}
