/**
 * The period of an audit report and the inputs that choose it, shared by the CLI, the API and the /reports page.
 *
 * A period is [from, to): `from` is included and `to` is not, so consecutive reports neither overlap nor leave a gap
 * (`--from 2026-01-01 --to 2026-02-01` is January). A date alone is midnight UTC; a date-time must say its offset.
 */
import { z } from 'zod';
import { blankToUndefined } from '@/lib/http/blank';

export const REPORT_FORMATS = ['pdf', 'oscal'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export interface ReportPeriod {
  /** seconds since the epoch, included */
  from: number;
  /** seconds since the epoch, excluded */
  to: number;
}

const DAY = 86400;
/** Reports are a regulator's unit: a month, a quarter, a year. Ten years is far beyond any of them. */
export const MAX_PERIOD_DAYS = 3660;

const DATE_HINT = 'a date such as 2026-01-31, or a date-time with its offset such as 2026-01-31T12:00:00Z';

/** A date (midnight UTC) or an ISO date-time with an offset, as seconds since the epoch. */
export function reportInstant(name: 'from' | 'to') {
  return z
    .string({ error: (issue) => (issue.input === undefined ? `${name} is required: ${DATE_HINT}` : `${name} is ${DATE_HINT}`) })
    .trim()
    .min(1, `${name} is required: ${DATE_HINT}`)
    .pipe(z.union([z.iso.date(), z.iso.datetime({ offset: true })], { error: `${name} is not ${DATE_HINT}` }))
    .transform((v) => Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v}T00:00:00Z` : v) / 1000)
    .refine((t) => Number.isFinite(t), `${name} is not a real date`);
}

export const reportProfileField = z.preprocess(
  blankToUndefined,
  z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,63}$/, 'profile is the name of an active compliance profile, such as bfsi')
    .optional(),
);

function periodInOrder(q: { from: number; to: number }, ctx: z.RefinementCtx): void {
  if (q.to <= q.from) ctx.addIssue({ code: 'custom', path: ['to'], message: 'to must be after from (the period is from ≤ t < to)' });
  else if (q.to - q.from > MAX_PERIOD_DAYS * DAY) ctx.addIssue({ code: 'custom', path: ['to'], message: `the period is at most ${MAX_PERIOD_DAYS} days` });
}

const periodFields = { from: reportInstant('from'), to: reportInstant('to'), profile: reportProfileField };

/** GET /api/v1/reports/audit.pdf and audit.oscal.json: `from`, `to`, optionally `profile`. */
export const reportQuerySchema = z.strictObject(periodFields).superRefine(periodInOrder);

export type ReportQuery = z.output<typeof reportQuerySchema>;

/** The CLI's options: the same fields, and the format. */
export const reportOptionsSchema = z
  .strictObject({ ...periodFields, format: z.enum(REPORT_FORMATS, { error: 'format is pdf or oscal' }).default('pdf') })
  .superRefine(periodInOrder);

/** 2026-01-31T12:00:00Z (seconds precision; UTC). */
export function isoSeconds(t: number): string {
  return new Date(Math.round(t) * 1000).toISOString().replace('.000Z', 'Z');
}

/** 2026-01-31 when t is midnight UTC, else 2026-01-31 12:00 UTC: how a period's ends are written. */
export function periodEnd(t: number): string {
  const iso = isoSeconds(t);
  return t % DAY === 0 ? iso.slice(0, 10) : `${iso.slice(0, 16).replace('T', ' ')} UTC`;
}

/** "2026-01-01 to 2026-02-01 (31 days, the end excluded)". */
export function describePeriod(p: ReportPeriod): string {
  const days = (p.to - p.from) / DAY;
  const span = Number.isInteger(days) ? `${days} day${days === 1 ? '' : 's'}` : `${(days * 24).toFixed(days * 24 < 10 ? 1 : 0)} hours`;
  return `${periodEnd(p.from)} to ${periodEnd(p.to)} (${span}, UTC, the end excluded)`;
}

/** A file name for the report of a period: swarm-audit-report_2026-01-01_2026-02-01.pdf */
export function reportFileName(p: ReportPeriod, format: ReportFormat): string {
  const part = (t: number) => isoSeconds(t).slice(0, t % DAY === 0 ? 10 : 16).replace(/:/g, '');
  return `swarm-audit-report_${part(p.from)}_${part(p.to)}${format === 'pdf' ? '.pdf' : '.oscal.json'}`;
}
