'use client';

import type { VisibilityState } from '@tanstack/react-table';
import { useEffect, useState } from 'react';
import { z } from 'zod';

/** Shown unless the reader chooses otherwise: the HTTP request, the tool call id and the row id are a click away. */
export const DEFAULT_VISIBILITY: VisibilityState = { request: false, tool_call_id: false, id: false };
const STORAGE_KEY = 'swarm.denials.columns.v1';
const visibilitySchema = z.record(z.string(), z.boolean());

/** The denial table's column visibility, remembered in this browser. Read after mount: the server cannot know it. */
export function useColumnVisibility(): [VisibilityState, (v: VisibilityState) => void] {
  const [visibility, setVisibility] = useState<VisibilityState>(DEFAULT_VISIBILITY);
  useEffect(() => {
    try {
      const stored = visibilitySchema.safeParse(JSON.parse(window.localStorage.getItem(STORAGE_KEY) ?? 'null'));
      if (stored.success) setVisibility({ ...DEFAULT_VISIBILITY, ...stored.data, timestamp: true });
    } catch {
      // An unreadable entry (or storage switched off) keeps the defaults.
    }
  }, []);
  const update = (v: VisibilityState) => {
    setVisibility(v);
    try {
      window.localStorage.setItem(STORAGE_KEY, JSON.stringify(v));
    } catch {
      // Storage full or switched off: the choice holds for this visit.
    }
  };
  return [visibility, update];
}
