/**
 * The decision path's tallied metrics against prom-client's own: the same observations give the same exposition text,
 * alone and merged across processes.
 */
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { MAX_LABEL_SETS, mergedText, observeDecision, OVERFLOW_LABEL, processMetrics, TalliedCounter, TalliedHistogram, type MetricsJson } from './metrics';
import type { CheckResult } from '@/lib/permissions';

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

  it('keep at most MAX_LABEL_SETS series, counting what comes past them under one overflow series', async () => {
    const r = new Registry();
    const c = new TalliedCounter(r, 'y_total', 'help', ['kind', 'family']);
    const h = new TalliedHistogram(r, 'y_seconds', 'help', 'kind', BOUNDS);
    const n = MAX_LABEL_SETS * 4;
    for (let i = 0; i < n; i++) {
      c.inc('tool', `family-${i}`);
      h.observe(0.001, `kind-${i}`);
      expect(c.labelSets).toBeLessThanOrEqual(MAX_LABEL_SETS);
      expect(h.labelSets).toBeLessThanOrEqual(MAX_LABEL_SETS);
    }
    // the sets seen before the bound still count on their own
    c.inc('tool', 'family-0');
    const json = (await r.getMetricsAsJSON()) as MetricsJson;
    const counter = json.find((m) => m.name === 'y_total')!.values;
    expect(counter.find((v) => v.labels.family === 'family-0')?.value).toBe(2);
    const overflow = counter.find((v) => v.labels.family === OVERFLOW_LABEL);
    expect(overflow?.labels.kind).toBe(OVERFLOW_LABEL);
    expect(counter.reduce((sum, v) => sum + v.value, 0)).toBe(n + 1);
    const counts = json.find((m) => m.name === 'y_seconds')!.values.filter((v) => (v as { metricName?: string }).metricName === 'y_seconds_count');
    expect(counts.reduce((sum, v) => sum + v.value, 0)).toBe(n);
  });

  it('never carry an agent or tool name of a decision as a label', async () => {
    const name = `sprayed-agent-${Math.random()}`;
    const result = { decision: 'DENY', ruleSource: 'agent_allowlist', reason: `Unknown agent "${name}"`, trace: [], rule: { decision: 'DENY', priority: 900, attribution: { source: 'agent_allowlist' }, reason: '' } } as CheckResult;
    observeDecision('tool', result, 0.001);
    expect(await processMetrics().registry.metrics()).not.toContain(name);
  });
});
