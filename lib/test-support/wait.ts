/** How long until `check` holds, in ms, polling every 10 ms; throws after `limitMs`. */
export async function within(limitMs: number, check: () => boolean | Promise<boolean>): Promise<number> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > limitMs) throw new Error(`not within ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return performance.now() - started;
}

/** Until the clock the application reads (Date.now, in seconds) has passed `epochSeconds`: an expiry, say. */
export async function untilPast(epochSeconds: number, limitMs = 5_000): Promise<void> {
  await within(limitMs, () => Date.now() / 1000 > epochSeconds);
}
