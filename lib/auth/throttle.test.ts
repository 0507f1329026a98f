import { describe, expect, it } from 'vitest';
import { LoginThrottle, MAX_THROTTLED_KEYS } from './throttle';

describe('login throttling', () => {
  it('lets the first attempts through at once, then slows each further failure down, up to a cap', () => {
    const t = new LoginThrottle();
    const keys = ['user:olivia'];
    const delays: number[] = [];
    for (let i = 0; i < 10; i++) {
      delays.push(t.delayFor(keys));
      t.failure(keys);
    }
    expect(delays.slice(0, 3)).toEqual([0, 0, 0]);
    expect(delays[3]).toBeGreaterThan(0);
    for (let i = 4; i < delays.length; i++) expect(delays[i]).toBeGreaterThanOrEqual(delays[i - 1]!);
    expect(Math.max(...delays)).toBeLessThanOrEqual(8000);
  });

  it('forgets the failures of a user after a successful sign-in', () => {
    const t = new LoginThrottle();
    for (let i = 0; i < 5; i++) t.failure(['user:a']);
    t.success(['user:a']);
    expect(t.delayFor(['user:a'])).toBe(0);
  });

  it('keeps at most MAX_THROTTLED_KEYS names and addresses under a spray of new ones', () => {
    const t = new LoginThrottle();
    for (let i = 0; i < MAX_THROTTLED_KEYS * 2; i++) {
      t.failure([`user:sprayed-${i}`, `ip:10.0.${i >> 8}.${i & 255}`]);
      if (i % 1_000 === 0) expect(t.trackedKeys).toBeLessThanOrEqual(MAX_THROTTLED_KEYS);
    }
    expect(t.trackedKeys).toBeLessThanOrEqual(MAX_THROTTLED_KEYS);
  });

  it('still slows down a user tried within the last MAX_THROTTLED_KEYS / 2 new names, whatever came between', () => {
    const t = new LoginThrottle();
    const target = ['user:olivia'];
    for (let i = 0; i < 5; i++) t.failure(target);
    const delay = t.delayFor(target);
    expect(delay).toBeGreaterThan(0);
    let n = 0;
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < MAX_THROTTLED_KEYS / 2 - 1; i++) t.failure([`user:sprayed-${n++}`]);
      expect(t.delayFor(target)).toBe(delay);
    }
  });
});
