/**
 * Notifications: people told when they are needed (config/notifications.yaml).
 *
 * Two halves that never wait for each other:
 * - Queueing, synchronous and local: the process that sees an event writes one row per channel into
 *   notification_deliveries. A new approval request is queued inside the transaction that created it (the approval
 *   store's listener); a request nearing its expiry and a burst of denials are noticed by the approval sweeper's
 *   one-second tick. Nothing on the decision path touches the network.
 * - Delivery, asynchronous: a deliverer claims due rows with one UPDATE (a claim token and a lease), sends them, and
 *   records the outcome; a failure is retried with backoff up to the channel's max_attempts, then marked failed. Two
 *   processes on one database never send the same row at once; a process that dies mid-send leaves a lease that runs
 *   out, and the row is claimed again (so a receiver may, rarely, see a delivery id twice: X-Swarm-Delivery dedupes).
 */
import { desc } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { notificationDeliveries, type NotificationDeliveryRow } from '@/db/schema';
import type { ApprovalEvent } from '@/lib/approvals/store';
import type { Channel, NotificationConfig } from './config';
import {
  approvalNotice,
  approvalOf,
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

// The shared parts, where the API, the pages and the tests have always imported them from.
export {
  DELIVERY_HEADER,
  deliveryToJson,
  EVENT_HEADER,
  signature,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  type DeliveryFilter,
  type DeliveryJson,
  type DeliveryOptions,
  type DeliveryStatus,
} from './core';

export interface NotificationServiceOptions {
  db: Db;
  config: () => NotificationConfig;
  env: Readonly<Record<string, string | undefined>>;
  /** the keys a compliance profile masks, as the audit trail masks them */
  maskKeys?: ReadonlySet<string>;
  /** which process records rows (`listener`, `next`, `app`) */
  origin?: string;
}

export class NotificationService {
  private readonly db: Db;
  private readonly delivery: DeliveryLoop;
  private readonly expiring = new ExpiringMemo();
  private readonly burstFiredAt = new Map<string, number>();

  constructor(private readonly options: NotificationServiceOptions) {
    this.db = options.db;
    this.delivery = new DeliveryLoop({ claim: (now) => this.claim(now), record: (s) => this.record(s) }, options.config);
  }

  private get config(): NotificationConfig {
    return this.options.config();
  }

  // -------------------------------------------------------------------------------------------------------------
  // Queueing (synchronous, never the network)

  /** The approval store's listener: a new request is queued inside the transaction that created it. */
  onApproval(e: ApprovalEvent): void {
    if (e.type !== 'requested') return;
    try {
      this.queue(approvalNotice(e.row, 'approval_requested', this.options), channelsFor(this.config, 'approval_requested'));
    } catch (error) {
      // A notification must never cost a decision: log and go on.
      console.error('Queueing an approval notification failed; the request stands.', error);
    }
  }

  /** One row per channel; a row already queued for the same event, subject and channel (by any process) is kept. */
  private queue(notice: Notice, channels: readonly Channel[], keySuffix = '', now = clock()): number {
    if (channels.length === 0) return 0;
    const insert = this.db.$client.prepare(
      `INSERT OR IGNORE INTO notification_deliveries
         (dedupe_key, channel, channel_kind, event, subject, body, status, attempts, max_attempts, next_attempt_at, origin, created_at, updated_at)
       VALUES (@dedupeKey, @channel, @channelKind, @event, @subject, @body, 'pending', 0, @maxAttempts, @nextAttemptAt, @origin, @createdAt, @updatedAt)`,
    );
    let queued = 0;
    for (const row of deliveriesOf(notice, channels, this.options.origin ?? 'app', now, keySuffix)) queued += insert.run(row).changes;
    return queued;
  }

  /**
   * The sweeper's tick (every second): requests nearing their expiry (each once) and denial bursts (each once per
   * window). Cheap when nothing is configured: no query at all.
   */
  tick(now = clock()): void {
    const config = this.config;
    if (config.channels.length === 0) return;
    this.queueExpiring(config, now);
    for (const rule of config.bursts) this.checkBurst(rule, now);
  }

  private queueExpiring(config: NotificationConfig, now: number): void {
    const channels = channelsFor(config, 'approval_expiring');
    if (channels.length === 0) return;
    const before = config.expiringBeforeSeconds;
    // Pending requests that enter the window now; a request that was shorter-lived than the window from the start was
    // announced with its time left when it was requested.
    const rows = this.db.$client
      .prepare(
        `SELECT * FROM approvals WHERE status = 'pending' AND expires_at > ? AND expires_at <= ? AND requested_at < expires_at - ? ORDER BY expires_at LIMIT ${EXPIRING_BATCH}`,
      )
      .all(now, now + before, before) as Record<string, unknown>[];
    for (const row of this.expiring.fresh(rows.map(approvalOf))) {
      this.queue(approvalNotice(row, 'approval_expiring', this.options), channels, '', now);
      this.expiring.told(row.id);
    }
  }

  private checkBurst(rule: NotificationConfig['bursts'][number], now: number): void {
    const from = burstWindowStart(rule, this.burstFiredAt.get(rule.id) ?? 0, now);
    if (from === undefined) return;
    const agentClause = rule.agent ? ' AND agent_name = @agent' : '';
    const params = { from, agent: rule.agent, limit: rule.denials };
    const reached = this.db.$client
      .prepare(`SELECT count(*) AS n FROM (SELECT 1 FROM permission_denials WHERE timestamp > @from${agentClause} LIMIT @limit)`)
      .get(params) as { n: number };
    if (reached.n < rule.denials) return;
    const channels = channelsFor(this.config, 'denial_burst', rule.channels);
    const client = this.db.$client;
    // Both processes tick: one immediate transaction decides which of them notifies this window.
    const fired = client
      .transaction(() => {
        const prev = client
          .prepare(`SELECT max(created_at) AS at FROM notification_deliveries WHERE event = 'denial_burst' AND subject = ?`)
          .get(rule.id) as { at: number | null };
        if (prev.at !== null && prev.at + rule.withinSeconds > now) return prev.at;
        const { n } = client.prepare(`SELECT count(*) AS n FROM permission_denials WHERE timestamp > @from${agentClause}`).get(params) as { n: number };
        this.queue(burstNotice(rule, n, from, now, this.options), channels, burstKeySuffix(now), now);
        return now;
      })
      .immediate();
    this.burstFiredAt.set(rule.id, fired);
  }

  // -------------------------------------------------------------------------------------------------------------
  // Delivery (asynchronous)

  /** Deliver due rows every `intervalMs`, in the background. */
  startDelivery(options: DeliveryOptions = {}): void {
    this.delivery.start(options);
  }

  /** Stop the timer; a delivery in flight finishes (its row stays claimed until its lease runs out if the process exits). */
  stopDelivery(): void {
    void this.delivery.stop();
  }

  get deliveryRunning(): boolean {
    return this.delivery.running;
  }

  /** Claim the due rows and send them, all at once; resolves with how many were sent or failed. One run at a time. */
  deliverDue(now = clock()): Promise<number> {
    return this.delivery.deliverDue(now);
  }

  /**
   * Claim up to CLAIM_BATCH due rows for this process: one UPDATE ... RETURNING, so no other deliverer gets the same
   * row. A row whose lease ran out (its process died mid-send) is due again; one that has no attempt left fails.
   */
  claim(now = clock(), limit = CLAIM_BATCH): NotificationDeliveryRow[] {
    const client = this.db.$client;
    client
      .prepare(
        `UPDATE notification_deliveries SET status = 'failed', claim_token = NULL, lease_until = NULL, updated_at = @now,
           last_error = coalesce(last_error || ' ', '') || @lost
         WHERE status = 'sending' AND lease_until < @now AND attempts >= max_attempts`,
      )
      .run({ now, lost: LEASE_LOST });
    const { token, leaseUntil } = claimTerms(this.config, now);
    const rows = client
      .prepare(
        `UPDATE notification_deliveries SET status = 'sending', claim_token = @token, lease_until = @lease, attempts = attempts + 1, updated_at = @now
         WHERE id IN (
           SELECT id FROM notification_deliveries
           WHERE (status = 'pending' AND next_attempt_at <= @now) OR (status = 'sending' AND lease_until < @now)
           ORDER BY id LIMIT @limit)
         RETURNING *`,
      )
      .all({ token, lease: leaseUntil, now, limit }) as Record<string, unknown>[];
    return rows.map(deliveryOf);
  }

  /** How a send ended, written only while the row is still ours (its claim token). 1 when it was. */
  private record(s: Settled): number {
    const client = this.db.$client;
    // The application closed while the request was in flight: the row's lease runs out and it is claimed again.
    if (!client.open) return 0;
    return client
      .prepare(
        `UPDATE notification_deliveries SET status = @status, next_attempt_at = @nextAttemptAt, updated_at = @updatedAt, last_status = @lastStatus,
           last_error = @lastError, delivered_at = @deliveredAt, claim_token = NULL, lease_until = NULL WHERE id = @id AND claim_token = @claimToken`,
      )
      .run(s).changes;
  }

  // -------------------------------------------------------------------------------------------------------------
  // Reading (admins)

  list(filter: DeliveryFilter = {}): NotificationDeliveryRow[] {
    return this.db
      .select()
      .from(notificationDeliveries)
      .where(deliveryWhere(notificationDeliveries, filter))
      .orderBy(desc(notificationDeliveries.id))
      .limit(filter.limit ?? LIST_LIMIT)
      .all();
  }

  /** How many rows are in each state (the page's summary). */
  counts(): Record<DeliveryStatus, number> {
    return countsOf(this.db.$client.prepare(`SELECT status, count(*) AS n FROM notification_deliveries GROUP BY status`).all() as { status: DeliveryStatus; n: number }[]);
  }
}
