import { fileStatusJson } from '@/lib/config/watched-file';
import { durationWords } from '@/lib/config/duration-words';
import { displayFile, withoutPaths } from '@/lib/reports/paths';
import { SSO_ROLES, ssoConfigJson, type SsoConfig } from '@/lib/sso/config';
import type { WatchedFileStatus } from '@/lib/config/watched-file';
import { FileStatus } from './rule-sources';
import styles from './transparency.module.css';

/**
 * Single sign-on on /transparency: config/sso.yaml's providers, the groups that give each role, and whether passwords
 * still work. No secret is shown, only the name of the variable that holds it; no host path either (the page is
 * printed and shared).
 */
export function SingleSignOn({ config, status, localLogin, byProfiles }: { config: SsoConfig; status: WatchedFileStatus; localLogin: 'password' | 'break_glass'; byProfiles: readonly string[] }) {
  const file = fileStatusJson(status);
  const shownFile = { ...file, path: displayFile(file.path), error: file.error ? withoutPaths(file.error) : null };
  const sso = ssoConfigJson(config);
  return (
    <>
      <p className={styles.sectionLead}>
        People sign in through these OpenID Connect providers; their role is taken from their groups at every sign-in (the highest
        mapped role wins), and a person in no mapped group is refused. Sessions last at most {durationWords(sso.session_lifetime_seconds)} and end
        when the provider no longer refreshes them.
      </p>
      <FileStatus file={shownFile} what="Single sign-on configuration" missingMeans="No single sign-on: people sign in with passwords." />
      <dl className={styles.fileStatus} aria-label="Passwords">
        <dt>Passwords</dt>
        <dd data-testid="sso-local-login">
          {localLogin === 'break_glass' ? (
            <>
              off for everyone but the break-glass administrator{' '}
              {sso.break_glass_user ? <code>{sso.break_glass_user}</code> : <strong>(none named in config/sso.yaml: no password works)</strong>}, whose every
              sign-in is recorded (auth.break_glass, on /audit)
              {byProfiles.length > 0 ? <> · asked by the compliance profile {byProfiles.join(', ')}</> : null}
            </>
          ) : (
            'on for every user with a password (users created through single sign-on never have one)'
          )}
        </dd>
      </dl>
      {sso.providers.length === 0 ? null : (
        <div className={`table-wrap ${styles.wrap}`} role="region" aria-label="Single sign-on providers" tabIndex={0}>
          <table className={`table ${styles.ssoTable}`}>
            <thead>
              <tr>
                <th scope="col">Provider</th>
                <th scope="col">Issuer and client</th>
                <th scope="col">Claims</th>
                <th scope="col">Roles from groups</th>
              </tr>
            </thead>
            <tbody>
              {sso.providers.map((p) => (
                <tr key={p.id} data-testid={`sso-provider-${p.id}`}>
                  <td>
                    <strong>{p.name}</strong>
                    <div className="muted">
                      <code>{p.id}</code> · {displayFile(p.position)}
                    </div>
                  </td>
                  <td>
                    <code>{p.issuer}</code>
                    <div>
                      client <code>{p.client_id}</code>
                      {p.client_secret_env ? (
                        <>
                          , secret from <code>{p.client_secret_env}</code>
                        </>
                      ) : (
                        ', public client (PKCE only)'
                      )}
                    </div>
                    <div className="muted">scopes {p.scopes.join(' ')}</div>
                  </td>
                  <td>
                    groups: <code>{p.groups_claim}</code>
                    <div>
                      user name: <code>{p.username_claim}</code>
                    </div>
                  </td>
                  <td>
                    <ul className={styles.plainList}>
                      {SSO_ROLES.filter((r) => p.roles[r]!.length > 0).map((r) => (
                        <li key={r}>
                          <strong>{r}</strong>: {p.roles[r]!.join(', ')}
                        </li>
                      ))}
                    </ul>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {sso.agent_tokens === null ? null : (
        <>
          <p className={styles.sectionLead}>
            Agents may also present an access token of these issuers, for <code>{sso.agent_tokens.resource}</code> (its audience). The token&apos;s client
            names the agent; a token that acts for a person names that person on every row the call makes.
          </p>
          <div className={`table-wrap ${styles.wrap}`} role="region" aria-label="Agent access tokens" tabIndex={0}>
            <table className={`table ${styles.ssoTable}`}>
              <thead>
                <tr>
                  <th scope="col">Issuer</th>
                  <th scope="col">Required scopes</th>
                  <th scope="col">Client → agent</th>
                </tr>
              </thead>
              <tbody>
                {sso.agent_tokens.issuers.map((i) => (
                  <tr key={i.issuer} data-testid="agent-token-issuer">
                    <td>
                      <code>{i.issuer}</code>
                      <div className="muted">
                        {displayFile(i.position)} · person from <code>{i.person_claim}</code> · type {i.token_type}
                      </div>
                    </td>
                    <td>{i.scopes.length > 0 ? i.scopes.join(' ') : <span className="muted">none</span>}</td>
                    <td>
                      <ul className={styles.plainList}>
                        {Object.entries(i.agents).map(([client, agent]) => (
                          <li key={client}>
                            <code>{client}</code> → <strong>{agent}</strong>
                          </li>
                        ))}
                      </ul>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </>
  );
}
