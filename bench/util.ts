/**
 * Small helpers shared by the benchmarks: a seeded PRNG, percentiles, formatting. No dependencies.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** mulberry32: a tiny, fast, deterministic PRNG returning floats in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Rng = () => number;

export const randInt = (rng: Rng, n: number): number => Math.floor(rng() * n);

export function pick<T>(rng: Rng, items: readonly T[]): T {
  if (items.length === 0) throw new Error('pick() from an empty list');
  return items[randInt(rng, items.length)] as T;
}

/** `k` distinct items of `items`, in random order (partial Fisher-Yates on a copy). */
export function sample<T>(rng: Rng, items: readonly T[], k: number): T[] {
  const copy = [...items];
  const n = Math.min(k, copy.length);
  for (let i = 0; i < n; i++) {
    const j = i + randInt(rng, copy.length - i);
    const tmp = copy[i] as T;
    copy[i] = copy[j] as T;
    copy[j] = tmp;
  }
  return copy.slice(0, n);
}

/** Percentile (nearest rank) of the first `n` values; sorts a copy. */
export function percentiles(values: Float64Array, n: number, ps: readonly number[]): number[] {
  if (n === 0) return ps.map(() => Number.NaN);
  const sorted = values.slice(0, n).sort();
  return ps.map((p) => sorted[Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1))] ?? Number.NaN);
}

/** A growable Float64Array. */
export class Samples {
  private data: Float64Array;
  length = 0;
  constructor(capacity = 1024) {
    this.data = new Float64Array(capacity);
  }
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  percentiles(ps: readonly number[]): number[] {
    return percentiles(this.data, this.length, ps);
  }
  max(): number {
    let m = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < this.length; i++) m = Math.max(m, this.data[i] ?? m);
    return m;
  }
}

/** Format a number with a fixed count of significant-ish decimals, e.g. 0.423, 12.3, 1234. */
export function fmt(v: number, digits = 3): string {
  if (!Number.isFinite(v)) return '–';
  if (v >= 1000) return Math.round(v).toLocaleString('en-US');
  if (v >= 100) return v.toFixed(Math.max(0, digits - 3));
  if (v >= 10) return v.toFixed(Math.max(0, digits - 2));
  return v.toFixed(Math.max(0, digits - 1));
}

export const fmtInt = (v: number): string => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '–');

/** A Markdown table (also readable as plain text in a terminal). */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(' | ')} |`;
  const sep = `|${widths.map((w, i) => (i === 0 ? `${'-'.repeat(w + 1)}-` : `-${'-'.repeat(w)}:`)).join('|')}|`;
  return [line(header), sep, ...rows.map(line)].join('\n');
}

/** True when the module at `metaUrl` is the script node was started with. */
export function isMain(metaUrl: string): boolean {
  const entry = process.argv[1];
  return entry !== undefined && resolve(entry) === fileURLToPath(metaUrl);
}

export const nowNs = (): bigint => process.hrtime.bigint();
