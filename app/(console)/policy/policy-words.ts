/** The words of the policy pages: each status and kind with a symbol, so that none is told by colour alone. */
import type { ProposalJson } from '@/lib/http/responses';

export const STATUS_WORDS: Record<ProposalJson['status'], string> = {
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
export function openFirst<T extends { status: string; proposed_at: number }>(proposals: readonly T[]): T[] {
  return [...proposals].sort((a, b) => Number(b.status === 'open') - Number(a.status === 'open') || b.proposed_at - a.proposed_at);
}

/** A revision id shortened for a table (the whole id on hover and in the detail). */
export const shortRevision = (revision: string): string => revision.slice(0, 12);

/** The problems of a refused proposal (the server's details.issues): each at its file:line:column. */
export interface FileIssue {
  file: string;
  line?: number;
  column?: number;
  message: string;
}

export function fileIssuesOf(details: unknown): FileIssue[] {
  if (typeof details !== 'object' || details === null || !('issues' in details) || !Array.isArray(details.issues)) return [];
  const out: FileIssue[] = [];
  for (const i of details.issues as unknown[]) {
    if (typeof i !== 'object' || i === null) continue;
    const r = i as Record<string, unknown>;
    if (typeof r.message !== 'string') continue;
    out.push({
      file: typeof r.file === 'string' ? r.file : 'proposal',
      line: typeof r.line === 'number' ? r.line : undefined,
      column: typeof r.column === 'number' ? r.column : undefined,
      message: r.message,
    });
  }
  return out;
}

export const issuePlace = (i: FileIssue): string => [i.file, i.line, i.column].filter((x) => x !== undefined).join(':');
