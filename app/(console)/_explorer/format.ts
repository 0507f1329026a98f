/**
 * How the explorers write times and counts. Times are shown in the reader's local zone as an ISO-like date and 24-hour
 * time (sortable, unambiguous across locales), with UTC alongside wherever a time is pointed at.
 */
import { WINDOW_LABELS, isCustomRange, type TimeWindow } from './time-window';

const pad = (n: number) => String(n).padStart(2, '0');

/** 2025-11-20 14:03:22 in the local zone. */
export function localDateTime(seconds: number): string {
  const d = new Date(seconds * 1000);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** 2025-11-20 13:03:22 UTC */
export function utcDateTime(seconds: number): string {
  return `${new Date(seconds * 1000).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** The local zone's name and offset, e.g. "Europe/Berlin, UTC+01:00". */
export function localZone(at = Date.now()): string {
  const offset = -new Date(at).getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  const abs = Math.abs(offset);
  const name = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return `${name}, UTC${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

export const count = (n: number): string => n.toLocaleString('en-US');

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}

const SHORT = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short' });
const SHORT_YEAR = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric' });

/** 20 Nov 14:00 (local), or with the year when it is not this year. */
export function shortDateTime(seconds: number, withTime = true): string {
  const d = new Date(seconds * 1000);
  const date = (d.getFullYear() === new Date().getFullYear() ? SHORT : SHORT_YEAR).format(d);
  return withTime ? `${date} ${pad(d.getHours())}:${pad(d.getMinutes())}` : date;
}

/** The window of a state in words, for headings: "in the last 7 days", "from 20 Nov 14:00 to 21 Nov 14:00". */
export function describeWindow(s: TimeWindow): string {
  if (isCustomRange(s)) {
    if (s.from !== undefined && s.to !== undefined) return `from ${shortDateTime(s.from)} to ${shortDateTime(s.to)}`;
    if (s.from !== undefined) return `since ${shortDateTime(s.from)}`;
    return `until ${shortDateTime(s.to ?? 0)}`;
  }
  return s.window === 'all' ? 'in all recorded time' : `in the ${WINDOW_LABELS[s.window].toLowerCase()}`;
}

/** A readable width: "1 minute", "3 hours", "1 day". */
export function duration(seconds: number): string {
  if (seconds % 86400 === 0) return plural(seconds / 86400, 'day');
  if (seconds % 3600 === 0) return plural(seconds / 3600, 'hour');
  return plural(Math.round(seconds / 60), 'minute');
}
