/**
 * The denial store: the one writer of permission_denials and its queries. Append-only by design and by the
 * database (triggers refuse UPDATE and DELETE).
 */
import { and, desc, eq, gte, lt, lte, or, sql, type SQL } from 'drizzle-orm';
import type Database from 'better-sqlite3';
import type { Db } from '../../db/client';
import { permissionDenials, type DenialRow, type NewDenialRow } from '../../db/schema';
import type { CheckResult, PermissionContext } from '../permissions';
import { redactedArgumentsJson } from './redact';

export type DenialInput = Omit<NewDenialRow, 'id' | 'timestamp'> & { timestamp?: number };

export const nowSeconds = (): number => Date.now() / 1000;

/** The row for a denied decision: attributed to the winning rule, arguments redacted, the trace kept. */
export function denialFromDecision(context: PermissionContext, result: CheckResult): DenialInput {
  const isHttp = context.kind === 'http';
  return {
    toolCallId: context.toolCallId ?? null,
    toolName: isHttp ? 'http' : context.tool,
    agentName: context.agent ?? null,
    argumentsJson: redactedArgumentsJson(context.arguments),
    ruleSource: result.ruleSource,
    reason: result.reason,
    userRole: context.principal.role,
    httpMethod: isHttp ? context.method : null,
    httpPath: isHttp ? context.path : null,
    principal: context.principal.id,
    traceJson: JSON.stringify(result.trace.map((r) => [r.decision, r.priority, r.ruleSource, r.reason])),
  };
}

export class DenialStore {
  private readonly insert: Database.Statement;

  constructor(private readonly db: Db) {
    this.insert = db.$client.prepare(
      `INSERT INTO permission_denials (tool_call_id, tool_name, agent_name, arguments_json, rule_source, reason,
         user_role, http_method, http_path, timestamp, principal, trace_json)
       VALUES (@toolCallId, @toolName, @agentName, @argumentsJson, @ruleSource, @reason,
         @userRole, @httpMethod, @httpPath, @timestamp, @principal, @traceJson)`,
    );
  }

  /** Write one denial and return its id. Returns after the row is committed (autocommit, WAL). */
  record(input: DenialInput): number {
    const info = this.insert.run({
      toolCallId: input.toolCallId ?? null,
      toolName: input.toolName,
      agentName: input.agentName ?? null,
      argumentsJson: input.argumentsJson ?? null,
      ruleSource: input.ruleSource,
      reason: input.reason ?? null,
      userRole: input.userRole ?? null,
      httpMethod: input.httpMethod ?? null,
      httpPath: input.httpPath ?? null,
      timestamp: input.timestamp ?? nowSeconds(),
      principal: input.principal ?? null,
      traceJson: input.traceJson ?? null,
    });
    return Number(info.lastInsertRowid);
  }

  get(id: number): DenialRow | undefined {
    return this.db.select().from(permissionDenials).where(eq(permissionDenials.id, id)).get();
  }

  query(filter: DenialFilter): { rows: DenialRow[]; nextCursor: string | null } {
    const limit = filter.limit ?? 100;
    const rows = this.db
      .select()
      .from(permissionDenials)
      .where(denialWhere(filter))
      .orderBy(desc(permissionDenials.id))
      .limit(limit + 1)
      .all();
    const more = rows.length > limit;
    if (more) rows.pop();
    const last = rows[rows.length - 1];
    return { rows, nextCursor: more && last ? String(last.id) : null };
  }

  /** Every matching row, newest first, in pages: for exports that must not hold the whole result in memory. */
  *iterate(filter: Omit<DenialFilter, 'limit'>, pageSize = 1_000): Generator<DenialRow> {
    let cursor = filter.cursor;
    for (;;) {
      const page = this.query({ ...filter, cursor, limit: pageSize });
      yield* page.rows;
      if (!page.nextCursor) return;
      cursor = page.nextCursor;
    }
  }

  count(filter: Omit<DenialFilter, 'limit' | 'cursor'> = {}): number {
    const r = this.db
      .select({ n: sql<number>`count(*)` })
      .from(permissionDenials)
      .where(denialWhere(filter))
      .get();
    return r?.n ?? 0;
  }
}

export interface DenialFilter {
  /** seconds back from now */
  since?: number;
  /** absolute window, seconds since the epoch */
  from?: number;
  to?: number;
  agent?: string;
  tool?: string;
  role?: string;
  /** exact value, or a family: `policy` matches `policy` and every `policy:*` */
  ruleSource?: string;
  /** rows older than this id (the cursor of the previous page) */
  cursor?: string;
  limit?: number;
}

/** The rule-source filter: exact when it names a rule (has a colon), else the family by an index-friendly range. */
export function ruleSourceCondition(value: string): SQL {
  if (value.includes(':')) return eq(permissionDenials.ruleSource, value);
  // ';' is the character after ':' so [value:, value;) is exactly the values starting with "value:".
  return or(
    eq(permissionDenials.ruleSource, value),
    and(gte(permissionDenials.ruleSource, `${value}:`), lt(permissionDenials.ruleSource, `${value};`)),
  )!;
}

export function denialWhere(f: Omit<DenialFilter, 'limit'>): SQL | undefined {
  const c: SQL[] = [];
  if (f.since !== undefined) c.push(gte(permissionDenials.timestamp, nowSeconds() - f.since));
  if (f.from !== undefined) c.push(gte(permissionDenials.timestamp, f.from));
  if (f.to !== undefined) c.push(lte(permissionDenials.timestamp, f.to));
  if (f.agent !== undefined) c.push(eq(permissionDenials.agentName, f.agent));
  if (f.tool !== undefined) c.push(eq(permissionDenials.toolName, f.tool));
  if (f.role !== undefined) c.push(eq(permissionDenials.userRole, f.role));
  if (f.ruleSource !== undefined) c.push(ruleSourceCondition(f.ruleSource));
  if (f.cursor !== undefined) c.push(lt(permissionDenials.id, Number(f.cursor)));
  return c.length ? and(...c) : undefined;
}

/** The API's and the CLI's shape of a row: the spec's column names. */
export function denialToJson(row: DenialRow) {
  return {
    id: row.id,
    tool_call_id: row.toolCallId,
    tool_name: row.toolName,
    agent_name: row.agentName,
    arguments_json: row.argumentsJson,
    rule_source: row.ruleSource,
    reason: row.reason,
    user_role: row.userRole,
    http_method: row.httpMethod,
    http_path: row.httpPath,
    timestamp: row.timestamp,
    principal: row.principal,
  };
}

export const DENIAL_CSV_COLUMNS = [
  'id',
  'timestamp',
  'tool_call_id',
  'tool_name',
  'agent_name',
  'arguments_json',
  'rule_source',
  'reason',
  'user_role',
  'http_method',
  'http_path',
  'principal',
] as const;

/** One CSV field: RFC 4180 quoting, and a leading quote on formula-like text so a spreadsheet never executes it. */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  let s = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function denialCsvHeader(): string {
  return `${DENIAL_CSV_COLUMNS.join(',')}\r\n`;
}

export function denialCsvLine(row: DenialRow): string {
  const j = denialToJson(row);
  return `${DENIAL_CSV_COLUMNS.map((c) => csvField(j[c])).join(',')}\r\n`;
}
