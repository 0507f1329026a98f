import { describe, expect, it } from 'vitest';
import { isoSeconds, parseTimeWindow, readableQuery, timeWindowApiParams, writeTimeWindow } from './time-window';
import { listWords } from './url-params';

const parse = (qs: string) => {
  const ignored: string[] = [];
  return { window: parseTimeWindow(new URLSearchParams(qs), ignored), ignored };
};
const written = (qs: string) => {
  const p = new URLSearchParams();
  writeTimeWindow(p, parse(qs).window);
  return readableQuery(p);
};

describe("the explorers' time window", () => {
  it('reads a relative window, a range in ISO or seconds, and turns a backwards range round', () => {
    expect(parse('window=7d')).toEqual({ window: { window: '7d' }, ignored: [] });
    expect(parse('from=2025-11-20T10:00:00Z&to=1763640000').window).toEqual({ window: 'all', from: 1763632800, to: 1763640000 });
    expect(parse('from=2000&to=1000').window).toMatchObject({ from: 1000, to: 2000 });
  });

  it('leaves out and names what it does not understand', () => {
    expect(parse('window=fortnight&from=yesterday')).toEqual({ window: { window: 'all' }, ignored: ['window', 'from'] });
  });

  it('writes a range as readable ISO (it wins over a window), a window by name, all time as nothing', () => {
    expect(written('window=24h&from=1700000000')).toBe('from=2023-11-14T22:13:20Z');
    expect(written('window=30d')).toBe('window=30d');
    expect(written('')).toBe('');
    expect(isoSeconds(1700000000.4)).toBe('2023-11-14T22:13:20Z');
  });

  it('gives the API whole seconds: since for a window, from and to rounded outwards for a range', () => {
    expect(timeWindowApiParams({ window: '1h' }).toString()).toBe('since=3600');
    expect(timeWindowApiParams({ window: '1h', from: 10.7, to: 20.2 }).toString()).toBe('from=10&to=21');
    expect(timeWindowApiParams({ window: 'all' }).toString()).toBe('');
  });

  it('lists filters in a sentence', () => {
    expect(listWords([])).toBe('');
    expect(listWords(['agent a'])).toBe('agent a');
    expect(listWords(['agent a', 'tool t', 'role r'])).toBe('agent a, tool t and role r');
  });
});
