'use client';

import { useSyncExternalStore } from 'react';
import { localDateTime, utcDateTime } from './format';

const never = () => () => {};

/**
 * A time in the reader's zone, UTC on hover. The server cannot know the reader's zone, so the first render (on the
 * server and while hydrating) writes UTC, and the browser switches to local time at once: no hydration mismatch.
 */
export function LocalTime({ seconds, className }: { seconds: number; className?: string }) {
  const inBrowser = useSyncExternalStore(
    never,
    () => true,
    () => false,
  );
  return (
    <time dateTime={new Date(seconds * 1000).toISOString()} title={utcDateTime(seconds)} className={className}>
      {inBrowser ? localDateTime(seconds) : utcDateTime(seconds)}
    </time>
  );
}
