/**
 * Policy revisions on PostgreSQL. The recorder names the revision in force in every row it writes, synchronously; its
 * content is written by the recorder in the same transaction as the row (INSERT … ON CONFLICT DO NOTHING, see
 * pg-recorder.ts), so a row never names a revision that is not stored, whichever server wrote it.
 */
import { count, eq } from 'drizzle-orm';
import type pg from 'pg';
import { pgDatabase, type PgDb } from '@/db/pg/client';
import { policyRevisions } from '@/db/pg/schema';
import { revisionOf, type RevisionContent } from './revisions';

/** Revisions of this process whose content a row may still have to store (a handful: one per configuration change). */
const KEEP = 64;

export class PgRevisionStore {
  private readonly db: PgDb;
  private readonly contents = new Map<string, RevisionContent>();

  constructor(pool: pg.Pool) {
    this.db = pgDatabase(pool);
  }

  /** The id of this content; the content is kept for the recorder to store beside the next row that names it. */
  remember(content: RevisionContent): string {
    const revision = revisionOf(content);
    if (!this.contents.has(revision)) {
      this.contents.set(revision, content);
      if (this.contents.size > KEEP) this.contents.delete(this.contents.keys().next().value!);
    }
    return revision;
  }

  /** The content of a revision this process computed (for the recorder). */
  contentOf(revision: string): RevisionContent | undefined {
    return this.contents.get(revision);
  }

  async get(revision: string): Promise<RevisionContent | undefined> {
    const [row] = await this.db.select().from(policyRevisions).where(eq(policyRevisions.revision, revision)).limit(1);
    return row ? (JSON.parse(row.contentJson) as RevisionContent) : undefined;
  }

  async count(): Promise<number> {
    return (await this.db.select({ n: count() }).from(policyRevisions))[0]?.n ?? 0;
  }
}
