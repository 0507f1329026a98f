import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { tempApp, type TempApp } from '@/lib/test-support/temp-app';
import type { DenialInput } from '../trail/recorder';
import { catchUpIfBehind, catchUpRollup, rollupPosition } from './rollup';
import { bucketOrigin, chooseBucketSeconds, ruleSourceFamily } from './stats';
import type { DenialMatch } from './store';

let t: TempApp | undefined;
afterEach(() => {
  t?.cleanup();
  t = undefined;
});

const DAY = 86400;
/** A UTC midnight, so that tests can place rows on and around day boundaries. */
const D0 = 20_000 * DAY;

const AGENTS = ['data_cleaner', 'trainer', null] as const;
const TOOLS = ['deploy_serving', 'http'] as const;
const RULES = ['policy:a', 'policy:b', 'policy', 'flag:x', 'agent_allowlist', 'rbac:admin'] as const;
const ROLES = ['viewer', 'operator', null] as const;

type Row = Required<Pick<DenialInput, 'agentName' | 'toolName' | 'ruleSource' | 'userRole' | 'reason'>> & { timestamp: number };

const rowArb = fc.record({
  agentName: fc.constantFrom(...AGENTS),
  toolName: fc.constantFrom(...TOOLS),
  ruleSource: fc.constantFrom(...RULES),
  userRole: fc.constantFrom(...ROLES),
  reason: fc.constantFrom('needs review', 'PROD is closed', 'not listed'),
  // Ten days, with a bias to the exact day boundaries.
  timestamp: fc.oneof(fc.integer({ min: 0, max: 10 * DAY - 1 }), fc.integer({ min: 0, max: 10 }).map((d) => d * DAY)).map((s) => D0 + s),
});

const boundaryArb = fc.oneof(
  fc.integer({ min: -DAY, max: 11 * DAY }),
  fc.integer({ min: 0, max: 10 }).map((d) => d * DAY),
  fc.integer({ min: 0, max: 10 }).map((d) => d * DAY - 1),
);

/** Present about one time in three, so that most filters combine one or two conditions and still match rows. */
const sometimes = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });

const filterArb: fc.Arbitrary<DenialMatch> = fc
  .record({
    from: fc.oneof({ weight: 1, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: boundaryArb }),
    to: fc.oneof({ weight: 1, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: boundaryArb }),
    agent: sometimes(fc.constantFrom('data_cleaner', 'trainer', 'nobody')),
    tool: sometimes(fc.constantFrom(...TOOLS)),
    role: sometimes(fc.constantFrom('viewer', 'operator')),
    ruleSource: sometimes(fc.constantFrom('policy', 'policy:a', 'flag', 'rbac:admin', 'agent_allowlist')),
    q: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom('prod', 'review') }),
  })
  .map((f) => {
    const out: DenialMatch = {};
    for (const [k, v] of Object.entries(f)) if (v !== undefined) Object.assign(out, { [k]: v });
    if (f.from !== undefined) out.from = D0 + f.from;
    if (f.to !== undefined) out.to = D0 + f.to;
    if (out.from !== undefined && out.to !== undefined && out.from > out.to) [out.from, out.to] = [out.to, out.from];
    return out;
  });

function matches(r: Row, f: DenialMatch): boolean {
  if (f.from !== undefined && r.timestamp < f.from) return false;
  if (f.to !== undefined && r.timestamp > f.to) return false;
  if (f.agent !== undefined && r.agentName !== f.agent) return false;
  if (f.tool !== undefined && r.toolName !== f.tool) return false;
  if (f.role !== undefined && r.userRole !== f.role) return false;
  if (f.ruleSource !== undefined && !(f.ruleSource.includes(':') ? r.ruleSource === f.ruleSource : ruleSourceFamily(r.ruleSource) === f.ruleSource)) return false;
  if (f.q !== undefined && !(r.reason ?? "").toLowerCase().includes(f.q.toLowerCase())) return false;
  return true;
}

function countBy<T>(rows: Row[], key: (r: Row) => T): Map<T, number> {
  const m = new Map<T, number>();
  for (const r of rows) m.set(key(r), (m.get(key(r)) ?? 0) + 1);
  return m;
}

const NOW = D0 + 12 * DAY;

