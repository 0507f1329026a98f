/**
 * Notifications on PostgreSQL, for several servers on one database: the twin of NotificationService (service.ts), with
 * the same notices, channels, signatures and retry schedule (core.ts); only the statements differ.
 *
 * - Queueing: a new approval request is queued inside the approval store's transaction (`onApprovalIn`, the
 *   PgApprovalListener's `tx`), behind a savepoint, so that a failed insert never costs the request. Every row has a
 *   unique dedupe key and is inserted with ON CONFLICT DO NOTHING: two servers that notice the same event (an expiring
 *   request, both ticking) leave one row per channel.
 * - A denial burst is decided under a transaction-level advisory lock per rule: the servers that tick at once take it
 *   one after the other, and all but the first find this window already told.
 * - Delivery: `claim` locks due rows with FOR UPDATE SKIP LOCKED inside one UPDATE … RETURNING, so each due row goes to
 *   exactly one server; its lease runs out if that server dies mid-send, and another claims it again.
 */
import { and, asc, desc, eq, gt, lt, lte, sql } from 'drizzle-orm';
import type pg from 'pg';
import { inTransaction, pgDatabase, type PgDb, type PgTx } from '@/db/pg/client';
import { approvals, notificationDeliveries } from '@/db/pg/schema';
import type { NotificationDeliveryRow } from '@/db/schema';
import type { ApprovalEvent } from '@/lib/approvals/store';
import type { BurstRule, Channel, NotificationConfig } from './config';
import {
  approvalNotice,
  burstKeySuffix,
  burstNotice,
  burstWindowStart,
  channelsFor,
  CLAIM_BATCH,
  claimTerms,
  clock,
  countsOf,
  deliveriesOf,
  deliveryOf,
  deliveryWhere,
  DeliveryLoop,
  EXPIRING_BATCH,
  ExpiringMemo,
  LEASE_LOST,
  LIST_LIMIT,
  type DeliveryFilter,
  type DeliveryOptions,
  type DeliveryStatus,
  type Settled,
} from './core';
import type { Notice } from './messages';

export interface PgNotificationServiceOptions {
  pool: pg.Pool;
  config: () => NotificationConfig;
  env: Readonly<Record<string, string | undefined>>;
  /** the keys a compliance profile masks, as the audit trail masks them */
  maskKeys?: ReadonlySet<string>;
  /** which server records rows (its name or `app`) */
  origin?: string;
}

/** The first key of the advisory locks of burst rules (the second is the hash of the rule id). */
const BURST_LOCK = 0x5357_4e01;

/** Something that runs a query: the pool (a statement of its own) or a transaction's connection. */
type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient;

export class PgNotificationService {
  private readonly db: PgDb;
  private readonly pool: pg.Pool;
  private readonly delivery: DeliveryLoop;
  private readonly expiring = new ExpiringMemo();
  private readonly burstFiredAt = new Map<string, number>();

  constructor(private readonly options: PgNotificationServiceOptions) {
    this.pool = options.pool;
    this.db = pgDatabase(options.pool);
    this.delivery = new DeliveryLoop({ claim: (now) => this.claim(now), record: (s) => this.record(s) }, options.config);
  }

  private get config(): NotificationConfig {
    return this.options.config();
  }

  // -------------------------------------------------------------------------------------------------------------
  // Queueing (never the network)

  /**
   * The approval store's listener (PgApprovalListener): a new request is queued in the transaction that created it, so
   * that it is queued if and only if the request commits.
   */
  async onApprovalIn(tx: Pick<PgTx, 'client'>, e: ApprovalEvent): Promise<void> {
    if (e.type !== 'requested') return;
    const channels = channelsFor(this.config, 'approval_requested');
    if (channels.length === 0) return;
    // A failed statement aborts a PostgreSQL transaction: the savepoint keeps the request's transaction usable.
    await tx.client.query('SAVEPOINT swarm_notify');
    try {
      await this.queue(tx.client, approvalNotice(e.row, 'approval_requested', this.options), channels);
      await tx.client.query('RELEASE SAVEPOINT swarm_notify');
    } catch (error) {
      await tx.client.query('ROLLBACK TO SAVEPOINT swarm_notify');
      // A notification must never cost a decision: log and go on.
      console.error('Queueing an approval notification failed; the request stands.', error);
    }
  }

