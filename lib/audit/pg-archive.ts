/**
 * Retention on PostgreSQL: the same signed NDJSON bundle as on SQLite (archive.ts writes and re-verifies it), and only
 * then the rows removed, in one transaction that also records where each chain now starts (audit_archives) and, through
 * `onArchived`, the event retention.archived.
 *
 * The append-only triggers refuse DELETE to every connection. The one way past them is swarm_archive_prefix()
 * (migration 0004): a SECURITY DEFINER function of the tables' owner that removes a prefix of one chain up to a row
 * whose hash the caller names (the head the bundle's checkpoint signed), exactly as many rows as the bundle holds, and
 * records the cut in audit_archives in the same call. The triggers let a DELETE through only as the owner and below the
 * bound that function sets for its transaction, so the application role can archive and nothing else: no row from the
 * middle or the end, no removal without its record, and verifyAuditPg goes on from the recorded head.
 */
import type pg from 'pg';
import { inTransaction, type PgTx } from '@/db/pg/client';
import { CHAIN_NAMES, type ChainName } from './chain';
import { rmSync } from 'node:fs';
import { AppError } from '@/lib/errors';
import { writeBundle, type ArchiveResult, type ChainPrefix, type Row } from './archive';
import type { SigningKey } from './checkpoints';
import { AUDIT_APPEND_LOCK } from './pg-chain';

/** The rows to archive in a chain: every row up to the first one at or after `before` (a contiguous prefix). */
async function prefixOf(client: pg.ClientBase, chain: ChainName, before: number): Promise<ChainPrefix> {
  const r = await client.query<{ min: number | null; max: number | null; firstKept: number | null }>(
    `SELECT min(id) AS min, max(id) AS max, (SELECT min(id) FROM ${chain} WHERE timestamp >= $1) AS "firstKept" FROM ${chain}`,
    [before],
  );
  const { min, max, firstKept } = r.rows[0]!;
  if (min === null || max === null) return { chain, rows: [] };
  const end = firstKept === null ? max : firstKept - 1;
  if (end < min) return { chain, rows: [] };
  const rows = await client.query<Row>(`SELECT * FROM ${chain} WHERE id <= $1 ORDER BY id`, [end]);
  return { chain, rows: rows.rows };
}

/**
 * Archive the rows older than `before` (seconds) of both chains into `file` (which must not exist), then remove them.
 * `onArchived` runs inside the removing transaction (record retention.archived there: it commits with the removal or
 * not at all). The same inputs and result as archiveBefore on SQLite.
 */
export async function archiveAuditPg(
  pool: pg.Pool,
  key: SigningKey,
  before: number,
  file: string,
  onArchived: (r: ArchiveResult, tx: PgTx) => Promise<void> = async () => {},
): Promise<ArchiveResult> {
  // One snapshot for both chains: rows appended meanwhile are later than `before` anyway, and never half seen.
  const prefixes = await inTransaction(
    pool,
    async ({ client }) => {
      const out: ChainPrefix[] = [];
      for (const chain of CHAIN_NAMES) out.push(await prefixOf(client, chain, before));
      return out;
    },
    '',
    'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
  );
  const result = writeBundle(key, before, prefixes, file);
  try {
    await inTransaction(pool, async (tx) => {
      // Appends wait for the removal: a writer that reads the head of a chain archived whole finds it in audit_archives.
      await tx.client.query('SELECT pg_advisory_xact_lock($1)', [AUDIT_APPEND_LOCK]);
      for (const c of result.chains) {
        if (c.upToId === null) continue;
        await tx.client.query('SELECT swarm_archive_prefix($1, $2, $3, $4, $5, $6, $7)', [c.chain, c.upToId, c.headHash, c.rows, file, result.sha256, c.note]);
      }
      await onArchived(result, tx);
    });
  } catch (error) {
    // Nothing was archived (the removal is one transaction): no bundle is left to be taken for an archive.
    rmSync(file, { force: true });
    if ((error as { code?: string }).code === '42501') {
      throw new AppError('FORBIDDEN', `This database role may not archive (${(error as Error).message}): run swarm audit archive as the owner of the tables (docs/deployment.md). Nothing was archived.`);
    }
    throw error;
  }
  return result;
}
