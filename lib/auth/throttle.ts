/**
 * Login throttling: after a few failures for the same user name (or from the same address), every further attempt
 * waits longer, up to a cap. In memory, one per application (so the form and the API count together); a success
 * clears it.
 */
const FREE_ATTEMPTS = 3;
const BASE_DELAY_MS = 250;
const MAX_DELAY_MS = 8_000;
const FORGET_AFTER_MS = 15 * 60 * 1000;

interface Entry {
  failures: number;
  last: number;
}

export class LoginThrottle {
  private readonly entries = new Map<string, Entry>();

  /** How long to wait before answering this attempt. */
  delayFor(keys: readonly string[]): number {
    const now = Date.now();
    let failures = 0;
    for (const k of keys) {
      const e = this.entries.get(k);
      if (e && now - e.last < FORGET_AFTER_MS) failures = Math.max(failures, e.failures);
    }
    if (failures < FREE_ATTEMPTS) return 0;
    return Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** (failures - FREE_ATTEMPTS));
  }

  failure(keys: readonly string[]): void {
    const now = Date.now();
    for (const k of keys) {
      const e = this.entries.get(k);
      this.entries.set(k, { failures: e && now - e.last < FORGET_AFTER_MS ? e.failures + 1 : 1, last: now });
    }
    if (this.entries.size > 10_000) {
      for (const [k, e] of this.entries) if (now - e.last >= FORGET_AFTER_MS) this.entries.delete(k);
    }
  }

  success(keys: readonly string[]): void {
    for (const k of keys) this.entries.delete(k);
  }
}
