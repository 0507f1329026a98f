/**
 * The last use of each token (issue 27: "unused for 90 days" needs to know when a token was last used), written
 * without a write per request: the token cache notes a token at most once a minute (token-cache.ts), and the notes
 * are written together, in one transaction, a few seconds later, on a timer of their own, never on the decision path.
 * A write sets only api_tokens.last_used_at: on SQLite it does not move auth_generation (migration 0014's trigger
 * leaves that column out) and on PostgreSQL it publishes nothing, so no token cache forgets anything because of it.
 */
import { sql } from 'drizzle-orm';
import type { SqlDatabase } from '@/db/dialect';
import { messageOf } from '@/lib/errors';
import { log } from '@/lib/ops/log';

/** A token used again within this long after it was noted is not noted again (per process). */
export const LAST_USE_EVERY_MS = 60_000;
/** How long after the first note the notes are written (together). */
export const LAST_USE_FLUSH_MS = 5_000;

export class LastUse {
  /** token id -> the time of its use, seconds */
  private pending = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly db: SqlDatabase,
    private readonly flushMs = LAST_USE_FLUSH_MS,
  ) {}

  /** Token `id` authenticated now. Called by the token cache at most once a minute per token. */
  note(id: number): void {
    this.pending.set(id, Date.now() / 1000);
    if (!this.timer && !this.closed) {
      this.timer = setTimeout(() => void this.flush(), this.flushMs);
      // a process that has nothing else to do does not stay up for this
      this.timer.unref();
    }
  }

  /** Write the notes now (the timer does this; a process that stops and the tests call it too). */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return;
    const uses = [...this.pending];
    this.pending = new Map();
    try {
      await this.db.transaction(function* (tx) {
        // (a later use written by another process already is kept: the time only moves forward)
        for (const [id, at] of uses) yield* tx.run(sql`UPDATE api_tokens SET last_used_at = ${at} WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < ${at})`);
      });
    } catch (error) {
      // A last use is not worth failing anything for: it is noted again at the token's next use.
      log('warn', 'writing the last use of tokens failed', { error: messageOf(error), tokens: uses.length });
    }
  }

  /** Write what is noted and stop noting (the database is about to close). */
  async close(): Promise<void> {
    this.closed = true;
    // (on SQLite the writes run before the first await: a caller that closes the connection next may not wait)
    await this.flush();
  }
}
