'use client';

import { useEffect, useRef, useState, type KeyboardEvent } from 'react';
import kit from '@/app/(console)/_explorer/explorer.module.css';
import styles from '@/app/(console)/denials/denials.module.css';
import type { DenialHistogram as Histogram } from '@/lib/http/responses';
import { familyInfo, orderFamilies } from '@/lib/audit/denials/vocabulary';
import { count, duration, plural, shortDateTime } from '@/app/(console)/_explorer/format';

interface Props {
  histogram: Histogram | undefined;
  stale: boolean;
  /** narrow the window to one bucket */
  onNarrow: (from: number, to: number) => void;
  onFamily: (family: string) => void;
}

const HEIGHT = 168;
const PAD = { top: 10, right: 12, bottom: 26, left: 44 };

/** Round gridlines: a step of 1, 2 or 5 times a power of ten, at most four of them above zero. */
function axisTicks(max: number): number[] {
  if (max <= 0) return [0, 1];
  const p = 10 ** Math.floor(Math.log10(max / 4));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= 1 && s * 4 >= max) ?? Math.max(1, p * 10);
  const ticks: number[] = [];
  for (let t = 0; t < max + step; t += step) ticks.push(t);
  return ticks;
}

function bucketLabel(start: number, end: number, width: number): string {
  if (width >= 86400) return width === 86400 ? shortDateTime(start, false) : `${shortDateTime(start, false)} – ${shortDateTime(end - 1, false)}`;
  return `${shortDateTime(start)} – ${shortDateTime(end).slice(-5)}`;
}

function useWidth<T extends HTMLElement>(): [React.RefObject<T | null>, number] {
  const ref = useRef<T>(null);
  const [width, setWidth] = useState(0);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const observer = new ResizeObserver(([entry]) => setWidth(Math.floor(entry?.contentRect.width ?? 0)));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return [ref, width];
}

/**
 * Denials over time, stacked by rule-source family: plain SVG. One tab stop; the arrow keys move between bars, Enter
 * (or a click) narrows the window to the bar. Every bar says its time, total and families in words (tooltip and
 * accessible name), and the legend names every colour.
 */
