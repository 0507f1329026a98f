import { describe, expect, it } from 'vitest';
import { afterFailure, ATTEMPT_LEASE_SECONDS, delayFor, FORGET_AFTER_SECONDS, judgeStart, leaseUntil, type AttemptRow } from './attempts';

const policy = { afterFailures: 10, lockSeconds: 30 * 60 };
const fresh = (failures: number, at: number): AttemptRow => ({ failures, lastFailureAt: at, lockedUntil: null, busyUntil: null });

describe('sign-in attempts', () => {
  it('lets the first attempts through at once, then slows each further failure down, up to a cap', () => {
    const delays = Array.from({ length: 12 }, (_, i) => delayFor(i));
    expect(delays.slice(0, 3)).toEqual([0, 0, 0]);
    expect(delays[3]).toBe(250);
    for (let i = 4; i < delays.length; i++) expect(delays[i]).toBeGreaterThanOrEqual(delays[i - 1]!);
    expect(Math.max(...delays)).toBe(8000);
  });

  it('takes the slowest of the user name and the address, and forgets failures after a quiet spell', () => {
    expect(judgeStart(fresh(1, 100), [fresh(5, 100)], 101, undefined)).toEqual({ kind: 'go', failures: 5, delayMs: 1000 });
    expect(judgeStart(fresh(5, 100), [], 100 + FORGET_AFTER_SECONDS, undefined)).toEqual({ kind: 'go', failures: 0, delayMs: 0 });
    // with a lock of 30 minutes, failures count for 30 minutes
    expect(judgeStart(fresh(5, 100), [], 100 + FORGET_AFTER_SECONDS, policy)).toMatchObject({ failures: 5 });
  });

  it('refuses an attempt while another for the same user name is under way, until its lease ends', () => {
    const busy = { ...fresh(4, 100), busyUntil: leaseUntil({ delayMs: 500 }, 100) };
    expect(busy.busyUntil).toBe(100.5 + ATTEMPT_LEASE_SECONDS);
    expect(judgeStart(busy, [], 101, undefined)).toEqual({ kind: 'busy' });
    expect(judgeStart(busy, [], busy.busyUntil!, undefined)).toMatchObject({ kind: 'go' });
  });

  it('locks the user name at the N-th failure in a row for the period, and lets it in again after it', () => {
    let row: AttemptRow | undefined;
    for (let i = 1; i < 10; i++) {
      row = afterFailure(row, 100 + i, policy, true);
      expect(row.lockedUntil).toBeNull();
    }
    row = afterFailure(row, 110, policy, true);
    expect(row.lockedUntil).toBe(110 + 1800);
    expect(judgeStart(row, [], 111, policy)).toEqual({ kind: 'locked', until: 1910 });
    expect(judgeStart(row, [], 1909.9, policy)).toEqual({ kind: 'locked', until: 1910 });
    expect(judgeStart(row, [], 1910, policy)).toEqual({ kind: 'go', failures: 0, delayMs: 0 });
  });

  it('never locks an address, and never locks without a profile that asks', () => {
    let ip: AttemptRow | undefined;
    let user: AttemptRow | undefined;
    for (let i = 0; i < 20; i++) {
      ip = afterFailure(ip, 100 + i, policy, false);
      user = afterFailure(user, 100 + i, undefined, true);
    }
    expect([ip!.lockedUntil, user!.lockedUntil]).toEqual([null, null]);
    expect([ip!.failures, user!.failures]).toEqual([20, 20]);
  });
});
