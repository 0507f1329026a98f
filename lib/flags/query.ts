/**
 * The flag history filter as it arrives from a URL: the API (`/api/v1/flags/history`, `/api/v1/transparency`) and the
 * `/transparency` page read the same parameters, so a filtered page and its JSON are one link apart.
 */
import { z } from 'zod';
import { blankToUndefined } from '@/lib/http/blank';


export const HISTORY_PAGE_SIZE = 100;

export const flagHistoryQuerySchema = z.strictObject({
  /**
   * Any well-formed flag name, not only those in today's catalog: experiments may disappear, and their history must
   * stay findable.
   */
  name: z.preprocess(blankToUndefined, z.string().regex(/^[a-z][a-z0-9_]{0,99}$/, 'name is a flag name, e.g. auto_fairness_audit').optional()),
  /** who made the change, exactly as recorded: a user name, or cli:<os user> for the CLI */
  by: z.preprocess(blankToUndefined, z.string().trim().min(1).max(200).optional()),
  /** the next_cursor of the previous page */
  before: z.preprocess(blankToUndefined, z.string().regex(/^\d{1,18}$/, 'before is the next_cursor of the previous page').transform(Number).optional()),
  limit: z.preprocess(blankToUndefined, z.coerce.number().int().min(1).max(1000).default(HISTORY_PAGE_SIZE)),
});

export type FlagHistoryQuery = z.output<typeof flagHistoryQuerySchema>;

/** A history read: `name` and `by` match exactly; `before` is the id of the last row of the previous page. */
export interface FlagHistoryFilter {
  name?: string;
  by?: string;
  /** only changes with a smaller id (the cursor of the next page) */
  before?: number;
  limit?: number;
}

/** Rows of a history read when the filter names no limit. */
export const HISTORY_LIMIT = 200;

/** The reason a refused change is recorded with: the person's reason, and why it was refused. */
export function refusalReason(reason: string, refusal: string): string {
  return reason.trim() ? `${reason.trim()} (refused: ${refusal})` : `refused: ${refusal}`;
}