export function HistogramChart({ histogram, stale, onNarrow, onFamily }: Props) {
  const [wrapRef, width] = useWidth<HTMLDivElement>();
  const [active, setActive] = useState<number | undefined>();
  const [focusIndex, setFocusIndex] = useState(0);
  const barRefs = useRef<(SVGGElement | null)[]>([]);

  const buckets = histogram?.buckets ?? [];
  const families = orderFamilies(histogram?.families ?? []);
  const ticks = axisTicks(Math.max(0, ...buckets.map((b) => b.total)));
  const max = ticks[ticks.length - 1] ?? 1;
  const innerW = Math.max(0, width - PAD.left - PAD.right);
  const innerH = HEIGHT - PAD.top - PAD.bottom;
  const slot = buckets.length ? innerW / buckets.length : 0;
  const barW = Math.max(1, slot * (slot > 8 ? 0.78 : 0.9));
  const y = (v: number) => PAD.top + innerH - (v / max) * innerH;
  const total = buckets.reduce((n, b) => n + b.total, 0);

  useEffect(() => {
    // A new histogram starts the keyboard at its newest bar with denials in it.
    let newest = buckets.length - 1;
    while (newest > 0 && (buckets[newest]?.total ?? 0) === 0) newest--;
    setFocusIndex(Math.max(0, newest));
    setActive(undefined);
  }, [histogram, buckets.length]);

  const describe = (i: number) => {
    const b = buckets[i];
    if (!b || !histogram) return '';
    const parts = orderFamilies(Object.keys(b.counts)).map((f) => `${f} ${count(b.counts[f] ?? 0)}`);
    return `${bucketLabel(b.start, b.end, histogram.bucket_seconds)}: ${plural(b.total, 'denial')}${parts.length ? ` (${parts.join(', ')})` : ''}`;
  };

  const move = (i: number) => {
    const next = Math.min(buckets.length - 1, Math.max(0, i));
    setFocusIndex(next);
    setActive(next);
    barRefs.current[next]?.focus();
  };
  const onKey = (e: KeyboardEvent, i: number) => {
    const b = buckets[i];
    if (e.key === 'ArrowRight') move(i + 1);
    else if (e.key === 'ArrowLeft') move(i - 1);
    else if (e.key === 'Home') move(0);
    else if (e.key === 'End') move(buckets.length - 1);
    else if ((e.key === 'Enter' || e.key === ' ') && b && b.total > 0) onNarrow(Math.max(b.start, histogram?.from ?? b.start), Math.min(b.end, histogram?.to ?? b.end));
    else return;
    e.preventDefault();
  };

  const labelEvery = Math.max(1, Math.ceil(buckets.length / Math.max(1, Math.floor(innerW / 110))));
  const tip = active !== undefined ? buckets[active] : undefined;

  return (
    <section className={`${styles.chartPanel} ${stale && histogram ? kit.stale : ''}`} aria-labelledby="chart-title" aria-busy={stale}>
      <div className={styles.chartHead}>
        <h2 id="chart-title" className={styles.cardTitle}>
          Denials over time
        </h2>
        {histogram ? (
          <p className={styles.chartNote}>
            {plural(total, 'denial')} in bars of {duration(histogram.bucket_seconds)}
            {histogram.bucket_seconds >= 86400 ? ' (UTC days)' : ''}. Click a bar, or use ← → and Enter, to narrow the window.
          </p>
        ) : null}
      </div>
      <div ref={wrapRef} className={styles.chartWrap}>
        {!histogram ? (
          <div className={styles.chartSkeleton} aria-label="Loading the chart" />
        ) : total === 0 ? (
          <p className={styles.chartEmpty}>No denials in this window.</p>
        ) : width > 0 ? (
          <svg width={width} height={HEIGHT} role="group" aria-label={`Denials over time, ${buckets.length} bars`} className={styles.chart}>
            {ticks.map((t) => (
              <g key={t} aria-hidden="true">
                <line x1={PAD.left} x2={width - PAD.right} y1={y(t)} y2={y(t)} className={styles.gridLine} />
                <text x={PAD.left - 8} y={y(t)} dy="0.32em" textAnchor="end" className={styles.axisText}>
                  {count(t)}
                </text>
              </g>
            ))}
            {buckets.map((b, i) => {
              const x = PAD.left + i * slot + (slot - barW) / 2;
              let acc = 0;
              return (
                <g
                  key={b.start}
                  ref={(el) => {
                    barRefs.current[i] = el;
                  }}
                  role="button"
                  tabIndex={i === focusIndex ? 0 : -1}
                  aria-label={describe(i)}
                  aria-disabled={b.total === 0}
                  className={styles.bar}
                  data-active={active === i}
                  onMouseEnter={() => setActive(i)}
                  onMouseLeave={() => setActive(undefined)}
                  onFocus={() => {
                    setFocusIndex(i);
                    setActive(i);
                  }}
                  onBlur={() => setActive(undefined)}
                  onKeyDown={(e) => onKey(e, i)}
                  onClick={() => {
                    if (b.total > 0 && histogram) onNarrow(Math.max(b.start, histogram.from), Math.min(b.end, histogram.to));
                  }}
                >
                  {/* The whole slot is the target, so thin bars are still easy to hit. */}
                  <rect x={PAD.left + i * slot} y={PAD.top} width={slot} height={innerH} className={styles.barHit} />
                  {families.map((f) => {
                    const n = b.counts[f] ?? 0;
                    if (!n) return null;
                    const top = y(acc + n);
                    const h = y(acc) - top;
                    acc += n;
                    return <rect key={f} x={x} y={top} width={barW} height={Math.max(h, 0.5)} fill={familyInfo(f).fill} />;
                  })}
                </g>
              );
            })}
            {buckets.map((b, i) =>
              i % labelEvery === 0 ? (
                <text key={`l${b.start}`} x={PAD.left + i * slot + slot / 2} y={HEIGHT - 8} textAnchor="middle" className={styles.axisText} aria-hidden="true">
                  {histogram.bucket_seconds >= 86400 ? shortDateTime(b.start, false) : shortDateTime(b.start).slice(histogram.to - histogram.from > 86400 ? 0 : -5)}
                </text>
              ) : null,
            )}
          </svg>
        ) : null}
        {tip && histogram && width > 0 ? (
          <div
            className={styles.tooltip}
            role="status"
            data-testid="chart-tooltip"
            style={{ left: Math.min(Math.max(PAD.left + (active ?? 0) * slot + slot / 2, 120), width - 120) }}
          >
            <strong>{bucketLabel(tip.start, tip.end, histogram.bucket_seconds)}</strong>
            <span>{plural(tip.total, 'denial')}</span>
            {orderFamilies(Object.keys(tip.counts)).map((f) => (
              <span key={f} className={styles.tipRow}>
                <span className={styles.swatch} style={{ background: familyInfo(f).fill }} aria-hidden="true" />
                {f} <b>{count(tip.counts[f] ?? 0)}</b>
              </span>
            ))}
          </div>
        ) : null}
      </div>
      {families.length > 0 ? (
        <ul className={styles.legend} aria-label="Rule-source families">
          {families.map((f) => (
            <li key={f}>
              <button type="button" className={styles.legendItem} title={`Show only the ${f} family: ${familyInfo(f).meaning}`} onClick={() => onFamily(f)}>
                <span className={styles.swatch} style={{ background: familyInfo(f).fill }} aria-hidden="true" />
                {f}
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}
