/**
 * Background work on a timer that never overlaps itself: a round that is still running when the next one is due
 * (a slow database, a lock held elsewhere) is not started twice; the next round waits for the next tick. The timer
 * does not keep the process alive.
 */
export function repeatWithoutOverlap(intervalMs: number, round: () => Promise<void>): NodeJS.Timeout {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    void round().finally(() => {
      running = false;
    });
  }, intervalMs);
  timer.unref();
  return timer;
}
