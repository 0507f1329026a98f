/**
 * Where notifications are kept: notification_deliveries, one row per message to one channel. One implementation for
 * SQLite and PostgreSQL, over the dialect port (db/dialect.ts).
 *
 * - Queueing: every row has a unique dedupe key and is inserted with ON CONFLICT DO NOTHING, so processes that notice
 *   the same event (two servers ticking, a request asked for twice) leave one row per channel. A new approval request
 *   is queued inside the transaction that created it (`queueIn`, behind a savepoint).
 * - A denial burst is decided in a transaction serialised per rule (an advisory lock on PostgreSQL, the writer lock on
 *   SQLite): processes that tick at once decide one after the other, and all but the first find the window told.
 * - Claiming: one UPDATE … RETURNING picks due rows with the port's `skipLocked` (FOR UPDATE SKIP LOCKED on
 *   PostgreSQL; SQLite's writer lock already runs the statement alone), so each due row goes to exactly one
 *   deliverer. A row whose lease ran out (its deliverer died mid-send) is due again; one with no attempt left fails.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { SqlDatabase, TxRunner, TxSteps } from '@/db/dialect';
import { notificationDeliveries, type ApprovalRow, type NotificationDeliveryRow } from '@/db/schema';
import { columnsAs } from '@/db/columns';
import { APPROVAL_ROW } from '@/lib/approvals/store';
import type { BurstRule } from './config';
import { countsOf, LEASE_LOST, LIST_LIMIT, type DeliveryFilter, type DeliveryStatus, type QueuedDelivery, type Settled } from './core';

export interface NotificationStore {
  /** Queue rows outside any transaction; a row whose key is already queued (by any process) is kept. How many were new. */
  queue(rows: readonly QueuedDelivery[]): Promise<number>;
  /**
   * Pending requests whose expiry falls within `beforeSeconds` from `now`, soonest first; not those that lived shorter
   * than the window from the start (they were announced with their time left when requested).
   */
  expiring(now: number, beforeSeconds: number, limit: number): Promise<ApprovalRow[]>;
  /** Whether the rule's threshold of denials (of its agent, if it names one) was recorded after `from`. */
  burstReached(rule: BurstRule, from: number): Promise<boolean>;
  /**
   * Tell a burst once across processes: when the rule's last burst row is less than its window old, that row's time;
   * otherwise queue the rows `rowsFor(denials since from)` builds, and return `now`.
   */
  tellBurst(rule: BurstRule, from: number, now: number, rowsFor: (denials: number) => QueuedDelivery[]): Promise<number>;
  /** Claim up to `limit` due rows under `token` until `leaseUntil`, by id; fail those whose lease ran out with no attempt left. */
  claim(now: number, claim: { token: string; leaseUntil: number }, limit: number): Promise<NotificationDeliveryRow[]>;
  /** How a send ended, written only while the row is still claimed by its token. 1 when it was. */
  record(settled: Settled): Promise<number>;
  /** The rows, newest first (the admins' view). */
  list(filter?: DeliveryFilter): Promise<NotificationDeliveryRow[]>;
  /** How many rows are in each state. */
  counts(): Promise<Record<DeliveryStatus, number>>;
}

/** The statement that queues rows; a row whose key is already queued is kept (it changes nothing). */
function insertDeliveries(rows: readonly QueuedDelivery[]): SQL {
  const values = rows.map(
    (r) =>
      sql`(${r.dedupeKey}, ${r.channel}, ${r.channelKind}, ${r.event}, ${r.subject}, ${r.body}, 'pending', 0, ${r.maxAttempts}, ${r.nextAttemptAt}, ${r.origin}, ${r.createdAt}, ${r.updatedAt})`,
  );
  return sql`
    INSERT INTO notification_deliveries
      (dedupe_key, channel, channel_kind, event, subject, body, status, attempts, max_attempts, next_attempt_at, origin, created_at, updated_at)
    VALUES ${sql.join(values, sql`, `)}
    ON CONFLICT (dedupe_key) DO NOTHING`;
}

/**
 * Queue rows inside a transaction that is about something else (an approval request), behind a savepoint: a refused
 * insert rolls back only itself (a failed statement would otherwise abort a PostgreSQL transaction) and is logged, so
 * a notification never costs the request. The rows commit with the request, or neither does.
 */
export function* queueIn(tx: TxRunner, rows: readonly QueuedDelivery[]): TxSteps<number> {
  if (rows.length === 0) return 0;
  yield* tx.run(sql`SAVEPOINT swarm_notify`);
  try {
    const queued = yield* tx.run(insertDeliveries(rows));
    yield* tx.run(sql`RELEASE SAVEPOINT swarm_notify`);
    return queued;
  } catch (error) {
    yield* tx.run(sql`ROLLBACK TO SAVEPOINT swarm_notify`);
    yield* tx.run(sql`RELEASE SAVEPOINT swarm_notify`);
    console.error('Queueing an approval notification failed; the request stands.', error);
    return 0;
  }
}

/** The whole row of notification_deliveries under its property names. */
const DELIVERY_ROW = sql.raw(columnsAs(notificationDeliveries));

