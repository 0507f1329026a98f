'use client';

import { useEffect, useState, type FormEvent } from 'react';
import kit from '@/app/(console)/_explorer/explorer.module.css';
import { localDateTime } from '@/app/(console)/_explorer/format';
import type { TimeWindow } from '@/app/(console)/_explorer/time-window';
import styles from '@/app/(console)/denials/denials.module.css';

/** `datetime-local` speaks local time without a zone: YYYY-MM-DDTHH:MM. */
const toLocalInput = (seconds: number | undefined) => (seconds === undefined ? '' : localDateTime(seconds).slice(0, 16).replace(' ', 'T'));
const fromLocalInput = (value: string) => {
  const ms = new Date(value).getTime();
  return Number.isFinite(ms) ? ms / 1000 : undefined;
};

interface Props {
  id: string;
  /** the range in force (from a link, a bar of the chart, or this form) */
  from: number | undefined;
  to: number | undefined;
  onApply: (range: TimeWindow) => void;
  onCancel: () => void;
}

/** A custom range in local time, to the minute; the end minute is included whole. */
export function CustomRangeForm({ id, from, to, onApply, onCancel }: Props) {
  const [range, setRange] = useState({ from: toLocalInput(from), to: toLocalInput(to) });
  const [error, setError] = useState<string | undefined>();
  // The URL is the truth: a range set elsewhere shows up in the fields.
  useEffect(() => {
    setRange({ from: toLocalInput(from), to: toLocalInput(to) });
  }, [from, to]);

  const apply = (e: FormEvent) => {
    e.preventDefault();
    const f = range.from ? fromLocalInput(range.from) : undefined;
    const t = range.to ? fromLocalInput(range.to) : undefined;
    if (f === undefined && t === undefined) return setError('Give a start, an end, or both.');
    if (f !== undefined && t !== undefined && f > t) return setError('The start is after the end.');
    setError(undefined);
    // The end minute is included whole: "to 14:05" means up to 14:05:59.
    onApply({ from: f, to: t === undefined ? undefined : t + 59.999, window: 'all' });
  };

  return (
    <form id={id} className={styles.rangeForm} onSubmit={apply} aria-label="Custom range">
      <label>
        <span className={kit.fieldLabel}>From (local time)</span>
        <input type="datetime-local" value={range.from} onChange={(e) => setRange((r) => ({ ...r, from: e.target.value }))} />
      </label>
      <label>
        <span className={kit.fieldLabel}>To (local time)</span>
        <input type="datetime-local" value={range.to} onChange={(e) => setRange((r) => ({ ...r, to: e.target.value }))} />
      </label>
      <button type="submit" className="button button-primary">
        Apply range
      </button>
      <button type="button" className="button" onClick={onCancel}>
        Cancel
      </button>
      {error ? (
        <p role="alert" className={kit.inlineError}>
          {error}
        </p>
      ) : null}
    </form>
  );
}
