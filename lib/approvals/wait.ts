/**
 * Waiting for a person's decision without polling hard: `GET /api/v1/approvals/{id}?wait=SECONDS` answers as soon as
 * the request is no longer pending (approved, rejected, expired, used), or when the wait is up, whichever is first.
 *
 * Every transition of an approval publishes on the change feed (APPROVALS_CHANNEL, in the transition's transaction:
 * App.recordApproval), and this process's own transitions wake the waiters at once (the store's afterCommit). The
 * feed is PostgreSQL's LISTEN across servers; on SQLite a commit by any other process (the decision listener's
 * workers, a CLI) is seen within a quarter of a second. A waiter registers before it reads, so no transition between
 * the read and the wait is missed.
 *
 * Bounded: at most MAX_WAIT_SECONDS a request, and at most MAX_WAITERS at once in a process (beyond that a request is
 * answered at once, as it stands); a waiter is released when its client goes away (the request's abort signal) and
 * when the application closes.
 */
import type { SqlDatabase } from '@/db/dialect';

export const APPROVALS_CHANNEL = 'approvals';
/** The longest one request waits (a client waits longer by asking again). */
export const MAX_WAIT_SECONDS = 60;
/** The most requests one process holds at once. */
export const MAX_WAITERS = 1_000;

/** A waiter, registered: `until` resolves at the next change, after `ms`, or when it is cancelled or aborted. */
interface Armed {
  until(ms: number): Promise<void>;
  cancel(): void;
}

export class ApprovalWaits {
  private readonly waiting = new Set<() => void>();
  private feed: Promise<() => Promise<void>> | undefined;
  private closed = false;

  constructor(private readonly database: SqlDatabase) {}

  /** How many requests wait now. */
  get size(): number {
    return this.waiting.size;
  }

  /** Wake every waiter: a transition committed (in this process, or another's, told through the change feed). */
  wake(): void {
    for (const w of [...this.waiting]) w();
  }

  /**
   * The value `read` gives once `done` says it is final, or the last value read when `seconds` are up (or `limitMs`,
   * the request's own expiry, comes first), the signal aborts, the application closes or too many wait already.
   */
  async until<T>(read: () => Promise<T>, done: (value: T) => boolean, seconds: number, signal?: AbortSignal, limitMs?: (value: T) => number): Promise<T> {
    const deadline = Date.now() + Math.min(seconds, MAX_WAIT_SECONDS) * 1000;
    if (seconds > 0 && !this.closed && this.waiting.size < MAX_WAITERS) {
      this.feed ??= this.database.changes(APPROVALS_CHANNEL, () => this.wake(), { pollMs: 250 });
      await this.feed;
    }
    for (;;) {
      const armed = seconds > 0 ? this.arm(signal) : undefined;
      const value = await read();
      const left = Math.min(deadline, limitMs?.(value) ?? Infinity) - Date.now();
      if (!armed || done(value) || left <= 0 || signal?.aborted || this.closed) {
        armed?.cancel();
        return value;
      }
      await armed.until(left);
    }
  }

  /** Register a waiter (undefined: none can wait now). */
  private arm(signal?: AbortSignal): Armed | undefined {
    if (this.closed || this.waiting.size >= MAX_WAITERS) return undefined;
    let woken = false;
    let resolve: (() => void) | undefined;
    let timer: NodeJS.Timeout | undefined;
    const done = () => {
      woken = true;
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      this.waiting.delete(done);
      resolve?.();
    };
    this.waiting.add(done);
    signal?.addEventListener('abort', done, { once: true });
    return {
      until: (ms) =>
        new Promise<void>((r) => {
          if (woken) return r();
          resolve = r;
          timer = setTimeout(done, ms);
        }),
      cancel: done,
    };
  }

  /** Release every waiter and stop listening (the application closes). */
  async close(): Promise<void> {
    this.closed = true;
    this.wake();
    const feed = this.feed;
    this.feed = undefined;
    if (feed) await (await feed)();
  }
}
