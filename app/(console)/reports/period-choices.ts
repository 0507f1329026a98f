/**
 * The period choices of the /reports page, in UTC days. The page asks for the first and the last day (both included,
 * as people say it); the report's `to` is the day after the last one (the report's period excludes its end).
 */
export interface DayRange {
  /** YYYY-MM-DD, included */
  first: string;
  /** YYYY-MM-DD, included */
  last: string;
}

const DAY_MS = 86_400_000;
const ymd = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const utcDay = (d: Date) => Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());

export const QUICK_CHOICES = ['last30', 'lastMonth', 'lastQuarter', 'yearToDate'] as const;
export type QuickChoice = (typeof QUICK_CHOICES)[number];

export const QUICK_LABELS: Record<QuickChoice, string> = {
  last30: 'Last 30 days',
  lastMonth: 'Last month',
  lastQuarter: 'Last quarter',
  yearToDate: 'Year to date',
};

export function quickRange(choice: QuickChoice, now = new Date()): DayRange {
  const today = utcDay(now);
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  switch (choice) {
    case 'last30':
      return { first: ymd(today - 29 * DAY_MS), last: ymd(today) };
    case 'lastMonth':
      return { first: ymd(Date.UTC(y, m - 1, 1)), last: ymd(Date.UTC(y, m, 1) - DAY_MS) };
    case 'lastQuarter': {
      const q = Math.floor(m / 3);
      return { first: ymd(Date.UTC(y, (q - 1) * 3, 1)), last: ymd(Date.UTC(y, q * 3, 1) - DAY_MS) };
    }
    case 'yearToDate':
      return { first: ymd(Date.UTC(y, 0, 1)), last: ymd(today) };
  }
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The report's query for a day range, or what is wrong with it. */
export function periodQuery(r: DayRange, profile: string): { ok: true; from: string; to: string; days: number; query: string } | { ok: false; problem: string } {
  if (!DATE.test(r.first) || Number.isNaN(Date.parse(r.first))) return { ok: false, problem: 'Choose the first day of the period.' };
  if (!DATE.test(r.last) || Number.isNaN(Date.parse(r.last))) return { ok: false, problem: 'Choose the last day of the period.' };
  const from = Date.parse(`${r.first}T00:00:00Z`);
  const to = Date.parse(`${r.last}T00:00:00Z`) + DAY_MS;
  if (to <= from) return { ok: false, problem: 'The last day is before the first day.' };
  const q = new URLSearchParams({ from: ymd(from), to: ymd(to) });
  if (profile) q.set('profile', profile);
  return { ok: true, from: ymd(from), to: ymd(to), days: Math.round((to - from) / DAY_MS), query: q.toString() };
}
