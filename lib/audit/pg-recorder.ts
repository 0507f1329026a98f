/**
 * The recorder on PostgreSQL: the same rows as the SQLite recorder (auditRowOf: what is recorded where, masked, with
 * the policy revision), appended to the one chain of each table by PgChainWriter. A row is written either in its own
 * transaction (record) or in the caller's (recordIn: an approval's transition and its audit row commit together);
 * either way nothing resolves before the commit that holds it, and a failure rejects, so the decision fails closed.
 */
import type pg from 'pg';
import { inTransaction, type PgTx } from '@/db/pg/client';
import type { AuditEvent, Recorded, Recorder } from '@/lib/permissions';
import { PgChainWriter } from './pg-chain';
import { auditRowOf, denialValues, type DenialInput, type RecorderOptions } from './recorder';
import type { ChainName } from './chain';
import type { RevisionContent } from './revisions';
import { canonicalJson } from '@/lib/approvals/canonical';

export interface PgRecorderOptions extends RecorderOptions {
  /** the content of a revision, stored once beside the rows that name it (policy_revisions) */
  revisionContent?(revision: string): RevisionContent | undefined;
}

/**
 * The chain writer of one transaction (keyed by the transaction object, never by the pooled connection, which serves
 * later transactions too), so that several rows of it follow each other without reading the head again.
 */
const writers = new WeakMap<object, PgChainWriter>();

export class PgAuditRecorder implements Recorder {
  constructor(
    private readonly pool: pg.Pool,
    private readonly options: PgRecorderOptions,
  ) {}

  /**
   * Record in a transaction of its own. A decision that writes nothing (an ALLOW while decision_log_all is off) takes
   * no connection: it must not wait for the database, nor fail when the database is gone.
   */
  async record(event: AuditEvent): Promise<Recorded | undefined> {
    const row = auditRowOf(event, this.options);
    if (!row) return undefined;
    return inTransaction(this.pool, async (tx) => ({ table: row.chain, id: await this.appendIn(tx, row.chain, row.values) }));
  }

  /** Record inside the caller's transaction (committed with it). */
  async recordIn(tx: Pick<PgTx, 'client'>, event: AuditEvent): Promise<Recorded | undefined> {
    const row = auditRowOf(event, this.options);
    if (!row) return undefined;
    return { table: row.chain, id: await this.appendIn(tx, row.chain, row.values) };
  }

  /** Append a denial inside the caller's transaction (a rejected or expired approval). Returns its id. */
  appendDenialIn(tx: Pick<PgTx, 'client'>, d: DenialInput): Promise<number> {
    return this.appendIn(tx, 'permission_denials', denialValues(d, d.policyRevision === undefined ? this.options.revision() : d.policyRevision));
  }

  private async appendIn(tx: Pick<PgTx, 'client'>, chain: ChainName, values: unknown[]): Promise<number> {
    const revision = this.options.revision();
    const content = revision ? this.options.revisionContent?.(revision) : undefined;
    if (revision && content) {
      await tx.client.query('INSERT INTO policy_revisions (revision, content_json, first_seen_at) VALUES ($1, $2, $3) ON CONFLICT (revision) DO NOTHING', [
        revision,
        canonicalJson(content),
        Date.now() / 1000,
      ]);
    }
    let writer = writers.get(tx);
    if (!writer) {
      writer = new PgChainWriter(tx.client);
      writers.set(tx, writer);
    }
    const [id] = await writer.append(chain, [values]);
    return id!;
  }
}
