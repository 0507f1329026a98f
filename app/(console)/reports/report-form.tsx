'use client';

import { useId, useState } from 'react';
import { periodQuery, QUICK_CHOICES, QUICK_LABELS, quickRange, type DayRange, type QuickChoice } from './period-choices';
import { DownloadLink } from '@/app/_components/download-link';
import styles from './reports.module.css';

/**
 * The period (first and last day, both included, in UTC), quick choices, an optional profile, and the two downloads.
 * The downloads are plain links to the API (the browser saves the attachment), so they work with the keyboard and
 * without any script once the page is drawn.
 */
export function ReportForm({ profiles }: { profiles: readonly { name: string; title: string }[] }) {
  const [range, setRange] = useState<DayRange>(() => quickRange('last30'));
  const [chosen, setChosen] = useState<QuickChoice | null>('last30');
  const [profile, setProfile] = useState('');
  const id = useId();
  const period = periodQuery(range, profile);

  const pick = (c: QuickChoice) => {
    setRange(quickRange(c));
    setChosen(c);
  };
  const edit = (part: Partial<DayRange>) => {
    setRange((r) => ({ ...r, ...part }));
    setChosen(null);
  };

  return (
    <div className={styles.form}>
      <fieldset className={styles.quick}>
        <legend>Quick choices</legend>
        <div className={styles.quickButtons}>
          {QUICK_CHOICES.map((c) => (
            <button key={c} type="button" className="button" aria-pressed={chosen === c} onClick={() => pick(c)}>
              {QUICK_LABELS[c]}
            </button>
          ))}
        </div>
      </fieldset>

      <div className={styles.fields}>
        <div className={styles.field}>
          <label htmlFor={`${id}-first`}>First day</label>
          <input id={`${id}-first`} type="date" value={range.first} max={range.last || undefined} required onChange={(e) => edit({ first: e.target.value })} />
        </div>
        <div className={styles.field}>
          <label htmlFor={`${id}-last`}>Last day</label>
          <input id={`${id}-last`} type="date" value={range.last} min={range.first || undefined} required onChange={(e) => edit({ last: e.target.value })} />
        </div>
        <div className={styles.field}>
          <label htmlFor={`${id}-profile`}>Control mapping</label>
          <select id={`${id}-profile`} value={profile} onChange={(e) => setProfile(e.target.value)} disabled={profiles.length === 0}>
            <option value="">{profiles.length === 0 ? 'No active profile' : 'All active profiles'}</option>
            {profiles.map((p) => (
              <option key={p.name} value={p.name}>
                {p.title} ({p.name})
              </option>
            ))}
          </select>
        </div>
      </div>

      <p className={period.ok ? styles.summary : styles.problem} role={period.ok ? undefined : 'alert'} aria-live="polite" data-testid="report-period">
        {period.ok ? (
          <>
            {range.first} to {range.last}, both days included: {period.days} {period.days === 1 ? 'day' : 'days'} in UTC (the report writes it as {period.from} to{' '}
            {period.to}, the end excluded).
          </>
        ) : (
          period.problem
        )}
      </p>

      <div className={styles.actions}>
        <DownloadLink href={period.ok ? `/api/v1/reports/audit.pdf?${period.query}` : undefined} className="button button-primary">
          Download PDF
        </DownloadLink>
        <DownloadLink href={period.ok ? `/api/v1/reports/audit.oscal.json?${period.query}` : undefined}>Download OSCAL JSON</DownloadLink>
      </div>
      <p className={styles.hint}>
        A report first verifies the whole trail, row by row: over millions of rows that takes a while. OSCAL: assessment results (1.1) for GRC tools.
      </p>
    </div>
  );
}
