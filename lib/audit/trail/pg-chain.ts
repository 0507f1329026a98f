/**
 * The audit chains on PostgreSQL: one chain per table, whichever server writes, with the same row encoding and hashes
 * as on SQLite (chain.ts), so a trail copied across verifies unchanged.
 *
 * Several servers append at once. A transaction that appends takes one advisory lock for the audit trail first
 * (pg_advisory_xact_lock, released at its commit or rollback), reads the chain's head once, and gives its rows the next
 * ids and hashes: ids stay dense and in chain order, and no two writers can both follow the same head. One lock for both
 * tables, so two transactions that each append to both can never wait on each other in opposite orders. The lock is
 * held from a transaction's first append to its commit: keep such transactions short (a group commit of decisions is).
 */
import type pg from 'pg';
import { advisoryLockSql } from '@/db/dialect';
import { AUDIT_TRAIL_LOCK, CHAIN_COLUMNS, GENESIS_HASH, chainHash, encodeRow, type ChainName, type Head } from './chain';

/** The advisory lock of the audit trail, as SqlDatabase.transaction takes it for `serialise: AUDIT_TRAIL_LOCK`. */
export const AUDIT_APPEND_LOCK_SQL = advisoryLockSql(AUDIT_TRAIL_LOCK);

/**
 * Appends rows to the chains inside one transaction of `client` (the caller begins and commits it). One writer per
 * transaction: it remembers that it holds the lock and each chain's head.
 */
export class PgChainWriter {
  private locked = false;
  private readonly heads = new Map<ChainName, Head>();

  constructor(private readonly client: pg.ClientBase) {}

  /**
   * Append rows (the values of CHAIN_COLUMNS[chain], in order) to a chain; returns their ids. A row's id and hashes are
   * computed here, under the lock: nothing a caller passes can place a row elsewhere in the chain.
   */
  async append(chain: ChainName, rows: readonly (readonly unknown[])[]): Promise<number[]> {
    if (rows.length === 0) return [];
    const columns = CHAIN_COLUMNS[chain];
    for (const r of rows) {
      if (r.length !== columns.length) throw new Error(`A ${chain} row has ${r.length} values; the chain encodes ${columns.length}.`);
    }
    if (!this.locked) {
      await this.client.query(AUDIT_APPEND_LOCK_SQL, [AUDIT_TRAIL_LOCK]);
      this.locked = true;
    }
    let head = this.heads.get(chain);
    if (!head) head = await readHead(this.client, chain);
    const ids: number[] = [];
    const params: unknown[] = [];
    const tuples: string[] = [];
    const width = columns.length + 3;
    for (const r of rows) {
      const id: number = head.id + 1;
      const hash = chainHash(head.hash, id, encodeRow(r));
      const base = params.length;
      params.push(id, ...r, head.hash, hash);
      tuples.push(`(${Array.from({ length: width }, (_, i) => `$${base + i + 1}`).join(',')})`);
      ids.push(id);
      head = { id, hash };
    }
    await this.client.query(`INSERT INTO ${chain} (id, ${columns.join(', ')}, prev_hash, row_hash) VALUES ${tuples.join(',')}`, params);
    this.heads.set(chain, head);
    return ids;
  }
}

/** The newest row of a chain, or where an archive left it, or the genesis. */
async function readHead(client: pg.ClientBase, chain: ChainName): Promise<Head> {
  const last = await client.query<{ id: number; row_hash: string }>(`SELECT id, row_hash FROM ${chain} ORDER BY id DESC LIMIT 1`);
  if (last.rows[0]) return { id: last.rows[0].id, hash: last.rows[0].row_hash };
  const archived = await client.query<{ up_to_id: number; head_hash: string }>('SELECT up_to_id, head_hash FROM audit_archives WHERE chain = $1 ORDER BY up_to_id DESC LIMIT 1', [chain]);
  if (archived.rows[0]) return { id: archived.rows[0].up_to_id, hash: archived.rows[0].head_hash };
  return { id: 0, hash: GENESIS_HASH };
}
