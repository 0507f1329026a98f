/**
 * Following a change feed (db/dialect.ts `changes`): what a process keeps in memory is told of each change any process
 * makes, and read again every few seconds in case a notice was missed. One follower per kept state; stop() ends both,
 * also when it comes while start() is still subscribing.
 */
export class FeedFollower {
  private stopFeed: (() => Promise<void>) | undefined;
  private resync: NodeJS.Timeout | undefined;
  private stopped = false;

  /** Subscribe (`subscribe` returns the unsubscribe), and run `reload` every `resyncMs` (0: never; default 5 s). */
  async start(subscribe: () => Promise<() => Promise<void>>, reload: () => Promise<unknown>, resyncMs = 5_000): Promise<void> {
    const stop = await subscribe();
    if (this.stopped) await stop();
    else this.stopFeed = stop;
    if (resyncMs > 0 && !this.stopped) {
      this.resync = setInterval(() => void reload().catch(() => undefined), resyncMs);
      this.resync.unref();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.resync) clearInterval(this.resync);
    const stop = this.stopFeed;
    this.stopFeed = undefined;
    await stop?.();
  }
}
