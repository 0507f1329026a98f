'use client';

import type { SecurityEventJson } from '@/lib/http/responses';
import { ColumnHeads } from '@/app/_components/data-table';
import kit from '@/app/(console)/_explorer/explorer.module.css';
import { ExplorerTable, rowClassName } from '@/app/(console)/_explorer/explorer-table';
import { LocalTime } from '@/app/(console)/_explorer/local-time';
import type { OpenRow } from '@/app/(console)/_explorer/use-open-row';
import { useRowNavigation } from '@/app/(console)/_explorer/use-row-navigation';
import styles from '@/app/(console)/audit/audit.module.css';
import { OutcomeLabel } from './outcome-label';
import { typeLabel } from '@/lib/audit/event-labels';

interface Props {
  rows: SecurityEventJson[];
  busy: boolean;
  /** the row open in the detail panel, how to open one, and where the focus goes back to */
  openRow: OpenRow;
}

const HEADS = ['Time', 'Event', 'Actor', 'Outcome', 'Target'] as const;

/** The events, newest first. One tab stop: arrows move between rows, Enter (or a click) opens one. */
export function EventsTable({ rows, busy, openRow }: Props) {
  const { rowProps } = useRowNavigation(rows, openRow);
  return (
    <ExplorerTable
      label="Security events"
      hintId="events-keys"
      rowsName="events"
      busy={busy}
      classNames={{ hint: styles.keysHint, wrap: styles.tableWrap, table: styles.table }}
      head={<ColumnHeads labels={HEADS} />}
    >
      {rows.map((e) => (
        <tr key={e.id} {...rowProps(e.id)} className={rowClassName(e.id === openRow.openId)} data-event-id={e.id} data-type={e.type}>
          <td className={styles.c_time}>
            <LocalTime seconds={e.timestamp} className={kit.mono} />
          </td>
          <td className={styles.c_type}>
            <span className={styles.typeLabel}>{typeLabel(e.type)}</span> <code className={styles.rawType}>{e.type}</code>
          </td>
          <td className={styles.c_actor}>
            <span className={styles.actor}>{e.actor}</span> {e.actor_role ? <span className={styles.role}>{e.actor_role}</span> : <span className={`muted ${styles.role}`}>no role</span>}
          </td>
          <td className={styles.c_outcome}>
            <OutcomeLabel outcome={e.outcome} />
          </td>
          <td className={styles.c_target}>{e.target ? <span className={styles.target}>{e.target}</span> : <span className="muted">—</span>}</td>
        </tr>
      ))}
    </ExplorerTable>
  );
}