  /** The same, outside any transaction (an event that was not told inside one). */
  async onApproval(e: ApprovalEvent): Promise<void> {
    if (e.type !== 'requested') return;
    try {
      await this.queue(this.pool, approvalNotice(e.row, 'approval_requested', this.options), channelsFor(this.config, 'approval_requested'));
    } catch (error) {
      console.error('Queueing an approval notification failed; the request stands.', error);
    }
  }

  /** One row per channel; a row already queued for the same event, subject and channel (by any server) is kept. */
  private async queue(on: Queryable, notice: Notice, channels: readonly Channel[], keySuffix = '', now = clock()): Promise<number> {
    if (channels.length === 0) return 0;
    let queued = 0;
    for (const r of deliveriesOf(notice, channels, this.options.origin ?? 'app', now, keySuffix)) {
      const res = await on.query(
        `INSERT INTO notification_deliveries
           (dedupe_key, channel, channel_kind, event, subject, body, status, attempts, max_attempts, next_attempt_at, origin, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, 'pending', 0, $7, $8, $9, $10, $11)
         ON CONFLICT (dedupe_key) DO NOTHING`,
        [r.dedupeKey, r.channel, r.channelKind, r.event, r.subject, r.body, r.maxAttempts, r.nextAttemptAt, r.origin, r.createdAt, r.updatedAt],
      );
      queued += res.rowCount ?? 0;
    }
    return queued;
  }

  /**
   * The sweeper's tick (every second): requests nearing their expiry (each once) and denial bursts (each once per
   * window), whichever servers tick. Cheap when nothing is configured: no query at all.
   */
  async tick(now = clock()): Promise<void> {
    const config = this.config;
    if (config.channels.length === 0) return;
    await this.queueExpiring(config, now);
    for (const rule of config.bursts) await this.checkBurst(rule, now);
  }

  private async queueExpiring(config: NotificationConfig, now: number): Promise<void> {
    const channels = channelsFor(config, 'approval_expiring');
    if (channels.length === 0) return;
    const before = config.expiringBeforeSeconds;
    // Pending requests that enter the window now; a request that was shorter-lived than the window from the start was
    // announced with its time left when it was requested.
    const rows = await this.db
      .select()
      .from(approvals)
      .where(
        and(
          eq(approvals.status, 'pending'),
          gt(approvals.expiresAt, now),
          lte(approvals.expiresAt, now + before),
          lt(approvals.requestedAt, sql`${approvals.expiresAt} - ${before}::double precision`),
        ),
      )
      .orderBy(asc(approvals.expiresAt))
      .limit(EXPIRING_BATCH);
    for (const row of this.expiring.fresh(rows)) {
      await this.queue(this.pool, approvalNotice(row, 'approval_expiring', this.options), channels, '', now);
      this.expiring.told(row.id);
    }
  }