describe('the summary and the chart read whole days from the daily counts and the rest from the audit table', () => {
  it('give exactly the counts of the matching rows, whatever was counted ahead and wherever the window falls', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(rowArb, { maxLength: 80 }), fc.integer({ min: 0, max: 100 }), fc.array(filterArb, { minLength: 1, maxLength: 6 }), async (rows, percent, filters) => {
        t = tempApp();
        try {
          // Count part of the rows ahead (all, none or some), as a console opened in the middle would have.
          const counted = Math.round((rows.length * percent) / 100);
          for (const [i, r] of rows.entries()) {
            t!.app.recorder.appendDenial(r);
            if (i + 1 === counted) await catchUpRollup(t!.app.database, 7);
          }
          expect((await rollupPosition(t!.app.database)).highWater).toBe(counted);
          for (const f of filters) {
            const expected = rows.filter((r) => matches(r, f));
            const s = await t!.app.denials.summary(f, { now: NOW, top: 100 });
            expect(s.total, JSON.stringify(f)).toBe(expected.length);
            const agents = countBy(expected, (r) => r.agentName);
            expect(new Map(s.topAgents.map((x) => [x.value, x.count]))).toEqual(agents);
            expect(new Map(s.topRuleSources.map((x) => [x.value, x.count]))).toEqual(countBy(expected, (r) => r.ruleSource));
            expect(new Map(s.topTools.map((x) => [x.value, x.count]))).toEqual(countBy(expected, (r) => r.toolName));
            expect(new Map(s.families.map((x) => [x.value, x.count]))).toEqual(countBy(expected, (r) => ruleSourceFamily(r.ruleSource)));

            const h = await t!.app.denials.histogram(f, { now: NOW });
            const reference = await t!.app.denials.histogram(f, { now: NOW, useRollup: false });
            expect(h).toEqual(reference);
            expect(h.buckets.reduce((n, b) => n + b.total, 0), JSON.stringify(f)).toBe(expected.length);
            for (const r of expected) {
              const bucket = h.buckets.find((b) => r.timestamp >= b.start && r.timestamp < b.end);
              expect(bucket, `row at ${r.timestamp - D0} in ${JSON.stringify(f)}`).toBeDefined();
            }
          }
        } finally {
          t!.cleanup();
          t = undefined;
        }
      }),
      { numRuns: 40 },
    );
  });

  it('ranks the top five by count, then by name, and shows an HTTP denial as having no agent', async () => {
    t = tempApp();
    const rec = (agentName: string | null, n: number) => {
      for (let i = 0; i < n; i++) t!.app.recorder.appendDenial({ toolName: agentName ? 'deploy_serving' : 'http', agentName, ruleSource: 'rbac:admin', reason: 'r', timestamp: D0 + i });
    };
    rec('f', 1);
    rec('e', 2);
    rec('d', 2);
    rec(null, 3);
    rec('b', 4);
    rec('a', 5);
    const s = await t.app.denials.summary({}, { now: NOW });
    expect(s.topAgents).toEqual([
      { value: 'a', count: 5 },
      { value: 'b', count: 4 },
      { value: null, count: 3 },
      { value: 'd', count: 2 },
      { value: 'e', count: 2 },
    ]);
    expect(s.total).toBe(17);
  });
});

describe('the daily counts', () => {
  it('count every denial exactly once, in chunks, however often they catch up', async () => {
    t = tempApp();
    for (let i = 0; i < 23; i++) t.app.recorder.appendDenial({ toolName: 'x', ruleSource: i % 2 ? 'flag:a' : 'policy:b', agentName: i % 3 ? 'a' : null, reason: 'r', timestamp: D0 + i * 10_000 });
    expect(await rollupPosition(t.app.database)).toEqual({ highWater: 0, newest: 23 });
    expect(await catchUpRollup(t.app.database, 5)).toBe(23);
    expect(await catchUpRollup(t.app.database, 5)).toBe(0);
    expect((await rollupPosition(t.app.database)).highWater).toBe(23);
    const counted = t.app.db.$client.prepare('SELECT sum(n) AS n FROM permission_denial_daily_counts').get() as { n: number };
    expect(counted.n).toBe(23);
    const grouped = t.app.db.$client
      .prepare("SELECT count(*) AS n FROM permission_denial_daily_counts WHERE agent_name = '' AND rule_source = 'policy:b'")
      .get() as { n: number };
    expect(grouped.n).toBeGreaterThan(0);
  });

  it('catch up on their own only when far behind, so a summary never waits on a few new rows', async () => {
    t = tempApp();
    t.app.recorder.appendDenial({ toolName: 'x', ruleSource: 'default', reason: 'r' });
    await catchUpIfBehind(t.app.database);
    expect((await rollupPosition(t.app.database)).highWater).toBe(0);
    expect((await t.app.denials.summary({})).total).toBe(1);
  });

  it('are filled for the rows that existed before the migration (backfill)', async () => {
    t = tempApp();
    // The fixture's database was migrated empty: high_water is 0 and a migration-time backfill counted nothing.
    expect((await rollupPosition(t.app.database)).highWater).toBe(0);
    const migrations = t.app.db.$client.prepare('SELECT count(*) AS n FROM __drizzle_migrations').get() as { n: number };
    expect(migrations.n).toBeGreaterThanOrEqual(4);
  });
});

