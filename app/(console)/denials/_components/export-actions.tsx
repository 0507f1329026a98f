import { DownloadLink } from '@/app/_components/download-link';
import styles from '@/app/(console)/denials/denials.module.css';
import { exportUrl, reportUrl, type ExplorerState } from './url-state';

/**
 * Share and export what the view shows: the exact link, the CSV and JSON-lines exports and the audit report of its
 * period, all of the view's fixed window (`view`); unavailable until that window is known.
 */
export function ExportActions({ view, onCopyLink }: { view: ExplorerState | undefined; onCopyLink: () => void }) {
  const report = view ? reportUrl(view) : undefined;
  return (
    <div className={styles.exports} role="group" aria-label="Share and export the current filter">
      <button
        type="button"
        className="button"
        onClick={onCopyLink}
        disabled={!view}
        data-testid="copy-exact-link"
        title="A link to exactly the rows of this view: its window as it was loaded and its newest denial; denials recorded later are not in it"
      >
        Copy link for this exact window
      </button>
      {/* Until the view's window is fixed there is nothing exact to export yet: the same buttons, unavailable. */}
      <DownloadLink href={view && exportUrl(view, 'csv')} testId="export-csv">
        Export CSV
      </DownloadLink>
      <DownloadLink href={view && exportUrl(view, 'ndjson')} testId="export-json">
        Export JSON lines
      </DownloadLink>
      {report ? (
        <DownloadLink
          href={report}
          testId="report-for-window"
          title="The audit report (PDF) of this view's period, from its start to its end as loaded: every denial of the period, not only the filtered ones"
        >
          Audit report for this period
        </DownloadLink>
      ) : null}
    </div>
  );
}