/** The denials a burst rule counts: after `from`, of its agent when it names one. */
const burstDenials = (rule: BurstRule, from: number): SQL =>
  rule.agent ? sql`timestamp > ${from} AND agent_name = ${rule.agent}` : sql`timestamp > ${from}`;

export class SqlNotificationStore implements NotificationStore {
  constructor(private readonly db: SqlDatabase) {}

  queue(rows: readonly QueuedDelivery[]): Promise<number> {
    return rows.length === 0 ? Promise.resolve(0) : this.db.run(insertDeliveries(rows));
  }

  async expiring(now: number, beforeSeconds: number, limit: number): Promise<ApprovalRow[]> {
    return this.db.all<ApprovalRow>(sql`
      SELECT ${APPROVAL_ROW} FROM approvals
      WHERE status = 'pending' AND expires_at > ${now} AND expires_at <= ${now + beforeSeconds} AND requested_at < expires_at - ${beforeSeconds}
      ORDER BY expires_at LIMIT ${limit}`);
  }

  async burstReached(rule: BurstRule, from: number): Promise<boolean> {
    // Counts no further than the threshold: a window of a million denials costs no more than one of fifty.
    const row = await this.db.one<{ n: number }>(
      sql`SELECT count(*) AS n FROM (SELECT 1 FROM permission_denials WHERE ${burstDenials(rule, from)} LIMIT ${rule.denials}) AS w`,
    );
    return Number(row!.n) >= rule.denials;
  }

  tellBurst(rule: BurstRule, from: number, now: number, rowsFor: (denials: number) => QueuedDelivery[]): Promise<number> {
    return this.db.transaction(
      function* (tx: TxRunner): TxSteps<number> {
        const prev = yield* tx.one<{ at: number | null }>(
          sql`SELECT max(created_at) AS at FROM notification_deliveries WHERE event = 'denial_burst' AND subject = ${rule.id}`,
        );
        const at = prev?.at ?? null;
        if (at !== null && at + rule.withinSeconds > now) return at;
        const counted = yield* tx.one<{ n: number }>(sql`SELECT count(*) AS n FROM permission_denials WHERE ${burstDenials(rule, from)}`);
        const rows = rowsFor(Number(counted!.n));
        if (rows.length > 0) yield* tx.run(insertDeliveries(rows));
        return now;
      },
      // Every process ticks: the rule's key makes them decide one after the other, each seeing what the one before wrote.
      { serialise: `notification-burst:${rule.id}` },
    );
  }

  async claim(now: number, claim: { token: string; leaseUntil: number }, limit: number): Promise<NotificationDeliveryRow[]> {
    await this.db.run(sql`
      UPDATE notification_deliveries SET status = 'failed', claim_token = NULL, lease_until = NULL, updated_at = ${now},
        last_error = coalesce(last_error || ' ', '') || ${LEASE_LOST}
      WHERE status = 'sending' AND lease_until < ${now} AND attempts >= max_attempts`);
    // A row another deliverer is claiming at this moment is skipped, and one it claimed a moment ago no longer matches.
    const rows = await this.db.all<NotificationDeliveryRow>(sql`
      UPDATE notification_deliveries SET status = 'sending', claim_token = ${claim.token}, lease_until = ${claim.leaseUntil},
        attempts = attempts + 1, updated_at = ${now}
      WHERE id IN (
        SELECT id FROM notification_deliveries
        WHERE (status = 'pending' AND next_attempt_at <= ${now}) OR (status = 'sending' AND lease_until < ${now})
        ORDER BY id LIMIT ${limit}${this.db.skipLocked})
      RETURNING ${DELIVERY_ROW}`);
    return rows.sort((a, b) => a.id - b.id);
  }

  record(s: Settled): Promise<number> {
    return this.db.run(sql`
      UPDATE notification_deliveries SET status = ${s.status}, next_attempt_at = ${s.nextAttemptAt}, updated_at = ${s.updatedAt},
        last_status = ${s.lastStatus}, last_error = ${s.lastError}, delivered_at = ${s.deliveredAt}, claim_token = NULL, lease_until = NULL
      WHERE id = ${s.id} AND claim_token = ${s.claimToken}`);
  }

  async list(filter: DeliveryFilter = {}): Promise<NotificationDeliveryRow[]> {
    const where: SQL[] = [sql`1 = 1`];
    if (filter.status) where.push(sql`status = ${filter.status}`);
    if (filter.channel) where.push(sql`channel = ${filter.channel}`);
    if (filter.event) where.push(sql`event = ${filter.event}`);
    if (filter.before !== undefined) where.push(sql`id < ${filter.before}`);
    return this.db.all<NotificationDeliveryRow>(
      sql`SELECT ${DELIVERY_ROW} FROM notification_deliveries WHERE ${sql.join(where, sql` AND `)} ORDER BY id DESC LIMIT ${filter.limit ?? LIST_LIMIT}`,
    );
  }

  async counts(): Promise<Record<DeliveryStatus, number>> {
    return countsOf(await this.db.all<{ status: DeliveryStatus; n: number }>(sql`SELECT status, count(*) AS n FROM notification_deliveries GROUP BY status`));
  }
}
