/**
 * Signed checkpoints of the audit chains on PostgreSQL: the same notes, the same rule for when a head is due and the
 * same table as the SQLite Checkpointer (checkpoints.ts), so that verifyAuditPg checks them as verifyAudit does.
 *
 * A checkpoint takes the audit trail's append lock (AUDIT_APPEND_LOCK, pg-chain.ts) for its transaction. Appenders hold
 * that lock from their first row to their commit, so once it is ours no append is half done: the head read under it
 * is committed, and it is the last row (ids dense, hashes chained). The lock also orders checkpointers: two servers (or
 * a server and `swarm audit checkpoint`) that sign at once take turns, and the second sees the first's checkpoint and
 * signs nothing for a head that did not move. So no chain gets two checkpoints of the same size, leader or not. The
 * lock is held for two reads, a signature and an insert per chain: appends wait about a millisecond.
 */
import type pg from 'pg';
import { inTransaction } from '@/db/pg/client';
import { CHAIN_NAMES } from './chain';
import { checkpointDue, checkpointOf, type SigningKey } from './checkpoints';
import { AUDIT_APPEND_LOCK, readHead } from './pg-chain';

export class PgCheckpointer {
  constructor(
    private readonly pool: pg.Pool,
    private readonly key: SigningKey,
  ) {}

  /**
   * Sign the head of each chain that moved since its last checkpoint (or `minRows` rows ago, when given). Returns the
   * notes written (committed when this resolves).
   */
  checkpoint(options: { minRows?: number } = {}): Promise<string[]> {
    return inTransaction(this.pool, async ({ client }) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [AUDIT_APPEND_LOCK]);
      const notes: string[] = [];
      for (const chain of CHAIN_NAMES) {
        const head = await readHead(client, chain);
        // Nothing chained yet (an empty chain, or only rows copied from before the chain began).
        if (head.id === 0 || !head.hash) continue;
        const last = await client.query<{ size: number }>('SELECT size FROM audit_checkpoints WHERE chain = $1 ORDER BY id DESC LIMIT 1', [chain]);
        if (!checkpointDue(head.id, last.rows[0]?.size ?? 0, options.minRows)) continue;
        const c = checkpointOf(this.key, chain, head);
        await client.query('INSERT INTO audit_checkpoints (chain, size, head_hash, created_at, note) VALUES ($1, $2, $3, $4, $5)', [c.chain, c.size, c.headHash, c.time, c.note]);
        notes.push(c.note);
      }
      return notes;
    });
  }

  /** The newest checkpoint of each chain. */
  async latest(): Promise<{ chain: string; note: string }[]> {
    const r = await this.pool.query<{ chain: string; note: string }>(
      'SELECT chain, note FROM audit_checkpoints WHERE id IN (SELECT max(id) FROM audit_checkpoints GROUP BY chain) ORDER BY chain',
    );
    return r.rows;
  }
}
