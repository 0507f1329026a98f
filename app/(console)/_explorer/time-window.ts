/**
 * The time part of an explorer's URL, the same on /denials and /audit so both speak the same links: a relative window
 * (`window=7d`), or a custom range (`from`/`to`, ISO 8601 or seconds since the epoch; a link shows ISO in UTC). Read
 * leniently (a bad value is left out and named), written in a stable form, and turned into the API's `since`/`from`/`to`.
 */
import { z } from 'zod';
import { paramReader } from './url-params';

export const WINDOWS = ['1h', '24h', '7d', '30d', 'all'] as const;
export type RelativeWindow = (typeof WINDOWS)[number];

export const WINDOW_SECONDS: Record<Exclude<RelativeWindow, 'all'>, number> = { '1h': 3600, '24h': 86400, '7d': 7 * 86400, '30d': 30 * 86400 };
export const WINDOW_LABELS: Record<RelativeWindow, string> = { '1h': 'Last hour', '24h': 'Last 24 hours', '7d': 'Last 7 days', '30d': 'Last 30 days', all: 'All time' };

export interface TimeWindow {
  /** a relative window, or a custom range when from/to are set */
  window: RelativeWindow;
  /** custom range, seconds since the epoch */
  from?: number;
  to?: number;
}

/** A time in a link: ISO 8601, or seconds since the epoch; as seconds. */
const isoOrSeconds = z
  .string()
  .trim()
  .min(1)
  .transform((v, ctx) => {
    const n = /^\d+(\.\d+)?$/.test(v) ? Number(v) * 1000 : Date.parse(v);
    if (!Number.isFinite(n) || n < 0) {
      ctx.addIssue({ code: 'custom', message: 'not a date' });
      return z.NEVER;
    }
    return n / 1000;
  });

const FIELDS = { window: z.enum(WINDOWS), from: isoOrSeconds, to: isoOrSeconds } as const;

/** The window of a URL; a range given backwards is turned round. Invalid parameters are added to `ignored`. */
export function parseTimeWindow(params: URLSearchParams, ignored: string[]): TimeWindow {
  const value = paramReader(params, FIELDS, ignored);
  const out: TimeWindow = { window: value('window') ?? 'all' };
  let from = value('from');
  let to = value('to');
  if (from !== undefined && to !== undefined && from > to) [from, to] = [to, from];
  if (from !== undefined) out.from = from;
  if (to !== undefined) out.to = to;
  return out;
}

export const isCustomRange = (s: Pick<TimeWindow, 'from' | 'to'>): boolean => s.from !== undefined || s.to !== undefined;

/** The window narrows the view: a relative window short of all time, or a custom range. */
export const isWindowed = (s: TimeWindow): boolean => s.window !== 'all' || isCustomRange(s);

/** ISO 8601 in UTC to the second: what a person can read in a shared link. */
export function isoSeconds(seconds: number): string {
  return new Date(Math.round(seconds) * 1000).toISOString().replace('.000Z', 'Z');
}

/** The window into a page's query (`from`/`to` as ISO, or `window`; all time is the default and not written). */
export function writeTimeWindow(p: URLSearchParams, s: TimeWindow): void {
  if (isCustomRange(s)) {
    if (s.from !== undefined) p.set('from', isoSeconds(s.from));
    if (s.to !== undefined) p.set('to', isoSeconds(s.to));
  } else if (s.window !== 'all') {
    p.set('window', s.window);
  }
}

/** The window as the API's query parameters: `since` for a relative window, whole seconds for a range. */
export function timeWindowApiParams(s: TimeWindow): URLSearchParams {
  const p = new URLSearchParams();
  if (isCustomRange(s)) {
    if (s.from !== undefined) p.set('from', String(Math.floor(s.from)));
    if (s.to !== undefined) p.set('to', String(Math.ceil(s.to)));
  } else if (s.window !== 'all') {
    p.set('since', String(WINDOW_SECONDS[s.window]));
  }
  return p;
}

/** A query string for a link that keeps ':' and '/' readable (times, rule sources such as policy:bfsi/x). */
export const readableQuery = (p: URLSearchParams): string => p.toString().replace(/%3A/gi, ':').replace(/%2F/gi, '/');
