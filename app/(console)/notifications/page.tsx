import type { Metadata } from 'next';
import Link from 'next/link';
import { requireSignedIn } from '@/lib/http/page-auth';
import { durationWords } from '@/lib/config/duration-words';
import { DataTable } from '@/app/_components/data-table';
import { Time } from '@/app/_components/time';
import { deliveriesQuerySchema, DELIVERY_STATUSES } from '@/lib/notifications/query';
import { deliveryToJson } from '@/lib/notifications/service';
import styles from './notifications.module.css';

export const metadata: Metadata = { title: 'Notifications' };
export const dynamic = 'force-dynamic';

type Search = Record<string, string | string[] | undefined>;

const EVENT_WORDS: Record<string, string> = {
  approval_requested: 'Approval requested',
  approval_expiring: 'Approval nearing expiry',
  denial_burst: 'Denial burst',
};
/** Each state in words and with a symbol, never by colour alone. */
const STATUS_WORDS: Record<string, string> = { pending: '○ Waiting to send', sending: '◐ Sending', delivered: '✓ Delivered', failed: '✕ Failed' };

/**
 * Who was told that they are needed, and what failed: the channels of config/notifications.yaml and every delivery,
 * newest first, filterable by state. Admins only (the same as GET /api/v1/notifications/deliveries).
 */
