import type { Metadata } from 'next';
import { requireSignedIn } from '@/lib/http/page-auth';
import { DataTable } from '@/app/_components/data-table';
import { Time } from '@/app/_components/time';
import { ReportForm } from './report-form';
import styles from './reports.module.css';

export const metadata: Metadata = { title: 'Reports' };
export const dynamic = 'force-dynamic';

const CONTENTS: [string, string][] = [
  ['Cover', 'scope, period, who generated it, and the integrity of the trail: both hash chains verified up to the newest signed checkpoint, with the public key fingerprint; first, what the trail cannot show: a period before its first row, days no signed checkpoint covers'],
  ['Summary', 'decisions logged, denials by source family with a chart per day, the top agents, tools and rule sources; hitl denials told apart: a rejection or expiry, or a repeat of a call already rejected or waiting'],
  ['Human oversight', 'approval requests, approved, rejected, expired, the median time to a decision, the approvers and every two-person decision'],
  ['Changes', 'flag changes with who and why, configuration loads and profile switches, each policy revision with its SHA-256'],
  ['Security events', 'sign-ins and failed sign-ins, refused changes, reads and exports of the audit trail'],
  ['Invariants and locked flags', 'their state and any attempt to change them in the period'],
  ['Control mapping', 'each control of the active compliance profiles: demonstrated (its evidence is in the trail for the period), not demonstrated (saying what is missing) or not applicable; never demonstrated by configuration alone'],
  ['Appendix', 'the newest 500 denials of the period, newest first (the report says how many it left out and how to export all of them)'],
];

/**
 * The audit report: pick a period (and a profile), download the PDF or the OSCAL JSON. Auditors and above; a viewer
 * gets the 403 content and the refusal is recorded. Lists the active profiles and the reports generated lately.
 */
export default async function ReportsPage() {
  const { app } = await requireSignedIn('/reports');
  const profiles = app.profiles.profiles.map((p) => ({ name: p.name, title: p.title, frameworks: [...p.frameworks], controls: p.controls.length }));
  const recent = (await app.securityEvents.list({ type: 'audit.report_generated', limit: 8 })).rows.map((e) => {
    const d = (e.detailJson ? JSON.parse(e.detailJson) : {}) as { format?: string; from?: string; to?: string; profile?: string | null };
    return { id: e.target ?? '', at: e.timestamp, actor: e.actor, format: d.format ?? 'pdf', from: d.from ?? '', to: d.to ?? '', profile: d.profile ?? null };
  });
  return (
    <div className={styles.page}>
      <header className="page-head">
        <h1>Reports</h1>
        <p className="muted">The audit report a compliance officer files: one period, every figure from the hash-chained trail.</p>
      </header>

      <div className={styles.layout}>
        <section className={`panel ${styles.formPanel}`} aria-labelledby="report-period">
          <h2 id="report-period">Audit report</h2>
          <ReportForm profiles={profiles} />
        </section>

        <aside className={styles.side}>
          <section className="panel" aria-labelledby="active-profiles">
            <h2 id="active-profiles">Active compliance profiles</h2>
            {profiles.length === 0 ? (
              <p className="muted">None. The report covers the whole system without a control mapping; select a profile with SWARM_PROFILE.</p>
            ) : (
              <ul className={styles.profiles}>
                {profiles.map((p) => (
                  <li key={p.name}>
                    <p className={styles.profileTitle}>
                      {p.title} <code>{p.name}</code>
                    </p>
                    <p className={styles.profileMeta}>
                      {p.controls} controls · {p.frameworks.map((f) => f.split(' (')[0]).join(' · ')}
                    </p>
                  </li>
                ))}
              </ul>
            )}
          </section>
        </aside>
      </div>

      <section className="section" aria-labelledby="report-contents">
        <h2 id="report-contents">What the report contains</h2>
        <dl className={styles.contents}>
          {CONTENTS.map(([term, what]) => (
            <div key={term} className={styles.contentsRow}>
              <dt>{term}</dt>
              <dd>{what}</dd>
            </div>
          ))}
        </dl>
        <p className="muted">
          A4, a header with the period, generation time and report id on every page, and page numbers. Generating a report is recorded in the audit trail
          (<code>audit.report_generated</code>). The same report from the command line:{' '}
          <code>npx swarm audit report --from 2026-01-01 --to 2026-02-01 -o report.pdf</code>.
        </p>
      </section>

      <section className="section" aria-labelledby="recent-reports">
        <h2 id="recent-reports">Generated lately</h2>
        {recent.length === 0 ? (
          <p className="muted">No report has been generated yet.</p>
        ) : (
          <DataTable caption="Reports generated lately, newest first" heads={['When', 'By', 'Period', 'Format', 'Report id']}>
            {recent.map((r) => (
              <tr key={`${r.id}-${r.at}`}>
                <td className="nowrap">
                  <Time seconds={r.at} />
                </td>
                <td>{r.actor}</td>
                <td className="nowrap">
                  {r.from.slice(0, 10)} to {r.to.slice(0, 10)}
                  {r.profile ? ` (${r.profile})` : ''}
                </td>
                <td>{r.format === 'oscal' ? 'OSCAL' : 'PDF'}</td>
                <td>
                  <code className={styles.id}>{r.id}</code>
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </section>
    </div>
  );
}