describe('chart buckets', () => {
  it('use readable widths: minutes and hours up to 8 days, then days and weeks', () => {
    expect(chooseBucketSeconds(3600)).toBe(60);
    expect(chooseBucketSeconds(DAY)).toBe(1800);
    expect(chooseBucketSeconds(7 * DAY)).toBe(3 * 3600);
    expect(chooseBucketSeconds(30 * DAY)).toBe(DAY);
    expect(chooseBucketSeconds(90 * DAY)).toBe(DAY);
    expect(chooseBucketSeconds(365 * DAY)).toBe(7 * DAY);
    expect(chooseBucketSeconds(5 * 365 * DAY)).toBe(30 * DAY);
    // 1970-01-05 was a Monday: weekly bars start on Mondays.
    expect(new Date(bucketOrigin(7 * DAY) * 1000).getUTCDay()).toBe(1);
  });

  it('cover the whole window, empty buckets included, and stack by rule-source family', async () => {
    t = tempApp();
    t.app.recorder.appendDenial({ toolName: 'x', ruleSource: 'policy:a', reason: 'r', timestamp: D0 + 30 });
    t.app.recorder.appendDenial({ toolName: 'x', ruleSource: 'policy:b', reason: 'r', timestamp: D0 + 50 });
    t.app.recorder.appendDenial({ toolName: 'x', ruleSource: 'flag:f', reason: 'r', timestamp: D0 + 3000 });
    const h = await t.app.denials.histogram({ from: D0, to: D0 + 3600 }, { now: NOW });
    expect(h.bucketSeconds).toBe(60);
    expect(h.buckets).toHaveLength(61);
    expect(h.buckets[0]).toEqual({ start: D0, end: D0 + 60, total: 2, counts: { policy: 2 } });
    expect(h.buckets[50]?.counts).toEqual({ flag: 1 });
    expect(h.families).toEqual(['policy', 'flag']);
  });

  it('start an open window at the oldest day with a matching denial', async () => {
    t = tempApp();
    t.app.recorder.appendDenial({ toolName: 'x', ruleSource: 'default', reason: 'r', agentName: 'a', timestamp: D0 + 2 * DAY + 5 });
    t.app.recorder.appendDenial({ toolName: 'x', ruleSource: 'default', reason: 'r', agentName: 'b', timestamp: D0 + 5 * DAY + 5 });
    expect((await t.app.denials.histogram({}, { now: NOW })).from).toBe(D0 + 2 * DAY);
    expect((await t.app.denials.histogram({ agent: 'b' }, { now: NOW })).from).toBe(D0 + 5 * DAY);
    await catchUpRollup(t.app.database);
    expect((await t.app.denials.histogram({ agent: 'b' }, { now: NOW })).from).toBe(D0 + 5 * DAY);
    const empty = await t.app.denials.histogram({ agent: 'nobody' }, { now: NOW });
    expect(empty.buckets.every((b) => b.total === 0)).toBe(true);
  });

  it('start an open window with a text filter at the first matching denial, in bars that fit', async () => {
    t = tempApp();
    t.app.recorder.appendDenial({ toolName: 'x', ruleSource: 'default', reason: 'old', timestamp: D0 + 5 });
    t.app.recorder.appendDenial({ toolName: 'x', ruleSource: 'default', reason: 'needle', timestamp: D0 + 10 * DAY + 3600 });
    const h = await t.app.denials.histogram({ q: 'needle' }, { now: D0 + 10 * DAY + 7200 });
    expect(h.from).toBeGreaterThanOrEqual(D0 + 10 * DAY);
    expect(h.bucketSeconds).toBeLessThan(DAY);
    expect(h.buckets.reduce((n, b) => n + b.total, 0)).toBe(1);
  });
});
