/**
 * The decision path's tallied metrics against prom-client's own: the same observations give the same exposition text,
 * alone and merged across processes.
 */
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { mergedText, TalliedCounter, TalliedHistogram, type MetricsJson } from './metrics';

const BOUNDS = [0.00005, 0.001, 0.01, 1];
const observations: [number, string][] = [
  [0.00001, 'tool'],
  [0.00005, 'tool'],
  [0.0004, 'http'],
  [0.002, 'tool'],
  [0.5, 'http'],
  [7, 'tool'],
];

function both() {
  const ours = new Registry();
  const theirs = new Registry();
  const h = new TalliedHistogram(ours, 'x_seconds', 'help', 'kind', BOUNDS);
  const ph = new Histogram({ name: 'x_seconds', help: 'help', labelNames: ['kind'], buckets: BOUNDS, registers: [theirs] });
  const c = new TalliedCounter(ours, 'x_total', 'help', ['kind', 'decision']);
  const pc = new Counter({ name: 'x_total', help: 'help', labelNames: ['kind', 'decision'], registers: [theirs] });
  for (const [v, kind] of observations) {
    h.observe(v, kind);
    ph.observe({ kind }, v);
    c.inc(kind, v > 0.001 ? 'DENY' : 'ALLOW');
    pc.inc({ kind, decision: v > 0.001 ? 'DENY' : 'ALLOW' });
  }
  return { ours, theirs };
}

describe('tallied metrics', () => {
  it('write the same text as prom-client for the same observations', async () => {
    const { ours, theirs } = both();
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it('merge across processes as prom-client does', async () => {
    const a = both();
    const b = both();
    const json = async (r: Registry) => (await r.getMetricsAsJSON()) as MetricsJson;
    expect(await mergedText([await json(a.ours), await json(b.ours)])).toBe(await mergedText([await json(a.theirs), await json(b.theirs)]));
    expect(await mergedText([await json(a.ours), await json(b.ours)])).toContain('x_seconds_count{kind="tool"} 8');
  });

  it('report nothing before the first observation, and count an unlabelled histogram', async () => {
    const r = new Registry();
    const h = new TalliedHistogram(r, 'y_seconds', 'help', undefined, BOUNDS);
    expect(await r.metrics()).toBe('# HELP y_seconds help\n# TYPE y_seconds histogram\n');
    h.observe(0.002);
    expect(await r.metrics()).toContain('y_seconds_bucket{le="0.01"} 1\ny_seconds_bucket{le="1"} 1\ny_seconds_bucket{le="+Inf"} 1\ny_seconds_sum 0.002\ny_seconds_count 1');
  });
});
