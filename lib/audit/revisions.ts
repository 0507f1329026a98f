/**
 * Policy revisions: what was in force when a decision was made. A revision is the content hash of the configuration
 * files (agents, policy, gates) and the effective flag values; its full content is kept once, content-addressed, in
 * policy_revisions, so `swarm audit explain` can re-run a decision against the revision it was made under.
 */
import { createHash } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { announceWrite } from '@/db/write-intent';
import { policyRevisions } from '@/db/schema';
import { canonicalJson } from '@/lib/approvals/canonical';

export interface RevisionContent {
  /** the texts of the files in force (null: the file is absent) and the policy file's name */
  files: { agents: string | null; policy: string | null; gates: string | null; policy_file: string; hooks?: string };
  /** effective flag values, by name */
  flags: Record<string, boolean>;
  /** the active compliance profiles and the texts of their files (absent: none was active) */
  profiles?: { name: string; folder: string; texts: { profile: string; policy?: string; gates?: string; tests?: string } }[];
}

/** `rev_` and the first 128 bits of the SHA-256 of the canonical content. */
export function revisionOf(content: RevisionContent): string {
  return `rev_${createHash('sha256').update(canonicalJson(content)).digest('hex').slice(0, 32)}`;
}

export class RevisionStore {
  private readonly known = new Set<string>();

  constructor(private readonly db: Db) {}

  /** Keep this revision's content (once); returns its id. */
  remember(content: RevisionContent): string {
    const revision = revisionOf(content);
    this.store(revision, () => content);
    return revision;
  }

  /**
   * Store the content of a revision a row is about to name (once per process; inside the row's transaction when there
   * is one). A revision whose content is not known here (computed by another process) is left as it is.
   */
  store(revision: string, contentOf: (revision: string) => RevisionContent | undefined): void {
    if (this.known.has(revision)) return;
    const content = contentOf(revision);
    if (!content) return;
    announceWrite(this.db.$client);
    this.db
      .insert(policyRevisions)
      .values({ revision, contentJson: canonicalJson(content), firstSeenAt: Date.now() / 1000 })
      .onConflictDoNothing()
      .run();
    this.known.add(revision);
  }

  /** Forget which revisions are stored: after a rolled-back transaction, one remembered inside it may not be. */
  forget(): void {
    this.known.clear();
  }

  get(revision: string): RevisionContent | undefined {
    const row = this.db.select().from(policyRevisions).where(eq(policyRevisions.revision, revision)).get();
    return row ? (JSON.parse(row.contentJson) as RevisionContent) : undefined;
  }

  count(): number {
    return this.db.select({ n: sql<number>`count(*)` }).from(policyRevisions).get()?.n ?? 0;
  }
}
