import { describe, expect, it } from 'vitest';
import { MAX_REMEMBERED_READS, RecentReads } from './reads';

const alex = { kind: 'user', id: 'alex' };

describe('the memo of recent audit reads', () => {
  it('remembers at most its bound of (reader, filter) pairs under a spray of new filters', () => {
    const reads = new RecentReads(64);
    for (let i = 0; i < 10_000; i++) {
      expect(reads.isRepeat(alex, 'permission_denials', { q: `typed ${i}` }, 1_000)).toBe(false);
      expect(reads.size).toBeLessThanOrEqual(64);
    }
  });

  it('calls a read within five minutes a repeat, also after other readers filled the memo, and records it again after', () => {
    const reads = new RecentReads(64);
    expect(reads.isRepeat(alex, 'permission_denials', { agent: 'trainer' }, 1_000)).toBe(false);
    for (let i = 0; i < 30; i++) {
      reads.isRepeat({ kind: 'user', id: `reader-${i}` }, 'permission_denials', { agent: 'trainer' }, 1_000);
      expect(reads.isRepeat(alex, 'permission_denials', { agent: 'trainer' }, 1_000 + i)).toBe(true);
    }
    expect(reads.isRepeat(alex, 'security_events', { agent: 'trainer' }, 1_100)).toBe(false);
    expect(reads.isRepeat(alex, 'permission_denials', { agent: 'trainer' }, 1_000 + 301)).toBe(false);
  });

  it('forgets the least recently used first: a forgotten read is only recorded again', () => {
    const reads = new RecentReads(4);
    reads.isRepeat(alex, 'permission_denials', { n: 0 }, 1_000);
    for (let i = 1; i < 10; i++) reads.isRepeat(alex, 'permission_denials', { n: i }, 1_000);
    expect(reads.isRepeat(alex, 'permission_denials', { n: 0 }, 1_001)).toBe(false);
    expect(reads.isRepeat(alex, 'permission_denials', { n: 0 }, 1_002)).toBe(true);
  });

  it('is bounded by MAX_REMEMBERED_READS by default', () => {
    const reads = new RecentReads();
    for (let i = 0; i < MAX_REMEMBERED_READS + 1_000; i++) reads.isRepeat(alex, 'permission_denials', { i }, 1_000);
    expect(reads.size).toBeLessThanOrEqual(MAX_REMEMBERED_READS);
  });
});
