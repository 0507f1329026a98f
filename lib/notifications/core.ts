/**
 * What the notification service (service.ts) is made of, apart from its statements (store.ts): the notices and the
 * rows they queue, the channels an event goes to, the signed HTTP send, the retry schedule, and the delivery loop.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { ApprovalRow, NotificationDeliveryRow } from '@/db/schema';
import { maskArguments } from '@/lib/audit/redact';
import type { z } from 'zod';
import type { BurstRule, Channel, NotificationConfig, NotificationEvent } from './config';
import type { deliveriesQuerySchema } from './query';
import { approvalLink, bodyFor, burstLink, publicBase, type ApprovalNotice, type BurstNotice, type Notice } from './messages';

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

/** Which deliveries a list shows, as query.ts reads them from a URL (`before`: only rows with a smaller id). */
export type DeliveryFilter = Partial<z.output<typeof deliveriesQuerySchema>>;

export const clock = () => Date.now() / 1000;
export const MAX_BACKOFF_SECONDS = 600;
export const CLAIM_BATCH = 20;
export const LIST_LIMIT = 100;
/** The most pending requests one tick looks at for approval_expiring. */
export const EXPIRING_BATCH = 200;
/** What a row that ran out of its lease with no attempt left is told (its process died mid-send). */
export const LEASE_LOST = '(the process sending it stopped; no attempt left)';

/** The channels an event goes to: those that take it, or exactly `only` (a burst rule naming its channels). */
export function channelsFor(config: NotificationConfig, event: NotificationEvent, only?: readonly string[]): Channel[] {
  const all = config.channels;
  return only ? all.filter((c) => only.includes(c.id)) : all.filter((c) => c.events.includes(event));
}

export interface NoticeContext {
  env: Readonly<Record<string, string | undefined>>;
  maskKeys?: ReadonlySet<string>;
}

/** An approval as a notice, its arguments masked as the audit trail masks them. */
export function approvalNotice(row: ApprovalRow, event: ApprovalNotice['event'], ctx: NoticeContext): ApprovalNotice {
  const masked = maskArguments(JSON.parse(row.argumentsRedacted) as unknown, ctx.maskKeys);
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
    link: approvalLink(publicBase(ctx.env), row.id),
  };
}

export function burstNotice(rule: BurstRule, denials: number, from: number, to: number, ctx: NoticeContext): BurstNotice {
  const agent = rule.agent ?? null;
  return { kind: 'burst', event: 'denial_burst', id: rule.id, denials, threshold: rule.denials, withinSeconds: rule.withinSeconds, agent, from, to, link: burstLink(publicBase(ctx.env), from, to, agent) };
}

/** The start of the window a burst rule counts now, or undefined while the window it last notified is not over. */
export function burstWindowStart(rule: BurstRule, lastFiredAt: number, now: number): number | undefined {
  if (lastFiredAt + rule.withinSeconds > now) return undefined;
  // A new burst counts the denials since the window began, and never those an earlier notification already covered.
  return Math.max(now - rule.withinSeconds, lastFiredAt);
}

/** A burst's rows are one per window: the key carries the second it was noticed. */
export const burstKeySuffix = (now: number) => `:${Math.floor(now)}`;

export type QueuedDelivery = Pick<
  NotificationDeliveryRow,
  'dedupeKey' | 'channel' | 'channelKind' | 'event' | 'subject' | 'body' | 'maxAttempts' | 'nextAttemptAt' | 'origin' | 'createdAt' | 'updatedAt'
>;

/**
 * The rows of one notice, one per channel, keyed `<event>:<subject>:<channel><suffix>`: the unique key keeps a notice
 * seen by several processes (or twice by one) to one row per channel.
 */
export function deliveriesOf(notice: Notice, channels: readonly Channel[], origin: string, now: number, keySuffix = ''): QueuedDelivery[] {
  // Due at once (an event noticed "in the future" by a test clock is still due now).
  const due = Math.min(now, clock());
  return channels.map((c) => {
    const key = `${notice.event}:${notice.id}:${c.id}${keySuffix}`;
    return {
      dedupeKey: key,
      channel: c.id,
      channelKind: c.kind,
      event: notice.event,
      subject: notice.id,
      body: bodyFor(c.kind, notice, key, now),
      maxAttempts: c.maxAttempts,
      nextAttemptAt: due,
      origin,
      createdAt: now,
      updatedAt: now,
    };
  });
}

/**
 * The approvals told "expiring" by this process, so that a tick does not queue them again every second (the unique key
 * would keep them out anyway: this saves the statements). Forgets the ids that left the window.
 */
export class ExpiringMemo {
  private readonly seen = new Set<string>();

  /** The ids of these rows not yet told; `due`: every id in the window now. */
  fresh<T extends { id: string }>(rows: readonly T[]): T[] {
    const due = new Set(rows.map((r) => r.id));
    for (const id of this.seen) if (!due.has(id)) this.seen.delete(id);
    return rows.filter((r) => !this.seen.has(r.id));
  }

  told(id: string): void {
    this.seen.add(id);
  }
}

/** A claim's token and how long its rows are ours: the longest channel timeout and a margin. */
export function claimTerms(config: NotificationConfig, now: number): { token: string; leaseUntil: number } {
  const longest = Math.max(5, ...config.channels.map((c) => c.timeoutSeconds));
  return { token: randomBytes(9).toString('base64url'), leaseUntil: now + longest + 30 };
}

