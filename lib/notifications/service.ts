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
import { createHmac, randomBytes } from 'node:crypto';
import { and, desc, eq, lt, type SQL } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { notificationDeliveries, type ApprovalRow, type NotificationDeliveryRow } from '@/db/schema';
import type { ApprovalEvent } from '@/lib/approvals/store';
import { maskArguments } from '@/lib/audit/redact';
import type { Channel, NotificationConfig, NotificationEvent } from './config';
import { approvalLink, bodyFor, burstLink, publicBase, type ApprovalNotice, type Notice } from './messages';

export const SIGNATURE_HEADER = 'X-Swarm-Signature';
export const TIMESTAMP_HEADER = 'X-Swarm-Timestamp';
export const DELIVERY_HEADER = 'X-Swarm-Delivery';
export const EVENT_HEADER = 'X-Swarm-Event';

/** The signed text: `<timestamp>.<body>`, so a captured body cannot be replayed later with a new timestamp. */
export function signature(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export type DeliveryStatus = NotificationDeliveryRow['status'];

export interface DeliveryOptions {
  /** how often the deliverer looks for due rows (default 500 ms) */
  intervalMs?: number;
  /** the first retry waits this long, each next one four times longer, at most 10 minutes (default 2 s) */
  retryBaseSeconds?: number;
}

export interface NotificationServiceOptions {
  db: Db;
  config: () => NotificationConfig;
  env: Readonly<Record<string, string | undefined>>;
  /** the keys a compliance profile masks, as the audit trail masks them */
  maskKeys?: ReadonlySet<string>;
  /** which process records rows (`listener`, `next`, `app`) */
  origin?: string;
}

const clock = () => Date.now() / 1000;
const MAX_BACKOFF_SECONDS = 600;
const CLAIM_BATCH = 20;

export class NotificationService {
  private readonly db: Db;
  private deliveryTimer: NodeJS.Timeout | undefined;
  private delivering: Promise<number> | undefined;
  private retryBaseSeconds = 2;
  private readonly expiringSeen = new Set<string>();
  private readonly burstFiredAt = new Map<string, number>();
  private stopped = false;

  constructor(private readonly options: NotificationServiceOptions) {
    this.db = options.db;
  }

  private get config(): NotificationConfig {
    return this.options.config();
  }

  private channelsFor(event: NotificationEvent, only?: readonly string[]): Channel[] {
    const all = this.config.channels;
    return only ? all.filter((c) => only.includes(c.id)) : all.filter((c) => c.events.includes(event));
  }

  // -------------------------------------------------------------------------------------------------------------
  // Queueing (synchronous, never the network)

  /** The approval store's listener: a new request is queued inside the transaction that created it. */
  onApproval(e: ApprovalEvent): void {
    if (e.type !== 'requested') return;
    try {
      this.queue(this.approvalNotice(e.row, 'approval_requested'), this.channelsFor('approval_requested'));
    } catch (error) {
      // A notification must never cost a decision: log and go on.
      console.error('Queueing an approval notification failed; the request stands.', error);
    }
  }

  private approvalNotice(row: ApprovalRow, event: ApprovalNotice['event']): ApprovalNotice {
    const masked = maskArguments(JSON.parse(row.argumentsRedacted) as unknown, this.options.maskKeys);
    return {
      kind: 'approval',
      event,
      id: row.id,
      gate: row.gate,
      agent: row.agentName,
      tool: row.toolName,
      arguments: masked.value,
      maskedPaths: masked.maskedPaths,
      risk: row.risk,
      gateDescription: row.gateDescription,
      requestedBy: row.requestedBy,
      requestedAt: row.requestedAt,
      expiresAt: row.expiresAt,
      approvalsRequired: row.approvalsRequired,
      link: approvalLink(publicBase(this.options.env), row.id),
    };
  }

  /** One row per channel; a row already queued for the same event, subject and channel (by any process) is kept. */
  private queue(notice: Notice, channels: readonly Channel[], keySuffix = '', now = clock()): number {
    if (channels.length === 0) return 0;
    const insert = this.db.$client.prepare(
      `INSERT OR IGNORE INTO notification_deliveries
         (dedupe_key, channel, channel_kind, event, subject, body, status, attempts, max_attempts, next_attempt_at, origin, created_at, updated_at)
       VALUES (@key, @channel, @kind, @event, @subject, @body, 'pending', 0, @max, @due, @origin, @now, @now)`,
    );
    let queued = 0;
    for (const c of channels) {
      const key = `${notice.event}:${notice.id}:${c.id}${keySuffix}`;
      queued += insert.run({
        key,
        channel: c.id,
        kind: c.kind,
        event: notice.event,
        subject: notice.id,
        body: bodyFor(c.kind, notice, key, now),
        max: c.maxAttempts,
        now,
        // due at once (an event noticed "in the future" by a test clock is still due now)
        due: Math.min(now, clock()),
        origin: this.options.origin ?? 'app',
      }).changes;
    }
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
    const channels = this.channelsFor('approval_expiring');
    if (channels.length === 0) return;
    const before = config.expiringBeforeSeconds;
    // Pending requests that enter the window now; a request that was shorter-lived than the window from the start was
    // announced with its time left when it was requested.
    const rows = this.db.$client
      .prepare(
        `SELECT * FROM approvals WHERE status = 'pending' AND expires_at > ? AND expires_at <= ? AND requested_at < expires_at - ? ORDER BY expires_at LIMIT 200`,
      )
      .all(now, now + before, before) as Record<string, unknown>[];
    const due = new Set<string>();
    for (const raw of rows) {
      const id = raw.id as string;
      due.add(id);
      if (this.expiringSeen.has(id)) continue;
      this.queue(this.approvalNotice(rowOf(raw), 'approval_expiring'), channels, '', now);
      this.expiringSeen.add(id);
    }
    for (const id of this.expiringSeen) if (!due.has(id)) this.expiringSeen.delete(id);
  }

  private checkBurst(rule: NotificationConfig['bursts'][number], now: number): void {
    const last = this.burstFiredAt.get(rule.id) ?? 0;
    if (last + rule.withinSeconds > now) return;
    // A new burst counts the denials since the window began, and never those an earlier notification already covered.
    const from = Math.max(now - rule.withinSeconds, last);
    const agentClause = rule.agent ? ' AND agent_name = @agent' : '';
    const params = { from, agent: rule.agent, limit: rule.denials };
    const reached = this.db.$client
      .prepare(`SELECT count(*) AS n FROM (SELECT 1 FROM permission_denials WHERE timestamp > @from${agentClause} LIMIT @limit)`)
      .get(params) as { n: number };
    if (reached.n < rule.denials) return;
    const channels = this.channelsFor('denial_burst', rule.channels);
    const client = this.db.$client;
    // Both processes tick: one immediate transaction decides which of them notifies this window.
    const fired = client
      .transaction(() => {
        const prev = client
          .prepare(`SELECT max(created_at) AS at FROM notification_deliveries WHERE event = 'denial_burst' AND subject = ?`)
          .get(rule.id) as { at: number | null };
        if (prev.at !== null && prev.at + rule.withinSeconds > now) return prev.at;
        const { n } = client.prepare(`SELECT count(*) AS n FROM permission_denials WHERE timestamp > @from${agentClause}`).get(params) as { n: number };
        const base = publicBase(this.options.env);
        this.queue(
          { kind: 'burst', event: 'denial_burst', id: rule.id, denials: n, threshold: rule.denials, withinSeconds: rule.withinSeconds, agent: rule.agent ?? null, from, to: now, link: burstLink(base, from, now, rule.agent ?? null) },
          channels,
          `:${Math.floor(now)}`,
          now,
        );
        return now;
      })
      .immediate();
    this.burstFiredAt.set(rule.id, fired);
  }

  // -------------------------------------------------------------------------------------------------------------
  // Delivery (asynchronous)

  /** Deliver due rows every `intervalMs`, in the background. */
  startDelivery(options: DeliveryOptions = {}): void {
    if (this.deliveryTimer) return;
    this.stopped = false;
    if (options.retryBaseSeconds !== undefined) this.retryBaseSeconds = options.retryBaseSeconds;
    this.deliveryTimer = setInterval(() => void this.deliverDue(), options.intervalMs ?? 500);
    this.deliveryTimer.unref();
  }

  /** Stop the timer; a delivery in flight finishes (its row stays claimed until its lease runs out if the process exits). */
  stopDelivery(): void {
    this.stopped = true;
    if (this.deliveryTimer) clearInterval(this.deliveryTimer);
    this.deliveryTimer = undefined;
  }

  get deliveryRunning(): boolean {
    return this.deliveryTimer !== undefined;
  }

  /** Claim the due rows and send them, all at once; resolves with how many were sent or failed. One run at a time. */
  deliverDue(now = clock()): Promise<number> {
    if (this.delivering) return this.delivering;
    const run = (async () => {
      try {
        const rows = this.claim(now);
        await Promise.all(rows.map((r) => this.send(r)));
        return rows.length;
      } catch (error) {
        console.error('Delivering notifications failed; retrying.', error);
        return 0;
      } finally {
        this.delivering = undefined;
      }
    })();
    this.delivering = run;
    return run;
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
           last_error = coalesce(last_error || ' ', '') || '(the process sending it stopped; no attempt left)'
         WHERE status = 'sending' AND lease_until < @now AND attempts >= max_attempts`,
      )
      .run({ now });
    const token = randomBytes(9).toString('base64url');
    const timeouts = new Map(this.config.channels.map((c) => [c.id, c.timeoutSeconds]));
    const longest = Math.max(5, ...timeouts.values());
    const rows = client
      .prepare(
        `UPDATE notification_deliveries SET status = 'sending', claim_token = @token, lease_until = @lease, attempts = attempts + 1, updated_at = @now
         WHERE id IN (
           SELECT id FROM notification_deliveries
           WHERE (status = 'pending' AND next_attempt_at <= @now) OR (status = 'sending' AND lease_until < @now)
           ORDER BY id LIMIT @limit)
         RETURNING *`,
      )
      .all({ token, lease: now + longest + 30, now, limit }) as Record<string, unknown>[];
    return rows.map(deliveryOf);
  }

  private async send(row: NotificationDeliveryRow): Promise<void> {
    const channel = this.config.channels.find((c) => c.id === row.channel);
    if (!channel) {
      this.finish(row, { ok: false, status: null, error: `channel "${row.channel}" is no longer configured`, retry: false });
      return;
    }
    const timestamp = String(Math.floor(clock()));
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'swarm-permissions-notifications' };
    if (channel.kind === 'webhook' && channel.secret) {
      headers[SIGNATURE_HEADER] = signature(channel.secret, timestamp, row.body);
      headers[TIMESTAMP_HEADER] = timestamp;
      headers[DELIVERY_HEADER] = row.dedupeKey;
      headers[EVENT_HEADER] = row.event;
    }
    try {
      const res = await fetch(channel.url, {
        method: 'POST',
        headers,
        body: row.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(channel.timeoutSeconds * 1000),
      });
      // Read (and cap) the answer so the connection is released; its first words help the admin.
      const answer = (await res.text().catch(() => '')).slice(0, 200);
      if (res.status >= 200 && res.status < 300) {
        this.finish(row, { ok: true, status: res.status, error: null, retry: false });
      } else {
        // A 4xx says the message itself is refused: retrying it would not help (except 408 and 429).
        const retry = res.status >= 500 || res.status === 408 || res.status === 429;
        this.finish(row, { ok: false, status: res.status, error: `HTTP ${res.status}${answer ? `: ${answer}` : ''}`, retry });
      }
    } catch (error) {
      const e = error as Error & { cause?: { code?: string; message?: string } };
      const reason =
        e.name === 'TimeoutError' ? `no answer within ${channel.timeoutSeconds} s` : (e.cause?.code ?? e.cause?.message ?? e.message ?? String(error));
      this.finish(row, { ok: false, status: null, error: reason, retry: true });
    }
  }

  private finish(row: NotificationDeliveryRow, outcome: { ok: boolean; status: number | null; error: string | null; retry: boolean }): void {
    const now = clock();
    const client = this.db.$client;
    // The application closed while the request was in flight: the row's lease runs out and it is claimed again.
    if (!client.open) return;
    if (outcome.ok) {
      client
        .prepare(
          `UPDATE notification_deliveries SET status = 'delivered', delivered_at = @now, updated_at = @now, last_status = @status, last_error = NULL,
             claim_token = NULL, lease_until = NULL WHERE id = @id AND claim_token = @token`,
        )
        .run({ now, status: outcome.status, id: row.id, token: row.claimToken });
      return;
    }
    const again = outcome.retry && row.attempts < row.maxAttempts && !this.stopped;
    const wait = Math.min(MAX_BACKOFF_SECONDS, this.retryBaseSeconds * 4 ** (row.attempts - 1));
    const changed = client
      .prepare(
        `UPDATE notification_deliveries SET status = @status, next_attempt_at = @next, updated_at = @now, last_status = @code, last_error = @error,
           claim_token = NULL, lease_until = NULL WHERE id = @id AND claim_token = @token`,
      )
      .run({ status: again ? 'pending' : 'failed', next: again ? now + wait : row.nextAttemptAt, now, code: outcome.status, error: outcome.error, id: row.id, token: row.claimToken }).changes;
    if (changed === 1 && !again) console.error(`Notification ${row.dedupeKey} to channel ${row.channel} failed after ${row.attempts} attempt(s): ${outcome.error}`);
  }

  // -------------------------------------------------------------------------------------------------------------
  // Reading (admins)

  list(filter: { status?: DeliveryStatus; channel?: string; event?: NotificationEvent; before?: number; limit?: number } = {}): NotificationDeliveryRow[] {
    const c: SQL[] = [];
    if (filter.status) c.push(eq(notificationDeliveries.status, filter.status));
    if (filter.channel) c.push(eq(notificationDeliveries.channel, filter.channel));
    if (filter.event) c.push(eq(notificationDeliveries.event, filter.event));
    if (filter.before !== undefined) c.push(lt(notificationDeliveries.id, filter.before));
    return this.db
      .select()
      .from(notificationDeliveries)
      .where(c.length ? and(...c) : undefined)
      .orderBy(desc(notificationDeliveries.id))
      .limit(filter.limit ?? 100)
      .all();
  }

  /** How many rows are in each state (the page's summary). */
  counts(): Record<DeliveryStatus, number> {
    const out: Record<DeliveryStatus, number> = { pending: 0, sending: 0, delivered: 0, failed: 0 };
    const rows = this.db.$client.prepare(`SELECT status, count(*) AS n FROM notification_deliveries GROUP BY status`).all() as { status: DeliveryStatus; n: number }[];
    for (const r of rows) out[r.status] = r.n;
    return out;
  }
}

function rowOf(raw: Record<string, unknown>): ApprovalRow {
  return {
    id: raw.id as string,
    gate: raw.gate as string,
    agentName: raw.agent_name as string,
    toolName: raw.tool_name as string,
    argumentsCanonical: raw.arguments_canonical as string,
    argumentsRedacted: raw.arguments_redacted as string,
    argumentsHash: raw.arguments_hash as string,
    toolCallId: (raw.tool_call_id as string | null) ?? null,
    requestedBy: raw.requested_by as string,
    requestedAt: raw.requested_at as number,
    expiresAt: raw.expires_at as number,
    ruleSource: raw.rule_source as string,
    reason: (raw.reason as string | null) ?? null,
    status: raw.status as ApprovalRow['status'],
    decidedBy: (raw.decided_by as string | null) ?? null,
    decidedAt: (raw.decided_at as number | null) ?? null,
    decisionReason: (raw.decision_reason as string | null) ?? null,
    consumedAt: (raw.consumed_at as number | null) ?? null,
    approvalsRequired: raw.approvals_required as number,
    approverRoles: raw.approver_roles as string,
    risk: raw.risk as ApprovalRow['risk'],
    gateDescription: (raw.gate_description as string | null) ?? null,
    reportedAt: (raw.reported_at as number | null) ?? null,
    decisionId: (raw.decision_id as string | null) ?? null,
  };
}

function deliveryOf(raw: Record<string, unknown>): NotificationDeliveryRow {
  return {
    id: raw.id as number,
    dedupeKey: raw.dedupe_key as string,
    channel: raw.channel as string,
    channelKind: raw.channel_kind as NotificationDeliveryRow['channelKind'],
    event: raw.event as NotificationDeliveryRow['event'],
    subject: raw.subject as string,
    body: raw.body as string,
    status: raw.status as DeliveryStatus,
    attempts: raw.attempts as number,
    maxAttempts: raw.max_attempts as number,
    nextAttemptAt: raw.next_attempt_at as number,
    claimToken: (raw.claim_token as string | null) ?? null,
    leaseUntil: (raw.lease_until as number | null) ?? null,
    lastStatus: (raw.last_status as number | null) ?? null,
    lastError: (raw.last_error as string | null) ?? null,
    origin: raw.origin as string,
    createdAt: raw.created_at as number,
    updatedAt: raw.updated_at as number,
    deliveredAt: (raw.delivered_at as number | null) ?? null,
  };
}

/** A delivery as the API and the page show it: never the body's secrets (there are none), never a URL. */
export function deliveryToJson(row: NotificationDeliveryRow) {
  return {
    id: row.id,
    key: row.dedupeKey,
    channel: row.channel,
    channel_kind: row.channelKind,
    event: row.event,
    subject: row.subject,
    status: row.status,
    attempts: row.attempts,
    max_attempts: row.maxAttempts,
    next_attempt_at: row.status === 'pending' ? row.nextAttemptAt : null,
    last_status: row.lastStatus,
    last_error: row.lastError,
    origin: row.origin,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    delivered_at: row.deliveredAt,
  };
}
export type DeliveryJson = ReturnType<typeof deliveryToJson>;
