/** The words of the policy pages: each status and kind with a symbol, so that none is told by colour alone. */
import { z } from 'zod';
import type { ProposalStatus } from '@/lib/change-control/store';

export const STATUS_WORDS: Record<ProposalStatus, string> = {
  open: '● Open',
  approved: '✓ Approved (advisory)',
  activated: '✓ Active',
  rejected: '✕ Rejected',
  withdrawn: '○ Withdrawn',
};

export const DIRECTION_WORDS = {
  newly_denied: 'newly denied',
  newly_allowed: 'newly allowed',
  newly_asking: 'newly asking a person',
  other_rule: 'same decision, another rule',
} as const;

/** The order a list shows proposals in: open ones first (they wait for someone), then the newest. */
export function openFirst<T extends { status: string; proposedAt: number }>(proposals: readonly T[]): T[] {
  return [...proposals].sort((a, b) => Number(b.status === 'open') - Number(a.status === 'open') || b.proposedAt - a.proposedAt);
}

/** A revision id shortened for a table (the whole id on hover and in the detail). */
export const shortRevision = (revision: string): string => revision.slice(0, 12);

/** The problems of a refused proposal (the server's details.issues): each at its file:line:column. */
const fileIssueSchema = z.object({ file: z.string().catch('proposal'), line: z.number().optional().catch(undefined), column: z.number().optional().catch(undefined), message: z.string() });
export type FileIssue = z.infer<typeof fileIssueSchema>;

/** The problems an error's details list; one that is not a problem (no message) is passed over. */
export function fileIssuesOf(details: unknown): FileIssue[] {
  const listed = z.object({ issues: z.array(z.unknown()) }).safeParse(details);
  return listed.success ? listed.data.issues.flatMap((i) => fileIssueSchema.safeParse(i).data ?? []) : [];
}

export const issuePlace = (i: FileIssue): string => [i.file, i.line, i.column].filter((x) => x !== undefined).join(':');
