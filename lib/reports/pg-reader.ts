/**
 * The report's reader on PostgreSQL (see reader.ts): the gatherer's `?` statements numbered for `pg`, their integers
 * turned into numbers, and the chains verified by verifyAuditPg. The facts that are not rows (profiles, flags,
 * revision, key) come from the server that asks, as they do from the application on SQLite.
 */
import type pg from 'pg';
import { verifyAuditPg } from '@/lib/audit/pg-chain';
import type { ReportFacts, ReportReader, SqlParam } from './reader';

export interface PgReportReaderOptions extends ReportFacts {
  pool: pg.Pool;
}

/** `?` placeholders as `$1`, `$2`, … (none of the report's string literals holds a `?`, and literals are skipped). */
export function numberedPlaceholders(sql: string): string {
  let n = 0;
  return sql.replace(/'(?:[^']|'')*'|\?/g, (m) => (m === '?' ? `$${++n}` : m));
}

/** int8 (counts, ids) and numeric (a sum of int8): `pg` answers them as strings unless the pool parses them. */
const INTEGER_TYPES = new Set([20, 1700]);

function withNumbers<T>(result: pg.QueryResult): T[] {
  const convert = result.fields.filter((f) => INTEGER_TYPES.has(f.dataTypeID)).map((f) => f.name);
  if (convert.length === 0) return result.rows as T[];
  return result.rows.map((row: Record<string, unknown>) => {
    for (const name of convert) if (typeof row[name] === 'string') row[name] = Number(row[name]);
    return row as T;
  });
}

export function pgReportReader(options: PgReportReaderOptions): ReportReader {
  const { pool } = options;
  const all = async <T>(sql: string, params: readonly SqlParam[] = []): Promise<T[]> =>
    withNumbers<T>(await pool.query({ text: numberedPlaceholders(sql), values: [...params] }));
  return {
    dialect: 'postgres',
    facts: { profiles: options.profiles, revision: options.revision, flags: options.flags, verifierKey: options.verifierKey },
    all,
    get: async <T>(sql: string, params?: readonly SqlParam[]) => (await all<T>(sql, params))[0],
    verify: (verifierKey, range) => verifyAuditPg(pool, verifierKey, { ...range, witnessed: options.witnessed?.() ?? [] }),
    // No daily counts are kept on PostgreSQL yet: the report reads the rows after their (zero) high-water mark.
    refreshDailyCounts: async () => {},
  };
}
