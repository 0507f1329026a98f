/**
 * The queries of security_events on PostgreSQL: the twin of SecurityEventQueries (security-events.ts), the same filter
 * (eventWhere) and paging (eventPage) over the same rows, answered as promises. The rows are written by the recorder
 * (pg-recorder.ts).
 */
import { desc, sql } from 'drizzle-orm';
import type pg from 'pg';
import { pgDatabase, type PgDb } from '@/db/pg/client';
import { securityEvents } from '@/db/pg/schema';
import type { SecurityEventRow } from '@/db/schema';
import { eventPage, eventWhere, type EventFilter } from './security-events';

export class PgSecurityEventQueries {
  private readonly db: PgDb;

  constructor(pool: pg.Pool) {
    this.db = pgDatabase(pool);
  }

  /** Newest first; `nextCursor` continues after the last row of this page. */
  async list(f: EventFilter = {}): Promise<{ rows: SecurityEventRow[]; nextCursor: number | null }> {
    const t = securityEvents;
    const limit = f.limit ?? 100;
    // ILIKE: a type family ignores ASCII case as SQLite's LIKE does.
    const rows: SecurityEventRow[] = await this.db
      .select()
      .from(t)
      .where(eventWhere(f, t, sql`ILIKE`))
      .orderBy(desc(t.id))
      .limit(limit + 1);
    return eventPage(rows, limit);
  }

  /** Newest first, of one type (tests and the transparency page). */
  async ofType(type: string, limit = 100): Promise<SecurityEventRow[]> {
    return (await this.list({ type, limit })).rows;
  }
}
