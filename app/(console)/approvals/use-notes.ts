'use client';

import { useCallback, useState } from 'react';

export interface Note {
  id: string;
  text: string;
  kind: 'info' | 'error';
}

/** How long a note stays: long enough to be read after looking away, short enough not to pile up. */
const NOTE_MS = 15_000;

/** The queue's notes (what was decided, by whom, what failed): the newest five, each for 15 s. */
export function useNotes() {
  const [notes, setNotes] = useState<Note[]>([]);
  const note = useCallback((text: string, kind: Note['kind'] = 'info') => {
    const id = `${Date.now()}-${Math.random()}`;
    setNotes((n) => [...n.slice(-4), { id, text, kind }]);
    setTimeout(() => setNotes((n) => n.filter((x) => x.id !== id)), NOTE_MS);
  }, []);
  return { notes, note };
}
