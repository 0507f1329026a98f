/**
 * The queries of security_events (the rows are written by the recorder, recorder.ts): every security event that is
 * not a denial, filtered like the denial explorer (time window, type or family, actor, outcome) with keyset paging.
 */
import { and, desc, eq, gte, lt, lte, or, sql, type SQL } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { securityEvents, type SecurityEventRow } from '@/db/schema';

export interface EventFilter {
  /** seconds back from now */
  since?: number;
  from?: number;
  to?: number;
  /** an exact type (auth.login.failed) or a family before the first dot (auth) */
  type?: string;
  actor?: string;
  outcome?: string;
  decisionId?: string;
  /** the id of the last row of the previous page */
  cursor?: number;
  limit?: number;
}

export class SecurityEventQueries {
  constructor(private readonly db: Db) {}

  /** Newest first; `nextCursor` continues after the last row of this page. */
  list(f: EventFilter = {}): { rows: SecurityEventRow[]; nextCursor: number | null } {
    const t = securityEvents;
    const c: SQL[] = [];
    const now = Date.now() / 1000;
    if (f.since !== undefined) c.push(gte(t.timestamp, now - f.since));
    if (f.from !== undefined) c.push(gte(t.timestamp, f.from));
    if (f.to !== undefined) c.push(lte(t.timestamp, f.to));
    if (f.type) {
      // A family (no dot) matches itself and every type under it: `auth` matches auth.login.failed.
      const family = `${f.type.replace(/[%_\\]/g, '\\$&')}.%`;
      c.push(f.type.includes('.') ? eq(t.type, f.type) : or(eq(t.type, f.type), sql`${t.type} LIKE ${family} ESCAPE '\\'`)!);
    }
    if (f.actor) c.push(eq(t.actor, f.actor));
    if (f.outcome) c.push(eq(t.outcome, f.outcome));
    if (f.decisionId) c.push(eq(t.decisionId, f.decisionId));
    if (f.cursor !== undefined) c.push(lt(t.id, f.cursor));
    const limit = f.limit ?? 100;
    const rows = this.db
      .select()
      .from(t)
      .where(c.length ? and(...c) : undefined)
      .orderBy(desc(t.id))
      .limit(limit + 1)
      .all();
    const more = rows.length > limit;
    if (more) rows.pop();
    return { rows, nextCursor: more ? rows[rows.length - 1]!.id : null };
  }

  /** Newest first, of one type (tests and the transparency page). */
  ofType(type: string, limit = 100): SecurityEventRow[] {
    return this.list({ type, limit }).rows;
  }
}

export function eventToJson(r: SecurityEventRow) {
  return {
    id: r.id,
    decision_id: r.decisionId,
    type: r.type,
    actor: r.actor,
    actor_role: r.actorRole,
    outcome: r.outcome,
    target: r.target,
    detail: r.detailJson ? (JSON.parse(r.detailJson) as unknown) : null,
    policy_revision: r.policyRevision,
    ip: r.ip,
    timestamp: r.timestamp,
    row_hash: r.rowHash,
  };
}
