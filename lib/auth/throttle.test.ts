import { describe, expect, it } from 'vitest';
import { LoginThrottle } from './throttle';

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
});