  private async checkBurst(rule: BurstRule, now: number): Promise<void> {
    const from = burstWindowStart(rule, this.burstFiredAt.get(rule.id) ?? 0, now);
    if (from === undefined) return;
    const agentClause = rule.agent ? ' AND agent_name = $2' : '';
    const params = rule.agent ? [from, rule.agent] : [from];
    const reached = await this.pool.query<{ n: number }>(
      `SELECT count(*) AS n FROM (SELECT 1 FROM permission_denials WHERE timestamp > $1${agentClause} LIMIT ${rule.denials}) AS w`,
      params,
    );
    if (Number(reached.rows[0]!.n) < rule.denials) return;
    const channels = channelsFor(this.config, 'denial_burst', rule.channels);
    // Every server ticks: the rule's lock makes them decide one after the other, each seeing what the one before wrote.
    const fired = await inTransaction(this.pool, async ({ client }) => {
      await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [BURST_LOCK, rule.id]);
      const prev = await client.query<{ at: number | null }>(`SELECT max(created_at) AS at FROM notification_deliveries WHERE event = 'denial_burst' AND subject = $1`, [rule.id]);
      const at = prev.rows[0]!.at;
      if (at !== null && at + rule.withinSeconds > now) return at;
      const { rows } = await client.query<{ n: number }>(`SELECT count(*) AS n FROM permission_denials WHERE timestamp > $1${agentClause}`, params);
      await this.queue(client, burstNotice(rule, Number(rows[0]!.n), from, now, this.options), channels, burstKeySuffix(now), now);
      return now;
    });
    this.burstFiredAt.set(rule.id, fired);
  }

  // -------------------------------------------------------------------------------------------------------------
  // Delivery (in the background)

  /** Deliver due rows every `intervalMs`, in the background. */
  startDelivery(options: DeliveryOptions = {}): void {
    this.delivery.start(options);
  }

  /**
   * Stop the timer. Resolves when the delivery in flight has recorded its outcomes: await it before closing the pool.
   * (A server that exits instead leaves its rows claimed until their lease runs out; another server sends them then.)
   */
  stopDelivery(): Promise<void> {
    return this.delivery.stop();
  }

  get deliveryRunning(): boolean {
    return this.delivery.running;
  }

  /** Claim the due rows and send them, all at once; resolves with how many were sent or failed. One run at a time. */
  deliverDue(now = clock()): Promise<number> {
    return this.delivery.deliverDue(now);
  }

  /**
   * Claim up to CLAIM_BATCH due rows for this server. The rows are picked with FOR UPDATE SKIP LOCKED: a row another
   * server is claiming at this moment is skipped, and one it claimed a moment ago no longer matches, so each due row
   * goes to exactly one server. A row whose lease ran out is due again; one that has no attempt left fails.
   */
  async claim(now = clock(), limit = CLAIM_BATCH): Promise<NotificationDeliveryRow[]> {
    await this.pool.query(
      `UPDATE notification_deliveries SET status = 'failed', claim_token = NULL, lease_until = NULL, updated_at = $1,
         last_error = coalesce(last_error || ' ', '') || $2
       WHERE status = 'sending' AND lease_until < $1 AND attempts >= max_attempts`,
      [now, LEASE_LOST],
    );
    const { token, leaseUntil } = claimTerms(this.config, now);
    const { rows } = await this.pool.query<Record<string, unknown>>(
      `UPDATE notification_deliveries SET status = 'sending', claim_token = $1, lease_until = $2, attempts = attempts + 1, updated_at = $3
       WHERE id IN (
         SELECT id FROM notification_deliveries
         WHERE (status = 'pending' AND next_attempt_at <= $3) OR (status = 'sending' AND lease_until < $3)
         ORDER BY id LIMIT $4
         FOR UPDATE SKIP LOCKED)
       RETURNING *`,
      [token, leaseUntil, now, limit],
    );
    return rows.map(deliveryOf).sort((a, b) => a.id - b.id);
  }

  /** How a send ended, written only while the row is still ours (its claim token). 1 when it was. */
  private async record(s: Settled): Promise<number> {
    const res = await this.pool.query(
      `UPDATE notification_deliveries SET status = $1, next_attempt_at = $2, updated_at = $3, last_status = $4, last_error = $5, delivered_at = $6,
         claim_token = NULL, lease_until = NULL WHERE id = $7 AND claim_token = $8`,
      [s.status, s.nextAttemptAt, s.updatedAt, s.lastStatus, s.lastError, s.deliveredAt, s.id, s.claimToken],
    );
    return res.rowCount ?? 0;
  }

  // -------------------------------------------------------------------------------------------------------------
  // Reading (admins)

  list(filter: DeliveryFilter = {}): Promise<NotificationDeliveryRow[]> {
    return this.db
      .select()
      .from(notificationDeliveries)
      .where(deliveryWhere(notificationDeliveries, filter))
      .orderBy(desc(notificationDeliveries.id))
      .limit(filter.limit ?? LIST_LIMIT);
  }

  /** How many rows are in each state (the page's summary). */
  async counts(): Promise<Record<DeliveryStatus, number>> {
    const { rows } = await this.pool.query<{ status: DeliveryStatus; n: number }>(`SELECT status, count(*) AS n FROM notification_deliveries GROUP BY status`);
    return countsOf(rows);
  }
}
