'use client';

import { useRowNavigation } from '@/app/_components/use-row-navigation';
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
  const { rowProps } = useRowNavigation(
    rows.map((r) => r.id),
    onOpen,
    openId,
    focusRequest,
  );

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
              <tr key={e.id} {...rowProps(e.id)} className={`${denials.row} ${e.id === openId ? denials.rowOpen : ''}`} data-event-id={e.id} data-type={e.type}>
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
