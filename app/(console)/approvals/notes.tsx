'use client';

import { useCallback, useState } from 'react';
import styles from './approvals.module.css';

interface Note {
  id: string;
  text: string;
  kind: 'info' | 'error';
}

/** How long a note stays: long enough to be read after looking away, short enough not to pile up. */
const NOTE_MS = 15_000;

/**
 * The queue's notes (what was decided, by whom, what failed): the newest five, each for 15 s. A note said again
 * replaces the one it repeats (and stays its 15 s from now) instead of stacking.
 */
export function useNotes() {
  const [notes, setNotes] = useState<Note[]>([]);
  const note = useCallback((text: string, kind: Note['kind'] = 'info') => {
    const id = `${Date.now()}-${Math.random()}`;
    setNotes((n) => [...n.filter((x) => x.text !== text).slice(-4), { id, text, kind }]);
    setTimeout(() => setNotes((n) => n.filter((x) => x.id !== id)), NOTE_MS);
  }, []);
  return { notes, note };
}

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
