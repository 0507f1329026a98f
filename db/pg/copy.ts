/**
 * `swarm db copy --from FILE.db --to postgres://…`: move an existing SQLite trail to PostgreSQL, every table with its
 * ids and hashes unchanged, in one transaction, into an empty database; then verify the chains on PostgreSQL and compare
 * their heads with the source's. Derived data that PostgreSQL rebuilds its own way (SQLite's free-text index) stays
 * behind.
 */
import Database from 'better-sqlite3';
import type pg from 'pg';
import { PostgresDatabase } from '@/db/dialect';
import { verifyAudit, verifyTrail, type VerifyReport } from '@/lib/audit/trail/verify';
import { inTransaction } from './client';
import { brand } from '@/lib/errors';

/** The tables copied, parents before children (foreign keys hold at every insert). */
export const COPIED_TABLES = [
  'users',
  'api_tokens',
  'sessions',
  'approvals',
  'approval_votes',
  'policy_revisions',
  'flag_overrides',
  'flag_changes',
  'permission_denials',
  'security_events',
  'audit_checkpoints',
  'audit_archives',
  'permission_denial_daily_counts',
  'permission_denial_rollup_state',
  'notification_deliveries',
  'hook_rate_calls',
  'policy_proposals',
  'policy_votes',
  'policy_activations',
  'mcp_tool_pins',
] as const;

export interface CopyReport {
  tables: { table: string; rows: number }[];
  source: VerifyReport;
  target: VerifyReport;
  /** both chains end at the same id and hash on both sides */
  headsMatch: boolean;
}

export class CopyRefused extends Error {
  static readonly kind = 'CopyRefused';
  constructor(message: string) {
    super(message);
    brand(this, CopyRefused);
  }
}

const BATCH_ROWS = 500;

export async function copySqliteToPostgres(from: string, pool: pg.Pool, verifierKey?: string): Promise<CopyReport> {
  const sqlite = new Database(from, { readonly: true, fileMustExist: true });
  try {
    const source = verifyAudit(sqlite, verifierKey);
    const tables: CopyReport['tables'] = [];
    await inTransaction(pool, async ({ client }) => {
      for (const table of COPIED_TABLES) {
        const present = await client.query<{ n: number }>(`SELECT count(*)::int8 AS n FROM ${table}`);
        if (present.rows[0]!.n > 0) throw new CopyRefused(`The target already holds rows in ${table}: copy into an empty database (npx swarm db migrate creates one).`);
      }
      for (const table of COPIED_TABLES) tables.push({ table, rows: await copyTable(sqlite, client, table) });
    });
    const target = await verifyTrail(new PostgresDatabase(pool), verifierKey);
    const headsMatch = source.chains.every((c) => {
      const t = target.chains.find((x) => x.chain === c.chain);
      return t !== undefined && t.lastId === c.lastId && t.headHash === c.headHash;
    });
    return { tables, source, target, headsMatch };
  } finally {
    sqlite.close();
  }
}

async function copyTable(sqlite: Database.Database, client: pg.PoolClient, table: string): Promise<number> {
  const targetColumns = (
    await client.query<{ column_name: string; data_type: string; is_identity: string }>(
      "SELECT column_name, data_type, is_identity FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position",
      [table],
    )
  ).rows;
  const sourceColumns = new Set((sqlite.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name));
  const missing = targetColumns.filter((c) => !sourceColumns.has(c.column_name)).map((c) => c.column_name);
  if (missing.length > 0) throw new CopyRefused(`${table}: the source has no column ${missing.join(', ')}; bring the SQLite database up to date first (npx swarm db migrate --db FILE).`);
  const columns = targetColumns.map((c) => c.column_name);
  const booleans = new Set(targetColumns.filter((c) => c.data_type === 'boolean').map((c) => columns.indexOf(c.column_name)));
  const rows = sqlite.prepare(`SELECT ${columns.join(', ')} FROM ${table} ORDER BY rowid`).raw(true).iterate() as IterableIterator<unknown[]>;
  let count = 0;
  let batch: unknown[][] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const params: unknown[] = [];
    const tuples = batch.map((r) => {
      const base = params.length;
      r.forEach((v, i) => params.push(booleans.has(i) && v !== null ? v === 1 || v === true : v));
      return `(${r.map((_, i) => `$${base + i + 1}`).join(',')})`;
    });
    await client.query(`INSERT INTO ${table} (${columns.join(', ')}) OVERRIDING SYSTEM VALUE VALUES ${tuples.join(',')}`, params);
    batch = [];
  };
  for (const row of rows) {
    batch.push(row);
    count++;
    if (batch.length === BATCH_ROWS) await flush();
  }
  await flush();
  // Identity columns continue after the copied ids.
  for (const c of count > 0 ? targetColumns.filter((t) => t.is_identity === 'YES') : []) {
    await client.query(`SELECT setval(pg_get_serial_sequence($1, $2), (SELECT max(${c.column_name}) FROM ${table}))`, [table, c.column_name]);
  }
  return count;
}
