/**
 * The recorder on PostgreSQL: the same rows as the SQLite recorder (auditRowOf: what is recorded where, masked, with
 * the policy revision), appended to the one chain of each table by PgChainWriter. A row is written either in a
 * transaction of the recorder's (record: the rows recorded at the same moment commit together) or in the caller's
 * (recordIn: an approval's transition and its audit row commit together); either way nothing resolves before the
 * commit that holds it, and a failure rejects, so the decision fails closed.
 */
import type pg from 'pg';
import { inTransaction, isDatabaseUnreachable, type PgTx } from '@/db/pg/client';
import { postgresTx, type TxRunner } from '@/db/dialect';
import type { AuditEvent, Recorded, Recorder } from '@/lib/permissions';
import { PgChainWriter } from './pg-chain';
import { auditRowOf, denialValues, type DenialInput, type RecorderOptions } from './recorder';
import type { ChainName } from './chain';
import { canonicalJson } from '@/lib/approvals/canonical';

/**
 * The chain writer of one transaction (keyed by the transaction object, never by the pooled connection, which serves
 * later transactions too), so that several rows of it follow each other without reading the head again.
 */
const writers = new WeakMap<object, PgChainWriter>();

/** One row waiting for the next commit of the recorder's group. */
interface Queued {
  chain: ChainName;
  values: unknown[];
  revision: string | null;
  resolve(id: number): void;
  reject(error: unknown): void;
}

/** The most rows one group commit writes. */
const MAX_GROUP = 256;

export class PgAuditRecorder implements Recorder {
  private queue: Queued[] = [];
  private flushing = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly options: RecorderOptions,
  ) {}

  /**
   * Record in a transaction of its own, committed with the rows other callers recorded at the same moment (group
   * commit: one transaction, one turn of the chain's lock and one flush of the WAL for all of them). The promise
   * resolves only after the commit that holds the row. A decision that writes nothing (an ALLOW while decision_log_all
   * is off) takes no connection: it neither waits for the database nor fails when the database is gone.
   */
  async record(event: AuditEvent): Promise<Recorded | undefined> {
    const row = auditRowOf(event, this.options);
    if (!row) return undefined;
    const revision = row.revision;
    const id = await new Promise<number>((resolve, reject) => {
      this.queue.push({ chain: row.chain, values: row.values, revision, resolve, reject });
      if (!this.flushing) {
        this.flushing = true;
        // The rows recorded during this turn of the event loop join the first group.
        setImmediate(() => void this.flush());
      }
    });
    return { table: row.chain, id };
  }

  /** Record inside the caller's transaction (committed with it). */
  async recordIn(tx: Pick<PgTx, 'client'>, event: AuditEvent): Promise<Recorded | undefined> {
    const row = auditRowOf(event, this.options);
    if (!row) return undefined;
    return { table: row.chain, id: await this.appendIn(tx, row.chain, row.values, row.revision) };
  }

  /** Append a denial inside the caller's transaction (a rejected or expired approval). Returns its id. */
  appendDenialIn(tx: Pick<PgTx, 'client'>, d: DenialInput): Promise<number> {
    const revision = d.policyRevision === undefined ? this.options.revision() : d.policyRevision;
    return this.appendIn(tx, 'permission_denials', denialValues(d, revision), revision);
  }

  /**
   * Record inside a transaction of the dialect port (an approval's transition: its store is written once for both
   * databases), on the connection that transaction holds (TransitionRecorder).
   */
  recordWithin(tx: TxRunner, event: AuditEvent): Promise<Recorded | undefined> {
    return this.recordIn(postgresTx(tx), event);
  }

  /** appendDenialIn inside a transaction of the dialect port. */
  appendDenialWithin(tx: TxRunner, d: DenialInput): Promise<number> {
    return this.appendDenialIn(postgresTx(tx), d);
  }

  /** Write the queued rows in groups until none is left; the rows queued meanwhile make the next group. */
  private async flush(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const group = this.queue.splice(0, MAX_GROUP);
        try {
          const ids = await this.write(group);
          group.forEach((q, i) => q.resolve(ids[i]!));
        } catch (error) {
          // One row that cannot be written must not cost the others theirs: each is tried again on its own (unless the
          // database itself is gone: then none can be, and all are refused at once).
          if (group.length === 1 || isDatabaseUnreachable(error)) for (const q of group) q.reject(error);
          else for (const q of group) await this.write([q]).then(([id]) => q.resolve(id!), q.reject);
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  private write(group: readonly Queued[]): Promise<number[]> {
    return inTransaction(this.pool, async (tx) => {
      for (const revision of new Set(group.map((q) => q.revision))) if (revision) await this.storeRevision(tx, revision);
      const writer = new PgChainWriter(tx.client);
      const ids = new Array<number>(group.length);
      for (const chain of new Set(group.map((q) => q.chain))) {
        const members = group.map((q, i) => [q, i] as const).filter(([q]) => q.chain === chain);
        const written = await writer.append(chain, members.map(([q]) => q.values));
        members.forEach(([, i], k) => (ids[i] = written[k]!));
      }
      return ids;
    });
  }

  /** The content of a revision, stored once beside the first rows that name it. */
  private async storeRevision(tx: Pick<PgTx, 'client'>, revision: string): Promise<void> {
    const content = this.options.revisionContent?.(revision);
    if (!content) return;
    await tx.client.query('INSERT INTO policy_revisions (revision, content_json, first_seen_at) VALUES ($1, $2, $3) ON CONFLICT (revision) DO NOTHING', [
      revision,
      canonicalJson(content),
      Date.now() / 1000,
    ]);
  }

  private async appendIn(tx: Pick<PgTx, 'client'>, chain: ChainName, values: unknown[], revision: string | null): Promise<number> {
    if (revision) await this.storeRevision(tx, revision);
    let writer = writers.get(tx);
    if (!writer) {
      writer = new PgChainWriter(tx.client);
      writers.set(tx, writer);
    }
    const [id] = await writer.append(chain, [values]);
    return id!;
  }
}
