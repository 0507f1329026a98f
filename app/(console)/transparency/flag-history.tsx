import type { TransparencyReport } from '@/lib/flags/transparency';
import { DataTable } from '@/app/_components/data-table';
import { Time } from '@/app/_components/time';
import { OnOff } from './on-off';
import styles from './transparency.module.css';

type History = TransparencyReport['history'];

/** A link to this page's history with the given filter (URL parameters: name, by, before). */
function historyHref(params: { name: string | null; by: string | null; before?: string | null }): string {
  const q = new URLSearchParams();
  if (params.name) q.set('name', params.name);
  if (params.by) q.set('by', params.by);
  if (params.before) q.set('before', params.before);
  const s = q.toString();
  return `/transparency${s ? `?${s}` : ''}#history`;
}

/**
 * The flag history with its filter: a plain GET form, so a filtered view is a link that can be shared and works
 * without JavaScript.
 */
export function FlagHistory({ history, paged }: { history: History; paged: boolean }) {
  const { filter, changes, next_cursor, options } = history;
  const filtered = filter.name !== null || filter.by !== null;
  // A filter value that is not among the options (a flag without changes, a mistyped link) must still show as selected.
  const names = filter.name && !options.names.includes(filter.name) ? [filter.name, ...options.names] : options.names;
  const authors = filter.by && !options.by.includes(filter.by) ? [filter.by, ...options.by] : options.by;
  // With no change at all there is nothing to filter; the form would only offer "All flags" and "Anyone".
  const canFilter = filtered || options.names.length > 0;
  return (
    <>
      {canFilter ? (
        <form method="get" action="/transparency#history" className={styles.filters} aria-label="Filter the flag history">
          <Choice name="name" label="Flag" all="All flags" options={names} value={filter.name} />
          <Choice name="by" label="Changed by" all="Anyone" options={authors} value={filter.by} />
          <button type="submit" className="button button-primary">
            Show changes
          </button>
          {filtered ? (
            <a href="/transparency#history" className={styles.clear}>
              Clear filter
            </a>
          ) : null}
        </form>
      ) : null}
      <p className={styles.filterSummary} data-testid="history-filter">
        {filtered ? (
          <>
            Showing changes
            {filter.name ? (
              <>
                {' '}
                to <code>{filter.name}</code>
              </>
            ) : null}
            {filter.by ? (
              <>
                {' '}
                by <strong>{filter.by}</strong>
              </>
            ) : null}
            , newest first.
          </>
        ) : (
          'Showing every change and every refused attempt, newest first. Nothing is ever deleted from this history.'
        )}
      </p>
      {changes.length === 0 ? (
        <p className={`panel ${styles.quietPanel}`}>
          {filtered ? 'No change matches this filter.' : 'No flag has been changed at runtime: every value comes from the environment or the catalog.'}
        </p>
      ) : (
        <DataTable label="Flag history" heads={['When', 'Flag', 'Change', 'By', 'Reason']} wrapClassName={styles.wrap} cardsWhenNarrow>
          {changes.map((c) => (
            <tr key={c.id} data-action={c.action}>
              <td className="nowrap" data-label="When">
                <Time seconds={c.changed_at} />
              </td>
              <td data-label="Flag">
                <code>{c.name}</code>
              </td>
              {c.action === 'refused' ? (
                <td data-label="Change">
                  <span className={styles.refused}>Refused: {c.new_value === null ? 'reset' : c.new_value ? 'turn on' : 'turn off'}</span>
                  <div className={styles.detail}>
                    not changed, stayed <OnOff value={c.old_value} compact />
                  </div>
                </td>
              ) : (
                <td className="nowrap" data-label="Change">
                  {c.action === 'set' ? 'Override set' : 'Override removed'}: <OnOff value={c.old_value} compact /> →{' '}
                  <OnOff value={c.new_value} compact />
                </td>
              )}
              <td data-label="By">{c.changed_by}</td>
              <td className={styles.description} data-label="Reason">
                <Reason action={c.action} text={c.reason} />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      {next_cursor || paged ? (
        <nav className={styles.pager} aria-label="History pages">
          {paged ? <a href={historyHref(filter)}>Newest changes</a> : null}
          {next_cursor ? <a href={historyHref({ ...filter, before: next_cursor })}>Older changes</a> : null}
        </nav>
      ) : null}
    </>
  );
}

/** One select of the filter: every option, or one of them. */
function Choice({ name, label, all, options, value }: { name: string; label: string; all: string; options: readonly string[]; value: string | null }) {
  return (
    <div className={styles.field}>
      <label htmlFor={`history-${name}`}>{label}</label>
      <select id={`history-${name}`} name={name} defaultValue={value ?? ''}>
        <option value="">{all}</option>
        {options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </div>
  );
}

/**
 * A change's reason. A refused attempt's reason holds what was asked and why it was refused, recorded as
 * "<reason> (refused: <refusal>)" or "refused: <refusal>"; the two are shown apart.
 */
function Reason({ action, text }: { action: string; text: string }) {
  if (action !== 'refused') return <>{text}</>;
  const marker = ' (refused: ';
  const at = text.lastIndexOf(marker);
  let reason: string | null = null;
  let refusal = text;
  if (at >= 0 && text.endsWith(')')) {
    reason = text.slice(0, at);
    refusal = text.slice(at + marker.length, -1);
  } else if (text.startsWith('refused: ')) {
    refusal = text.slice('refused: '.length);
  }
  return (
    <>
      {reason ? <div>{reason}</div> : <div className="muted">No reason given.</div>}
      <div className={styles.refusal}>
        <strong>Why refused:</strong> {refusal}
      </div>
    </>
  );
}