export interface SendOutcome {
  ok: boolean;
  status: number | null;
  error: string | null;
  retry: boolean;
}

/** Post one delivery to its channel (signed when the channel has a secret). Never throws: the outcome says what happened. */
export async function post(row: NotificationDeliveryRow, channel: Channel | undefined): Promise<SendOutcome> {
  if (!channel) return { ok: false, status: null, error: `channel "${row.channel}" is no longer configured`, retry: false };
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
    if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status, error: null, retry: false };
    // A 4xx says the message itself is refused: retrying it would not help (except 408 and 429).
    const retry = res.status >= 500 || res.status === 408 || res.status === 429;
    return { ok: false, status: res.status, error: `HTTP ${res.status}${answer ? `: ${answer}` : ''}`, retry };
  } catch (error) {
    const e = error as Error & { cause?: { code?: string; message?: string } };
    const reason = e.name === 'TimeoutError' ? `no answer within ${channel.timeoutSeconds} s` : (e.cause?.code ?? e.cause?.message ?? e.message ?? String(error));
    return { ok: false, status: null, error: reason, retry: true };
  }
}

/** What a sent row becomes: the columns the store writes (only while the row is still claimed by `claimToken`). */
export type Settled = Pick<NotificationDeliveryRow, 'id' | 'claimToken' | 'nextAttemptAt' | 'lastStatus' | 'lastError' | 'deliveredAt' | 'updatedAt'> & {
  status: 'delivered' | 'pending' | 'failed';
};

/** The retry schedule: the first retry after `base` seconds, each next one four times longer, at most 10 minutes. */
export function backoffSeconds(base: number, attempts: number): number {
  return Math.min(MAX_BACKOFF_SECONDS, base * 4 ** (attempts - 1));
}

export function settle(row: NotificationDeliveryRow, outcome: SendOutcome, options: { retryBaseSeconds: number; stopping: boolean; now: number }): Settled {
  const { now } = options;
  const common = { id: row.id, claimToken: row.claimToken, lastStatus: outcome.status, updatedAt: now };
  if (outcome.ok) return { ...common, status: 'delivered', nextAttemptAt: row.nextAttemptAt, lastError: null, deliveredAt: now };
  const again = outcome.retry && row.attempts < row.maxAttempts && !options.stopping;
  return {
    ...common,
    status: again ? 'pending' : 'failed',
    nextAttemptAt: again ? now + backoffSeconds(options.retryBaseSeconds, row.attempts) : row.nextAttemptAt,
    lastError: outcome.error,
    deliveredAt: null,
  };
}

/** What a delivery loop needs of its database: claim due rows, record how a send ended (1 when the row was still ours). */
export interface DeliveryStore {
  claim(now: number): Promise<NotificationDeliveryRow[]>;
  record(settled: Settled): Promise<number>;
}

/** The deliverer: a timer that claims due rows and sends them, one run at a time, and records each outcome. */
export class DeliveryLoop {
  private timer: NodeJS.Timeout | undefined;
  private delivering: Promise<number> | undefined;
  private retryBaseSeconds = 2;
  private stopping = false;

  constructor(
    private readonly store: DeliveryStore,
    private readonly config: () => NotificationConfig,
  ) {}

  start(options: DeliveryOptions = {}): void {
    if (this.timer) return;
    this.stopping = false;
    if (options.retryBaseSeconds !== undefined) this.retryBaseSeconds = options.retryBaseSeconds;
    this.timer = setInterval(() => void this.deliverDue(), options.intervalMs ?? 500);
    this.timer.unref();
  }

  /** Stop the timer; resolves when the run in flight (if any) has recorded its outcomes. */
  stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    return (this.delivering ?? Promise.resolve(0)).then(() => undefined);
  }

  get running(): boolean {
    return this.timer !== undefined;
  }

  deliverDue(now = clock()): Promise<number> {
    if (this.delivering) return this.delivering;
    const run = (async () => {
      try {
        const rows = await this.store.claim(now);
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

  private async send(row: NotificationDeliveryRow): Promise<void> {
    const outcome = await post(row, this.config().channels.find((c) => c.id === row.channel));
    const settled = settle(row, outcome, { retryBaseSeconds: this.retryBaseSeconds, stopping: this.stopping, now: clock() });
    let changed: number;
    try {
      changed = await this.store.record(settled);
    } catch (error) {
      // The application closed its database while this send was in flight: the row stays claimed until its lease
      // runs out, and is claimed again then (by this process at its next start, or by another).
      if (this.stopping) return;
      throw error;
    }
    if (changed === 1 && settled.status === 'failed') console.error(`Notification ${row.dedupeKey} to channel ${row.channel} failed after ${row.attempts} attempt(s): ${outcome.error}`);
  }
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

/** How many rows are in each state, every state present. */
export function countsOf(rows: readonly { status: DeliveryStatus; n: number }[]): Record<DeliveryStatus, number> {
  const out: Record<DeliveryStatus, number> = { pending: 0, sending: 0, delivered: 0, failed: 0 };
  for (const r of rows) out[r.status] = Number(r.n);
  return out;
}
