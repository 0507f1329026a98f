import { describe, expect, it } from 'vitest';
import { BoundedCache, BoundedPairCache } from './bounded-cache';

describe('BoundedCache', () => {
  it('never holds more than its bound, whatever number of unique keys goes in', () => {
    const c = new BoundedCache<string, number>(100);
    for (let i = 0; i < 10_000; i++) {
      c.set(`k${i}`, i);
      expect(c.size).toBeLessThanOrEqual(100);
    }
    expect(c.size).toBeGreaterThanOrEqual(50);
  });

  it('keeps every entry used within the last max/2 insertions, and gives back what was set', () => {
    const c = new BoundedCache<string, number>(10);
    c.set('hot', 1);
    for (let i = 0; i < 1_000; i++) {
      c.set(`cold${i}`, i);
      // read between insertions: the hot key is never more than a few insertions old
      expect(c.get('hot')).toBe(1);
    }
    expect(c.get('cold999')).toBe(999);
    expect(c.get('cold0')).toBeUndefined();
  });

  it('forgets the least recently used first', () => {
    const c = new BoundedCache<string, string>(4);
    c.set('a', 'A').set('b', 'B');
    // c starts a new generation: a and b are the old one
    c.set('c', 'C');
    // a is used again, b is not: when d starts the next generation, b is the one forgotten
    c.get('a');
    c.set('d', 'D');
    expect(c.has('b')).toBe(false);
    expect(c.has('c')).toBe(true);
    expect(c.get('a')).toBe('A');
    expect(c.size).toBeLessThanOrEqual(4);
  });

  it('getOrSet builds a missing value once and rebuilds it after it was forgotten', () => {
    const c = new BoundedCache<number, { n: number }>(4);
    let built = 0;
    const make = (n: number) => (built++, { n });
    const first = c.getOrSet(1, make);
    expect(c.getOrSet(1, make)).toBe(first);
    expect(built).toBe(1);
    for (let i = 2; i < 20; i++) c.getOrSet(i, make);
    expect(c.has(1)).toBe(false);
    expect(c.getOrSet(1, make)).toEqual({ n: 1 });
    expect(built).toBe(20);
  });

  it('keeps null values (a remembered "none") apart from a miss', () => {
    const c = new BoundedCache<string, string | null>(4);
    c.set('none', null);
    expect(c.get('none')).toBeNull();
    expect(c.get('absent')).toBeUndefined();
  });

  it('set replaces a value in either generation without holding the key twice', () => {
    const c = new BoundedCache<string, number>(4);
    c.set('a', 1).set('b', 2).set('c', 3);
    c.set('a', 10);
    expect(c.get('a')).toBe(10);
    expect([...c.entries()].filter(([k]) => k === 'a')).toHaveLength(1);
    c.delete('a');
    expect(c.has('a')).toBe(false);
    c.clear();
    expect(c.size).toBe(0);
  });

  it('refuses a bound below 2', () => {
    expect(() => new BoundedCache(1)).toThrow(RangeError);
    expect(() => new BoundedCache(2.5)).toThrow(RangeError);
  });
});

describe('BoundedPairCache', () => {
  it('never holds more than its bound, whatever number of unique pairs goes in', () => {
    const c = new BoundedPairCache<number>(100);
    for (let i = 0; i < 10_000; i++) {
      c.set(`agent-${i}`, i % 3 === 0 ? 'tool' : `tool-${i}`, i);
      expect(c.size).toBeLessThanOrEqual(100);
    }
    expect(c.size).toBeGreaterThanOrEqual(50);
  });

  it('keeps a pair used within the last max/2 insertions and gives back what was set for exactly that pair', () => {
    const c = new BoundedPairCache<string>(10);
    c.set('a', 'b', 'ab').set('a', 'c', 'ac').set('b', 'a', 'ba');
    for (let i = 0; i < 1_000; i++) {
      c.set('cold', `t${i}`, `x${i}`);
      expect(c.get('a', 'b')).toBe('ab');
    }
    expect(c.get('a', 'c')).toBeUndefined();
    expect(c.get('b', 'a')).toBeUndefined();
    expect(c.get('cold', 't999')).toBe('x999');
    c.set('a', 'b', 'new');
    expect(c.get('a', 'b')).toBe('new');
    c.clear();
    expect(c.size).toBe(0);
    expect(c.get('a', 'b')).toBeUndefined();
  });

  it('counts a pair moved back from the old generation once', () => {
    const c = new BoundedPairCache<number>(4);
    c.set('a', '1', 1).set('a', '2', 2).set('b', '1', 3);
    // a/1 and a/2 are old now; reading a/1 moves it, setting a/2 moves it too
    expect(c.get('a', '1')).toBe(1);
    c.set('a', '2', 20);
    expect(c.size).toBe(3);
    expect(c.get('a', '2')).toBe(20);
  });

  it('keeps null values apart from a miss, and refuses a bound below 2', () => {
    const c = new BoundedPairCache<string | null>(4);
    c.set('x', 'y', null);
    expect(c.get('x', 'y')).toBeNull();
    expect(c.get('x', 'z')).toBeUndefined();
    expect(() => new BoundedPairCache(1)).toThrow(RangeError);
  });
});
