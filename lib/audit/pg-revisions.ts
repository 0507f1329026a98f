/**
 * Policy revisions on PostgreSQL. The recorder names the revision of each decision's snapshot in the row it writes; its
 * content is written by the recorder in the same transaction as the row (INSERT … ON CONFLICT DO NOTHING, see
 * pg-recorder.ts), so a row never names a revision that is not stored, whichever server wrote it.
 */
import { count, eq } from 'drizzle-orm';
import type pg from 'pg';
import { pgDatabase, type PgDb } from '@/db/pg/client';
import { policyRevisions } from '@/db/pg/schema';
import type { RevisionContent } from './revisions';

export class PgRevisionStore {
  private readonly db: PgDb;

  constructor(pool: pg.Pool) {
    this.db = pgDatabase(pool);
  }

  async get(revision: string): Promise<RevisionContent | undefined> {
    const [row] = await this.db.select().from(policyRevisions).where(eq(policyRevisions.revision, revision)).limit(1);
    return row ? (JSON.parse(row.contentJson) as RevisionContent) : undefined;
  }

  async count(): Promise<number> {
    return (await this.db.select({ n: count() }).from(policyRevisions))[0]?.n ?? 0;
  }
}
