'use client';

import { useState } from 'react';
import { verifyReportSchema } from '@/lib/http/responses';
import { apiGet, errorSentence } from '@/app/_lib/api-client';
import { count, plural } from '@/app/(console)/_explorer/format';
import { LocalTime } from '@/app/(console)/_explorer/local-time';
import styles from '@/app/(console)/audit/audit.module.css';
import { integrityFromReport, type Integrity } from './integrity';

const short = (hash: string | null) => (hash ? `${hash.slice(0, 12)}…` : 'none');

/**
 * The state of the evidence at the top of the page: the last verification of both hash chains (from the trail, or
 * the one just run with "Verify now"). Its word (verified, FAILED, not verified) always says what the colour says.
 */
export function IntegrityBadge({ initial }: { initial: Integrity | undefined }) {
  const [integrity, setIntegrity] = useState(initial);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();

  const verify = async () => {
    setBusy(true);
    setError(undefined);
    try {
      setIntegrity(integrityFromReport(await apiGet('/api/v1/audit/verify', verifyReportSchema)));
    } catch (e) {
      setError(`The verification could not run: ${errorSentence(e)}`);
    } finally {
      setBusy(false);
    }
  };

  const state = !integrity ? 'none' : integrity.ok ? 'ok' : 'failed';
  const rows = integrity?.chains.reduce((n, c) => n + c.rows, 0) ?? 0;
  const first = integrity?.failures[0];

  return (
    <section className={`${styles.integrity} ${styles[`integrity_${state}`]}`} aria-labelledby="integrity-title" data-testid="integrity" data-state={state} aria-busy={busy}>
      <span className={styles.integrityMark} aria-hidden="true">
        {state === 'ok' ? '✓' : state === 'failed' ? '✕' : '–'}
      </span>
      <div className={styles.integrityText}>
        <h2 id="integrity-title" className={styles.integrityTitle} aria-live="polite">
          {!integrity ? (
            'Integrity: Not verified yet'
          ) : integrity.ok ? (
            <>
              Integrity: verified <LocalTime seconds={integrity.checkedAt} /> — intact, {plural(rows, 'row')}
              {integrity.chains.length === 1 ? <>, head <code title={integrity.chains[0]?.head ?? undefined}>{short(integrity.chains[0]?.head ?? null)}</code></> : null}
            </>
          ) : first ? (
            `FAILED: ${first.table} row ${first.id}: ${first.problem}`
          ) : (
            'FAILED: the verification reported a problem'
          )}
        </h2>
        {!integrity ? (
          <p className={styles.integrityNote}>
            Nobody has checked the hash chains of this trail yet. Verifying recomputes every row&apos;s hash and every signed checkpoint.
          </p>
        ) : integrity.ok ? (
          <ul className={styles.chains} aria-label="Hash chains">
            {integrity.chains.map((c) => (
              <li key={c.chain}>
                <code>{c.chain}</code> {count(c.rows)} {c.rows === 1 ? 'row' : 'rows'}, head <code title={c.head ?? undefined}>{short(c.head)}</code>
                {c.checkpoints ? <span className="muted"> · {c.checkpointsValid ?? 0} of {plural(c.checkpoints, 'checkpoint')} valid</span> : null}
                {c.awaiting ? <span className="muted"> · {plural(c.awaiting, 'newest row')} not yet under a checkpoint (signed within 10 s)</span> : null}
                {c.witnessed ? <span className="muted"> · checked against {plural(c.witnessed, 'witnessed checkpoint')}</span> : null}
              </li>
            ))}
          </ul>
        ) : (
          <ul className={styles.failures} aria-label="Problems found">
            {integrity.failures.map((f) => (
              <li key={`${f.table}-${f.id}-${f.problem}`}>
                {f.message}
                {f === first ? null : (
                  <span className="muted">
                    {' '}
                    ({f.table} row {f.id}: {f.problem})
                  </span>
                )}
              </li>
            ))}
            <li className="muted">
              Checked <LocalTime seconds={integrity.checkedAt} />
            </li>
          </ul>
        )}
        {integrity?.by ? <p className={styles.integrityNote}>Last run by {integrity.by}.</p> : null}
        {error ? (
          <p className={styles.integrityError} role="alert">
            {error}
          </p>
        ) : null}
      </div>
      <button type="button" className="button" onClick={verify} disabled={busy}>
        {busy ? 'Verifying…' : 'Verify now'}
      </button>
    </section>
  );
}
