import { describe, expect, it } from 'vitest';
import { decisionTime } from './rules';

describe('decisionTime', () => {
  it('is now when the clock has moved past every earlier vote', () => {
    expect(decisionTime([], 100)).toBe(100);
    expect(decisionTime([{ at: 99.5 }], 100)).toBe(100);
  });

  it('comes a millisecond after the latest vote when the clock has not moved (two votes in one millisecond), or went back', () => {
    expect(decisionTime([{ at: 100 }], 100)).toBeCloseTo(100.001, 6);
    expect(decisionTime([{ at: 100 }, { at: 100.001 }], 99)).toBeCloseTo(100.002, 6);
  });
});