export default async function NotificationsPage({ searchParams }: { searchParams: Promise<Search> }) {
  const { app } = await requireSignedIn('/notifications');
  const sp = await searchParams;
  const parsed = deliveriesQuerySchema.safeParse({ status: typeof sp.status === 'string' ? sp.status : undefined, before: typeof sp.before === 'string' ? sp.before : undefined, limit: 50 });
  const query = parsed.success ? parsed.data : { limit: 50 };
  const rows = (await app.notifications.list(query)).map(deliveryToJson);
  const counts = await app.notifications.counts();
  const config = app.notificationsFile.current;
  const file = app.notificationsFile.status();
  const status = 'status' in query ? query.status : undefined;
  const total = Object.values(counts).reduce((a, b) => a + b, 0);

  return (
    <div className={styles.page}>
      <header className="page-head">
        <h1>Notifications</h1>
        <p className="muted">
          People are told when a call waits for them, when a request nears its expiry, and when denials come in a burst. Sending happens in the background and
          never holds up a decision; failed sends are retried, then listed here.
        </p>
      </header>

      <section className="section" aria-labelledby="channels-head">
        <h2 id="channels-head">Channels in force</h2>
        {file.error ? (
          <p className={styles.configError} role="status">
            {file.error}
          </p>
        ) : null}
        {config.channels.length === 0 ? (
          <p className="muted">
            No channel is in force{file.missing ? ` (${file.path} does not exist)` : ''}. Add a signed webhook or a Slack incoming webhook to{' '}
            <code>config/notifications.yaml</code>; secrets and Slack URLs come from environment variables the file names.
          </p>
        ) : (
          <ul className={styles.channels}>
            {config.channels.map((c) => (
              <li key={c.id} className={styles.channel}>
                <p className={styles.channelName}>
                  {c.id} <span className="muted">· {c.kind === 'slack' ? 'Slack incoming webhook' : 'signed webhook'}</span>
                </p>
                <p>
                  To <code>{c.urlShown}</code>
                  {c.secretEnv ? (
                    <>
                      , signed with <code>${c.secretEnv}</code>
                    </>
                  ) : null}
                </p>
                <p className="muted">
                  {c.events.map((e) => EVENT_WORDS[e] ?? e).join(', ')} · up to {c.maxAttempts} {c.maxAttempts === 1 ? 'attempt' : 'attempts'}, {c.timeoutSeconds} s each
                </p>
              </li>
            ))}
          </ul>
        )}
        {config.off.length > 0 ? (
          <p className="muted">
            Off (marked <code>optional</code>, their variables not set on this server):{' '}
            {config.off.map((c, i) => (
              <span key={c.id}>
                {i > 0 ? '; ' : ''}
                {c.id} ({c.kind === 'slack' ? 'Slack' : 'webhook'}, {c.reason})
              </span>
            ))}
            .
          </p>
        ) : null}
        {config.channels.length > 0 ? (
          <p className="muted">
            Nearing expiry means {durationWords(config.expiringBeforeSeconds, 'h')} before a request expires.{' '}
            {config.bursts.length === 0
              ? 'No denial burst is watched.'
              : `Bursts watched: ${config.bursts.map((b) => `${b.id} (${b.denials} denials within ${durationWords(b.withinSeconds, 'h')}${b.agent ? ` by ${b.agent}` : ''})`).join('; ')}.`}
          </p>
        ) : null}
      </section>

      <section className="section" aria-labelledby="deliveries-head">
        <h2 id="deliveries-head">Deliveries</h2>
        <nav aria-label="Filter deliveries by state">
          <ul className={styles.filters}>
            <li>
              <Link href="/notifications" aria-current={status === undefined ? 'page' : undefined}>
                All ({total})
              </Link>
            </li>
            {DELIVERY_STATUSES.map((s) => (
              <li key={s}>
                <Link href={`/notifications?status=${s}`} aria-current={status === s ? 'page' : undefined}>
                  {STATUS_WORDS[s]!.slice(2)} ({counts[s]})
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        {!parsed.success ? <p className="form-error">{parsed.error.issues[0]?.message}</p> : null}
        {rows.length === 0 ? (
          <p className="muted">{status ? 'No delivery in this state.' : 'Nothing has been sent yet.'}</p>
        ) : (
          <DataTable caption="Notification deliveries, newest first" heads={['Queued', 'Event', 'About', 'Channel', 'State', 'Attempts', 'Last answer']} cardsWhenNarrow>
            {rows.map((d) => (
              <tr key={d.id}>
                <td className="nowrap" data-label="Queued">
                  <Time seconds={d.created_at} />
                </td>
                <td data-label="Event">{EVENT_WORDS[d.event] ?? d.event}</td>
                <td className={styles.subject} data-label="About">
                  {d.event === 'denial_burst' ? (
                    <code>{d.subject}</code>
                  ) : (
                    <Link href={`/approvals?request=${encodeURIComponent(d.subject)}`}>
                      <code>{d.subject}</code>
                    </Link>
                  )}
                </td>
                <td data-label="Channel">{d.channel}</td>
                <td data-label="State">
                  <span className={`${styles.status} ${styles[`status-${d.status}`] ?? ''}`}>{STATUS_WORDS[d.status] ?? d.status}</span>
                  {d.status === 'delivered' && d.delivered_at ? (
                    <span className="muted">
                      {' '}
                      <Time seconds={d.delivered_at} />
                    </span>
                  ) : null}
                  {d.status === 'pending' && d.attempts > 0 && d.next_attempt_at ? (
                    <span className="muted">
                      {' '}
                      retry at <Time seconds={d.next_attempt_at} />
                    </span>
                  ) : null}
                </td>
                <td data-label="Attempts">
                  {d.attempts} of {d.max_attempts}
                </td>
                <td className={styles.error} data-label="Last answer">
                  {d.last_error ?? (d.last_status ? `HTTP ${d.last_status}` : '—')}
                </td>
              </tr>
            ))}
          </DataTable>
        )}
        {rows.length === query.limit ? (
          <p className={styles.more}>
            <Link href={`/notifications?${new URLSearchParams({ ...(status ? { status } : {}), before: String(rows[rows.length - 1]!.id) }).toString()}`}>Older deliveries</Link>
          </p>
        ) : null}
        <p className="muted">
          The same list as JSON: <code>GET /api/v1/notifications/deliveries</code> (admins).
        </p>
      </section>
    </div>
  );
}
