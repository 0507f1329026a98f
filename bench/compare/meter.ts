/** Measurement: the same harness for every engine of bench/compare.ts. */
import type { Decision } from '@/lib/permissions/types';
import { nowNs, Samples } from '../util';

// ---------------------------------------------------------------------------------------------------------------

let sink = 0;

/** Keep a value alive, so that the optimiser cannot drop the work that made it. */
export function keep(n: number): void {
  sink += n;
}

export interface Timing {
  /** calls timed one by one (a prefix of the workload stream) */
  singleCalls: number;
  p50Us: number;
  p99Us: number;
  p999Us: number;
  byDecision: Record<Decision, { calls: number; p50Us: number; p99Us: number }>;
  /** calls in the throughput runs, and decisions per second (the median of the rounds) */
  throughputCalls: number;
  decisionsPerSec: number;
  /** decisions per second of each round */
  roundRates: number[];
  /** timed calls whose decision differed from this engine's (checked after each timed call) */
  mismatches: number;
}

export interface Limits {
  /** calls timed one by one per round, at most (the stream wraps around) */
  singleCallsPerRound: number;
  /** per round: time for calls timed one by one, then for the untimed throughput run */
  singleMs: number;
  throughputMs: number;
  warmUpMs: number;
}

/**
 * Measures one engine a round at a time, so that the engines can take turns: on a shared machine the load changes
 * within a minute, and engines measured one after the other would not see the same machine.
 */
export class Meter {
  private readonly all: Samples;
  private readonly per: Record<Decision, Samples> = { ALLOW: new Samples(), DENY: new Samples(), ASK: new Samples() };
  private next = 0;
  private mismatches = 0;
  private throughputCalls = 0;
  private readonly rates: number[] = [];

  constructor(
    private readonly decide: (i: number) => Decision,
    private readonly expected: readonly Decision[],
    private readonly overheadNs: number,
    private readonly limits: Limits,
  ) {
    this.all = new Samples(Math.min(limits.singleCallsPerRound, 100_000) + 1);
  }

  warmUp(): void {
    const n = this.expected.length;
    const end = performance.now() + this.limits.warmUpMs;
    for (let i = 0; performance.now() < end; i = (i + 8) % n) for (let k = 0; k < 8; k++) sink += this.decide((i + k) % n).length;
  }

  round(): void {
    const { decide, expected, overheadNs, limits } = this;
    // every call timed on its own, continuing the stream where the previous round stopped
    const n = expected.length;
    const singleEnd = nowNs() + BigInt(Math.round(limits.singleMs * 1e6));
    for (let c = 0; c < limits.singleCallsPerRound; c++) {
      const i = this.next;
      if (++this.next === n) this.next = 0;
      const t0 = nowNs();
      const d = decide(i);
      const t1 = nowNs();
      const ns = Math.max(0, Number(t1 - t0) - overheadNs);
      this.all.push(ns);
      const want = expected[i]!;
      this.per[want].push(ns);
      if (d !== want) this.mismatches++;
      if ((c & 15) === 15 && t1 > singleEnd) break;
    }
    // throughput: untimed calls in batches of 32, the clock read between batches
    let calls = 0;
    let idx = 0;
    const t0 = nowNs();
    const end = t0 + BigInt(Math.round(limits.throughputMs * 1e6));
    let t1 = t0;
    do {
      for (let k = 0; k < 32; k++) {
        sink += decide(idx).length;
        if (++idx === n) idx = 0;
      }
      calls += 32;
      t1 = nowNs();
    } while (t1 < end);
    this.throughputCalls += calls;
    this.rates.push((calls / Number(t1 - t0)) * 1e9);
  }

  result(): Timing {
    const [p50, p99, p999] = this.all.percentiles([50, 99, 99.9]);
    const byDecision = {} as Timing['byDecision'];
    for (const d of ['ALLOW', 'DENY', 'ASK'] as const) {
      const [a, b] = this.per[d].percentiles([50, 99]);
      byDecision[d] = { calls: this.per[d].length, p50Us: (a ?? NaN) / 1000, p99Us: (b ?? NaN) / 1000 };
    }
    const sorted = [...this.rates].sort((a, b) => a - b);
    return {
      singleCalls: this.all.length,
      p50Us: (p50 ?? NaN) / 1000,
      p99Us: (p99 ?? NaN) / 1000,
      p999Us: (p999 ?? NaN) / 1000,
      byDecision,
      throughputCalls: this.throughputCalls,
      decisionsPerSec: sorted[Math.floor(sorted.length / 2)] ?? NaN,
      roundRates: this.rates,
      mismatches: this.mismatches,
    };
  }
}
