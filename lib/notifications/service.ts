/**
 * Notifications: people told when they are needed (config/notifications.yaml). One service for both databases; its
 * statements are the store's (store.ts).
 *
 * Two halves that never wait for each other:
 * - Queueing, local and never the network: the process that sees an event writes one row per channel into
 *   notification_deliveries. A new approval request is queued inside the transaction that created it (the approval
 *   store's listener: `deliveriesFor` builds the rows, the store's `queueIn` inserts them in that transaction); a
 *   request nearing its expiry and a burst of denials are noticed by the approval sweeper's one-second tick.
 * - Delivery, in the background: a deliverer claims due rows (a claim token and a lease), sends them, and records the
 *   outcome; a failure is retried with backoff up to the channel's max_attempts, then marked failed. Two deliverers on
 *   one database never send the same row at once; one that dies mid-send leaves a lease that runs out, and the row is
 *   claimed again (so a receiver may, rarely, see a delivery id twice: X-Swarm-Delivery dedupes).
 */
import type { NotificationDeliveryRow } from '@/db/schema';
import type { ApprovalEvent } from '@/lib/approvals/store';
import type { BurstRule, NotificationConfig } from './config';
import {
  approvalNotice,
  burstKeySuffix,
  burstNotice,
  burstWindowStart,
  channelsFor,
  CLAIM_BATCH,
  claimTerms,
  clock,
  deliveriesOf,
  DeliveryLoop,
  EXPIRING_BATCH,
  ExpiringMemo,
  type DeliveryFilter,
  type DeliveryOptions,
  type DeliveryStatus,
  type QueuedDelivery,
} from './core';
import type { NotificationStore } from './store';

// The shared parts, where the API, the pages and the tests have always imported them from.
export {
  DELIVERY_HEADER,
  deliveryToJson,
  EVENT_HEADER,
  signature,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
} from './core';

export interface NotificationServiceOptions {
  store: NotificationStore;
  config: () => NotificationConfig;
  env: Readonly<Record<string, string | undefined>>;
  /** the keys a compliance profile masks, as the audit trail masks them */
  maskKeys?: ReadonlySet<string>;
  /** which process records rows (`listener`, `next`, a server's name, or `app`) */
  origin?: string;
}

export class NotificationService {
  private readonly store: NotificationStore;
  private readonly delivery: DeliveryLoop;
  private readonly expiring = new ExpiringMemo();
  private readonly burstFiredAt = new Map<string, number>();

  constructor(private readonly options: NotificationServiceOptions) {
    this.store = options.store;
    this.delivery = new DeliveryLoop({ claim: (now) => this.claim(now), record: (s) => this.store.record(s) }, options.config);
  }

  private get config(): NotificationConfig {
    return this.options.config();
  }

  private get origin(): string {
    return this.options.origin ?? 'app';
  }

  // -------------------------------------------------------------------------------------------------------------
  // Queueing (never the network)

  /**
   * What an approval transition queues, in its own transaction (store.ts `queueIn`): one row per channel for a new
   * request; nothing for any other transition, or when no channel takes requests (then no statement is run at all).
   */
  deliveriesFor(e: ApprovalEvent, now = clock()): QueuedDelivery[] {
    if (e.type !== 'requested') return [];
    const channels = channelsFor(this.config, 'approval_requested');
    if (channels.length === 0) return [];
    try {
      return deliveriesOf(approvalNotice(e.row, 'approval_requested', this.options), channels, this.origin, now);
    } catch (error) {
      // A notification must never cost a decision: log and go on.
      console.error('Queueing an approval notification failed; the request stands.', error);
      return [];
    }
  }

  /**
   * The sweeper's tick (every second): requests nearing their expiry (each once) and denial bursts (each once per
   * window), whichever processes tick. Cheap when nothing is configured: no query at all.
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
    const rows = await this.store.expiring(now, config.expiringBeforeSeconds, EXPIRING_BATCH);
    for (const row of this.expiring.fresh(rows)) {
      await this.store.queue(deliveriesOf(approvalNotice(row, 'approval_expiring', this.options), channels, this.origin, now));
      this.expiring.told(row.id);
    }
  }

  private async checkBurst(rule: BurstRule, now: number): Promise<void> {
    const from = burstWindowStart(rule, this.burstFiredAt.get(rule.id) ?? 0, now);
    if (from === undefined || !(await this.store.burstReached(rule, from))) return;
    const channels = channelsFor(this.config, 'denial_burst', rule.channels);
    const fired = await this.store.tellBurst(rule, from, now, (denials) =>
      deliveriesOf(burstNotice(rule, denials, from, now, this.options), channels, this.origin, now, burstKeySuffix(now)),
    );
    this.burstFiredAt.set(rule.id, fired);
  }

  // -------------------------------------------------------------------------------------------------------------
  // Delivery (in the background)

  /** Deliver due rows every `intervalMs`, in the background. */
  startDelivery(options: DeliveryOptions = {}): void {
    this.delivery.start(options);
  }

  /**
   * Stop the timer. Resolves when the delivery in flight has recorded its outcomes: await it before closing the
   * database. (A process that exits instead leaves its rows claimed until their lease runs out; they are sent then.)
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

  /** Claim up to `limit` due rows for this process: no other deliverer gets the same row (store.ts). */
  claim(now = clock(), limit = CLAIM_BATCH): Promise<NotificationDeliveryRow[]> {
    return this.store.claim(now, claimTerms(this.config, now), limit);
  }

  // -------------------------------------------------------------------------------------------------------------
  // Reading (admins)

  list(filter: DeliveryFilter = {}): Promise<NotificationDeliveryRow[]> {
    return this.store.list(filter);
  }

  /** How many rows are in each state (the page's summary). */
  counts(): Promise<Record<DeliveryStatus, number>> {
    return this.store.counts();
  }
}
