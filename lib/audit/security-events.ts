/**
 * The queries of security_events (the rows are written by the recorder): every security event that is not a denial,
 * filtered like the denial explorer (time window, type or family, actor, outcome) with keyset paging. One
 * implementation for SQLite and PostgreSQL, over the dialect port (db/dialect.ts).
 */
import { sql, type SQL } from 'drizzle-orm';
import type { SqlDatabase } from '@/db/dialect';
import { columnsAs } from '@/db/columns';
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

export interface SecurityEventQueries {
  /** Newest first; `nextCursor` continues after the last row of this page. */
  list(f?: EventFilter): Promise<{ rows: SecurityEventRow[]; nextCursor: number | null }>;
  /** Newest first, of one type or family (tests and the transparency page). */
  ofType(type: string, limit?: number): Promise<SecurityEventRow[]>;
}

const EVENT_COLUMNS = sql.raw(columnsAs(securityEvents));

/**
 * A type or its family: an exact type (it has a dot) matches itself; a family (no dot) matches itself and every type
 * under it (`auth` matches auth.login.failed), ignoring ASCII case as the console always has (`AUTH` finds it too).
 */
function typeMatch(db: Pick<SqlDatabase, 'ilike'>, type: string): SQL {
  if (type.includes('.')) return sql`type = ${type}`;
  return sql`(type = ${type} OR ${db.ilike(sql`type`, `${type.replace(/[%_\\]/g, '\\$&')}.%`)})`;
}

/** The WHERE of a filter (a condition that is always true when the filter is empty). */
function eventWhere(db: Pick<SqlDatabase, 'ilike'>, f: EventFilter): SQL {
  const c: SQL[] = [sql`1 = 1`];
  const now = Date.now() / 1000;
  if (f.since !== undefined) c.push(sql`timestamp >= ${now - f.since}`);
  if (f.from !== undefined) c.push(sql`timestamp >= ${f.from}`);
  if (f.to !== undefined) c.push(sql`timestamp <= ${f.to}`);
  if (f.type) c.push(typeMatch(db, f.type));
  if (f.excludeType) c.push(sql`NOT (${typeMatch(db, f.excludeType)})`);
  if (f.actor) c.push(sql`actor = ${f.actor}`);
  if (f.outcome) c.push(sql`outcome = ${f.outcome}`);
  if (f.decisionId) c.push(sql`decision_id = ${f.decisionId}`);
  if (f.cursor !== undefined) c.push(sql`id < ${f.cursor}`);
  return sql.join(c, sql` AND `);
}

/**
 * The statement of one page: `limit + 1` rows newest first (the extra row only says that there is a next page). Also
 * read synchronously where a SQLite application is opened (lib/server/sqlite.ts, its last start).
 */
export function eventListQuery(db: Pick<SqlDatabase, 'ilike'>, f: EventFilter, limit: number): SQL {
  return sql`SELECT ${EVENT_COLUMNS} FROM security_events WHERE ${eventWhere(db, f)} ORDER BY id DESC LIMIT ${limit + 1}`;
}

export class SqlSecurityEventQueries implements SecurityEventQueries {
  constructor(private readonly db: SqlDatabase) {}

  async list(f: EventFilter = {}): Promise<{ rows: SecurityEventRow[]; nextCursor: number | null }> {
    const limit = f.limit ?? 100;
    const rows = await this.db.all<SecurityEventRow>(eventListQuery(this.db, f, limit));
    const more = rows.length > limit;
    if (more) rows.pop();
    return { rows, nextCursor: more ? rows[rows.length - 1]!.id : null };
  }

  async ofType(type: string, limit = 100): Promise<SecurityEventRow[]> {
    return (await this.list({ type, limit })).rows;
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
