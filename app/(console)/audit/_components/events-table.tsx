'use client';

import { useEffect, useRef, useState, type KeyboardEvent } from 'react';
import denials from '@/app/(console)/denials/denials.module.css';
import { ColumnHeads } from '@/app/_components/column-heads';
import styles from '@/app/(console)/audit/audit.module.css';
import type { SecurityEvent } from './api';
import { LocalTime } from './local-time';
import { outcomeText, typeLabel } from './vocabulary';

interface Props {
  rows: SecurityEvent[];
  busy: boolean;
  onOpen: (id: number) => void;
  /** the row open in the detail panel */
  openId: number | undefined;
  /** set to move keyboard focus to a row (after the panel closes) */
  focusRequest: { id: number; n: number } | undefined;
}

const HEADS = ['Time', 'Event', 'Actor', 'Outcome', 'Target'] as const;

export function Outcome({ outcome }: { outcome: string }) {
  const o = outcomeText(outcome);
  return (
    <span className={`${styles.outcome} ${styles[`outcome_${outcome}`] ?? ''}`}>
      <span aria-hidden="true">{o.mark}</span> {o.label}
    </span>
  );
}

/** The events, newest first. One tab stop: arrows move between rows, Enter (or a click) opens one. */
export function EventsTable({ rows, busy, onOpen, openId, focusRequest }: Props) {
  const rowRefs = useRef(new Map<number, HTMLTableRowElement>());
  const [activeId, setActiveId] = useState<number | undefined>(openId);
  useEffect(() => {
    if (openId !== undefined) setActiveId(openId);
  }, [openId]);
  useEffect(() => {
    if (focusRequest) rowRefs.current.get(focusRequest.id)?.focus();
  }, [focusRequest]);

  const ids = rows.map((r) => r.id);
  const current = activeId !== undefined && ids.includes(activeId) ? activeId : ids[0];
  const focusAt = (index: number) => {
    const id = ids[Math.min(ids.length - 1, Math.max(0, index))];
    if (id === undefined) return;
    setActiveId(id);
    rowRefs.current.get(id)?.focus();
  };
  const onRowKey = (e: KeyboardEvent<HTMLTableRowElement>, id: number) => {
    if (e.target !== e.currentTarget) return;
    const i = ids.indexOf(id);
    if (e.key === 'ArrowDown') focusAt(i + 1);
    else if (e.key === 'ArrowUp') focusAt(i - 1);
    else if (e.key === 'Home') focusAt(0);
    else if (e.key === 'End') focusAt(ids.length - 1);
    else if (e.key === 'Enter' || e.key === ' ') onOpen(id);
    else return;
    e.preventDefault();
  };

  return (
    <div className={denials.tableBlock}>
      <p id="events-keys" className={`${denials.keysHint} ${styles.keysHint}`}>
        <kbd>↑</kbd> <kbd>↓</kbd> move between events, <kbd>Enter</kbd> opens one, <kbd>Esc</kbd> closes it.
      </p>
      <div className={`${denials.tableWrap} ${styles.tableWrap} ${busy ? denials.stale : ''}`}>
        <table className={`table ${denials.table} ${styles.table}`} aria-label="Security events" aria-describedby="events-keys" aria-busy={busy}>
          <ColumnHeads labels={HEADS} />
          <tbody>
            {rows.map((e) => (
              <tr
                key={e.id}
                ref={(el) => {
                  if (el) rowRefs.current.set(e.id, el);
                  else rowRefs.current.delete(e.id);
                }}
                tabIndex={e.id === current ? 0 : -1}
                className={`${denials.row} ${e.id === openId ? denials.rowOpen : ''}`}
                aria-current={e.id === openId ? 'true' : undefined}
                data-event-id={e.id}
                data-type={e.type}
                onFocus={(ev) => {
                  if (ev.target === ev.currentTarget) setActiveId(e.id);
                }}
                onKeyDown={(ev) => onRowKey(ev, e.id)}
                onClick={() => {
                  // Selecting text to copy it is not a request to open the row.
                  if (window.getSelection()?.toString()) return;
                  onOpen(e.id);
                }}
              >
                <td className={styles.c_time}>
                  <LocalTime seconds={e.timestamp} className={denials.mono} />
                </td>
                <td className={styles.c_type}>
                  <span className={styles.typeLabel}>{typeLabel(e.type)}</span> <code className={styles.rawType}>{e.type}</code>
                </td>
                <td className={styles.c_actor}>
                  <span className={styles.actor}>{e.actor}</span> {e.actor_role ? <span className={styles.role}>{e.actor_role}</span> : <span className={`muted ${styles.role}`}>no role</span>}
                </td>
                <td className={styles.c_outcome}>
                  <Outcome outcome={e.outcome} />
                </td>
                <td className={styles.c_target}>{e.target ? <span className={styles.target}>{e.target}</span> : <span className="muted">—</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
