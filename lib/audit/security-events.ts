/**
 * The queries of security_events (the rows are written by the recorder, recorder.ts): every security event that is
 * not a denial, filtered like the denial explorer (time window, type or family, actor, outcome) with keyset paging.
 */
import { and, desc, eq, gte, lt, lte, or, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { securityEvents, type SecurityEventRow } from '@/db/schema';

export interface EventFilter {
  /** seconds back from now */
  since?: number;
  from?: number;
  to?: number;
  /** an exact type (auth.login.failed) or a family before the first dot (auth) */
  type?: string;
  /**
   * A type or family left out (`decision`: the allowed and asked decisions logged under decision_log_all, which the
   * audit page keeps in their own view so the security events people act on are not buried under them)
   */
  excludeType?: string;
  actor?: string;
  outcome?: string;
  decisionId?: string;
  /** the id of the last row of the previous page */
  cursor?: number;
  limit?: number;
}

/** The columns of security_events a filter reads, on SQLite (db/schema.ts) or PostgreSQL (db/pg/schema.ts). */
export interface EventColumns {
  id: AnyColumn;
  timestamp: AnyColumn;
  type: AnyColumn;
  actor: AnyColumn;
  outcome: AnyColumn;
  decisionId: AnyColumn;
}

/**
 * The WHERE of a filter, for either database: `t` its table, `like` its operator for a type family. SQLite's LIKE
 * ignores ASCII case (`AUTH` finds auth.login.failed), PostgreSQL's does not, so pg-security-events.ts passes ILIKE.
 */
export function eventWhere(f: EventFilter, t: EventColumns = securityEvents, like: SQL = sql`LIKE`): SQL | undefined {
  const c: SQL[] = [];
  const now = Date.now() / 1000;
  if (f.since !== undefined) c.push(gte(t.timestamp, now - f.since));
  if (f.from !== undefined) c.push(gte(t.timestamp, f.from));
  if (f.to !== undefined) c.push(lte(t.timestamp, f.to));
  if (f.type) {
    // A family (no dot) matches itself and every type under it: `auth` matches auth.login.failed.
    const family = `${f.type.replace(/[%_\\]/g, '\\$&')}.%`;
    c.push(f.type.includes('.') ? eq(t.type, f.type) : or(eq(t.type, f.type), sql`${t.type} ${like} ${family} ESCAPE '\\'`)!);
  }
  if (f.excludeType) {
    const family = `${f.excludeType.replace(/[%_\\]/g, '\\$&')}.%`;
    c.push(f.excludeType.includes('.') ? sql`${t.type} <> ${f.excludeType}` : sql`NOT (${t.type} = ${f.excludeType} OR ${t.type} ${like} ${family} ESCAPE '\\')`);
  }
  if (f.actor) c.push(eq(t.actor, f.actor));
  if (f.outcome) c.push(eq(t.outcome, f.outcome));
  if (f.decisionId) c.push(eq(t.decisionId, f.decisionId));
  if (f.cursor !== undefined) c.push(lt(t.id, f.cursor));
  return c.length ? and(...c) : undefined;
}

/** A page from the `limit + 1` rows read newest first: the extra row only says that there is a next page. */
export function eventPage<R extends { id: number }>(rows: R[], limit: number): { rows: R[]; nextCursor: number | null } {
  const more = rows.length > limit;
  if (more) rows.pop();
  return { rows, nextCursor: more ? rows[rows.length - 1]!.id : null };
}

export class SecurityEventQueries {
  constructor(private readonly db: Db) {}

  /** Newest first; `nextCursor` continues after the last row of this page. */
  list(f: EventFilter = {}): { rows: SecurityEventRow[]; nextCursor: number | null } {
    const t = securityEvents;
    const limit = f.limit ?? 100;
    const rows = this.db
      .select()
      .from(t)
      .where(eventWhere(f))
      .orderBy(desc(t.id))
      .limit(limit + 1)
      .all();
    return eventPage(rows, limit);
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
