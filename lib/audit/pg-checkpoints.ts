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
import { AUDIT_TRAIL_LOCK, CHAIN_NAMES, type ChainName } from './chain';
import { checkpointDue, checkpointOf, SigningGuard, type SignerOptions, type SigningKey } from './checkpoints';
import { chainRowsAfterSql, ExtensionCheck, witnessRow } from './extension';
import type { WitnessedCheckpoint } from './witness';
import { AUDIT_APPEND_LOCK_SQL, readHead } from './pg-chain';

export class PgCheckpointer {
  readonly guard: SigningGuard;

  constructor(
    private readonly pool: pg.Pool,
    private readonly key: SigningKey,
    options: SignerOptions = {},
  ) {
    this.guard = new SigningGuard(key, options);
    this.guard.witnessRows(async (chain, afterId, upToId) => {
      const r = await pool.query<unknown[]>({ text: chainRowsAfterSql(chain, '$1', '$2'), values: [afterId, upToId], rowMode: 'array' });
      return r.rows.map((row) => witnessRow(chain, row));
    });
  }

  /**
   * The head of `chain` to sign, when it moved and extends the head signed last; undefined otherwise (a refusal is
   * reported through the guard). Read before the lock is taken: the rows are append-only, so the head read stays.
   */
  private async signable(client: pg.ClientBase, chain: ChainName, minRows: number | undefined): Promise<{ id: number; hash: string } | undefined> {
    const head = await readHead(client, chain);
    // Nothing chained yet (an empty chain, or only rows copied from before the chain began).
    if (head.id === 0 || !head.hash) return undefined;
    const inDb = (
      await client.query<{ size: number; headHash: string; note: string }>('SELECT size, head_hash AS "headHash", note FROM audit_checkpoints WHERE chain = $1 ORDER BY id DESC LIMIT 1', [chain])
    ).rows[0];
    if (!checkpointDue(head.id, inDb?.size ?? 0, minRows)) return undefined;
    const last = this.guard.lastSigned(chain, inDb);
    if (!last) return head;
    const archived = Number((await client.query<{ upTo: number | null }>('SELECT max(up_to_id) AS "upTo" FROM audit_archives WHERE chain = $1', [chain])).rows[0]?.upTo ?? 0);
    const at =
      last.size <= archived ? 'archived' : ((await client.query<{ row_hash: string | null }>(`SELECT row_hash FROM ${chain} WHERE id = $1`, [last.size])).rows[0]?.row_hash ?? null);
    const check = new ExtensionCheck(chain, last, at, { id: head.id });
    let after = last.size;
    while (after < head.id) {
      const page = await client.query<unknown[]>({
        text: `${chainRowsAfterSql(chain, '$1', '$2')} LIMIT 5000`,
        values: [after, head.id],
        rowMode: 'array',
      });
      if (page.rows.length === 0) break;
      if (!page.rows.every((row) => check.add(row))) break;
      after = page.rows[page.rows.length - 1]![0] as number;
    }
    const problem = check.result();
    if (problem) {
      this.guard.refuse({ chain, head, lastSigned: last, problem });
      return undefined;
    }
    return head;
  }

  /**
   * Sign the head of each chain that moved since its last checkpoint (or `minRows` rows ago, when given) and extends
   * the head signed last. Returns the notes written (committed when this resolves). Ids are given under the lock,
   * one more than the newest, so they stay gapless (an identity sequence leaves a gap at every rollback).
   */
  async checkpoint(options: { minRows?: number } = {}): Promise<string[]> {
    const heads: [ChainName, { id: number; hash: string } | undefined][] = [];
    const client = await this.pool.connect();
    try {
      for (const chain of CHAIN_NAMES) heads.push([chain, await this.signable(client, chain, options.minRows)]);
    } finally {
      client.release();
    }
    const written = await inTransaction(this.pool, async ({ client }) => {
      await client.query(AUDIT_APPEND_LOCK_SQL, [AUDIT_TRAIL_LOCK]);
      const out: WitnessedCheckpoint[] = [];
      for (const [chain, head] of heads) {
        if (!head) continue;
        // Another signer may have signed meanwhile: a head is signed once.
        const last = await client.query<{ size: number }>('SELECT size FROM audit_checkpoints WHERE chain = $1 ORDER BY id DESC LIMIT 1', [chain]);
        if (!checkpointDue(head.id, last.rows[0]?.size ?? 0, 1)) continue;
        const c = checkpointOf(this.key, chain, head);
        await client.query(
          'INSERT INTO audit_checkpoints (id, chain, size, head_hash, created_at, note) VALUES ((SELECT coalesce(max(id), 0) + 1 FROM audit_checkpoints), $1, $2, $3, $4, $5)',
          [c.chain, c.size, c.headHash, c.time, c.note],
        );
        out.push({ chain, size: c.size, headHash: c.headHash, time: c.time, note: c.note });
      }
      return out;
    });
    this.guard.signed(written);
    return written.map((c) => c.note);
  }

  /** The newest checkpoint of each chain. */
  async latest(): Promise<{ chain: string; note: string }[]> {
    const r = await this.pool.query<{ chain: string; note: string }>(
      'SELECT chain, note FROM audit_checkpoints WHERE id IN (SELECT max(id) FROM audit_checkpoints GROUP BY chain) ORDER BY chain',
    );
    return r.rows;
  }
}
