import type { Metadata } from 'next';
import { requireSignedIn } from '@/lib/http/page-auth';
import { DataTable } from '@/app/_components/data-table';
import { tokenToJson } from '@/lib/http/routes/tokens';
import { RevokeToken } from './revoke-token';
import styles from './tokens.module.css';

export const metadata: Metadata = { title: 'API tokens' };
export const dynamic = 'force-dynamic';

/** Each state in words and with a symbol, never by colour alone. */
const STATE_WORDS: Record<string, string> = { active: '● Active', revoked: '✕ Revoked', expired: '○ Expired', disabled: '◌ Disabled (unused)' };
/** A time to the minute, in UTC (the column heads say so), with the exact ISO value on hover: the table fits 1440 px. */
function Minute({ seconds }: { seconds: number }) {
  const iso = new Date(seconds * 1000).toISOString();
  return (
    <time dateTime={iso} title={iso}>
      {iso.slice(0, 16).replace('T', ' ')}
    </time>
  );
}

/**
 * Every API token, newest first: whose it is, what it may do, when it expires and when it was last used, and its
 * state; admins revoke from here, each revocation confirmed in a dialog (the same as POST /api/v1/tokens/{id}/revoke).
 * Rotation is `swarm tokens rotate ID --overlap 24h` (the new secret is shown once, in the terminal).
 */
export default async function TokensPage() {
  const { app } = await requireSignedIn('/settings/tokens');
  const now = Date.now() / 1000;
  const tokens = (await app.auth.listTokens()).map((t) => tokenToJson(t, now));
  const policy = app.profiles.tokens;
  const active = tokens.filter((t) => t.state === 'active').length;

  return (
    <div className={styles.page}>
      <header className="page-head">
        <h1>API tokens</h1>
        <p className="muted">
          Agents and scripts authenticate with these tokens. An agent&apos;s token only asks for decisions; a person&apos;s token reads, operates or administers, never
          more than the person&apos;s role. Secrets are never stored: a token is shown once, when it is made.
        </p>
      </header>

      <section className="section" aria-labelledby="policy-head">
        <h2 id="policy-head">Lifecycle in force</h2>
        <p className={styles.policy}>
          {policy?.maxDays ? <>New tokens expire after {policy.maxDays} days. </> : <>New tokens do not expire unless asked (<code>--expires 30d</code>). </>}
          {policy?.inactiveDays ? <>Tokens unused for {policy.inactiveDays} days are disabled by the sweeper. </> : <>Unused tokens are not disabled. </>}
          {policy ? <span className="muted">(profile {policy.profiles.join(', ')})</span> : <span className="muted">(no compliance profile sets a token lifecycle)</span>}
        </p>
        <p className="muted">
          Rotate with <code>swarm tokens rotate ID --overlap 24h</code>: a new secret for the same owner and scopes, the old one working for the overlap.
        </p>
      </section>

      <section className="section" aria-labelledby="tokens-head">
        <h2 id="tokens-head">
          Tokens <span className="muted">({active} active of {tokens.length})</span>
        </h2>
        {tokens.length === 0 ? (
          <p className="muted">No token yet. Make one with <code>swarm tokens add --agent NAME</code>.</p>
        ) : (
          <DataTable caption="API tokens, newest first" heads={['ID', 'Owner', 'Name', 'Scopes', 'Created (UTC)', 'Expires (UTC)', 'Last used (UTC)', 'State', '']} cardsWhenNarrow>
            {tokens.map((t) => (
              <tr key={t.id} data-token-id={t.id}>
                <td className="nowrap" data-label="ID">
                  {t.id}
                </td>
                <td className={styles.owner} data-label="Owner">
                  <span className={styles.kind}>{t.owner_kind === 'agent' ? 'agent' : 'person'}</span> {t.owner_kind === 'agent' ? t.owner.slice('agent:'.length) : t.owner}
                </td>
                <td className={styles.name} data-label="Name">
                  {t.name}
                  {t.rotated_from !== null ? <span className="muted"> (replaces {t.rotated_from})</span> : null}
                </td>
                <td data-label="Scopes">{t.scopes.join(', ') || <span className="muted">none</span>}</td>
                <td className="nowrap" data-label="Created (UTC)">
                  <Minute seconds={t.created_at} />
                </td>
                <td className="nowrap" data-label="Expires (UTC)">
                  {t.expires_at === null ? <span className="muted">never</span> : <Minute seconds={t.expires_at} />}
                </td>
                <td className="nowrap" data-label="Last used (UTC)">
                  {t.last_used_at === null ? <span className="muted">never</span> : <Minute seconds={t.last_used_at} />}
                </td>
                <td data-label="State">
                  <span className={`${styles.state} ${styles[`state-${t.state}`] ?? ''}`}>{STATE_WORDS[t.state] ?? t.state}</span>
                </td>
                <td data-label="Action">{t.state === 'revoked' ? null : <RevokeToken id={t.id} name={t.name} owner={t.owner} />}</td>
              </tr>
            ))}
          </DataTable>
        )}
      </section>
    </div>
  );
}
