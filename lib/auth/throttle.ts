/**
 * Login throttling: after a few failures for the same user name (or from the same address), every further attempt
 * waits longer, up to a cap. In memory, one per application (so the form and the API count together); a success
 * clears it.
 */
import { BoundedCache } from '@/lib/bounded-cache';

const FREE_ATTEMPTS = 3;
const BASE_DELAY_MS = 250;
const MAX_DELAY_MS = 8_000;
const FORGET_AFTER_MS = 15 * 60 * 1000;
/**
 * The most user names and addresses whose failures are kept (about 3 MB at most). Anyone can send new names, so the
 * least recently tried are forgotten first: a name tried within the last MAX_THROTTLED_KEYS / 2 new names is kept, so
 * wiping one user's count takes 10,000 new names or addresses (5,000 failed sign-ins, each a scrypt verification on
 * the server) between two attempts against that user.
 */
export const MAX_THROTTLED_KEYS = 20_000;

interface Entry {
  failures: number;
  last: number;
}

export class LoginThrottle {
  private readonly entries = new BoundedCache<string, Entry>(MAX_THROTTLED_KEYS);

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
  }

  success(keys: readonly string[]): void {
    for (const k of keys) this.entries.delete(k);
  }

  /** user names and addresses whose failures are kept now (at most MAX_THROTTLED_KEYS) */
  get trackedKeys(): number {
    return this.entries.size;
  }
}
