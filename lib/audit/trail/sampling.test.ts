/** The sampling rule alone: a function of the decision id and the rate, the same on every call. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decisionIdBucket, isSampled } from './sampling';

const ids = Array.from({ length: 4_000 }, (_, i) => `0196a3c0-0000-7000-8000-${i.toString(16).padStart(12, '0')}`);

describe('isSampled', () => {
  it('reads the first 32 bits of the SHA-256 of the id, big-endian', () => {
    const id = ids[7]!;
    expect(decisionIdBucket(id)).toBe(parseInt(createHash('sha256').update(id).digest('hex').slice(0, 8), 16));
  });

  it('keeps every decision at 1 and none at 0, and none without an id at any rate below 1', () => {
    expect(ids.every((id) => isSampled(id, 1))).toBe(true);
    expect(ids.some((id) => isSampled(id, 0))).toBe(false);
    expect(isSampled(null, 0.99)).toBe(false);
    expect(isSampled(undefined, 0.5)).toBe(false);
    expect(isSampled('', 0.5)).toBe(false);
    expect(isSampled(ids[0], Number.NaN)).toBe(false);
  });

  it('keeps a decision kept at a rate at every higher rate, and about the rate of them', () => {
    const at = (rate: number) => new Set(ids.filter((id) => isSampled(id, rate)));
    const tenth = at(0.1);
    const half = at(0.5);
    expect(tenth.size).toBeGreaterThan(320);
    expect(tenth.size).toBeLessThan(480);
    expect(half.size).toBeGreaterThan(1_850);
    expect(half.size).toBeLessThan(2_150);
    for (const id of tenth) expect(half.has(id)).toBe(true);
    // the same answer on every call
    expect(at(0.1)).toEqual(tenth);
  });
});
