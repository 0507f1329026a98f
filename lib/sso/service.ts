/**
 * Single sign-on for people: what a sign-in through an OpenID Provider means here. Roles come from the person's groups
 * at every sign-in and every refresh (the highest mapped role wins; no mapped group, no entry, and a person known here
 * loses every session); a person first seen is created then,
 * marked with issuer and subject; a session lives at most the configured lifetime and ends as soon as its provider
 * session cannot be refreshed; sign-out ends it on both sides (RP-initiated), and the provider can end it (back-channel).
 * Every outcome is a security event (auth.sso.succeeded, auth.sso.refused, user.created, user.role_changed,
 * auth.logout). The provider's side (discovery, tokens) is relying-party.ts's.
 */
import type { WatchedFile } from '@/lib/config/watched-file';
import type { Recorder } from '@/lib/permissions/recorder';
import { loadBindingKey } from '@/lib/approvals/binding';
import { AppError, messageOf, isError } from '@/lib/errors';
import type { AuthStore, UserRole } from '@/lib/auth/store';
import { sameUserName, USER_NAME_PATTERN } from '@/lib/auth/user-name';
import { roleFromGroups, type SsoConfig, type SsoProvider } from './config';
import { rememberUntil, verifyLogoutToken } from './logout-token';
import { beginSignIn, endSessionUrl, finishSignIn, groupsOf, refreshSession, type RefusalReason } from './relying-party';
import { Sealer } from './seal';

/** A session asks its provider again at most this often, and at least this often (the access token's life between). */
const REFRESH_MIN_SECONDS = 30;
const REFRESH_MAX_SECONDS = 15 * 60;
/** A refresh claimed by a process that then died may be claimed again after this. */
const REFRESH_CLAIM_SECONDS = 60;

export type CallbackOutcome =
  | { ok: true; token: string; expiresAt: number; next: string; username: string; role: UserRole }
  | { ok: false; reason: RefusalReason; provider: string };

const now = () => Date.now() / 1000;

/** What single sign-on needs of the application (lib/server/app.ts passes itself). */
export interface SsoHost {
  readonly ssoFile: WatchedFile<SsoConfig>;
  readonly auth: AuthStore;
  readonly recorder: Recorder;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly options: { readonly dbPath: string };
  /** a compliance profile may turn passwords off but for the break-glass administrator (identity.local_login) */
  readonly profiles: { readonly breakGlassOnly?: { readonly profiles: readonly string[] } };
}

export class SsoService {
  private sealerMemo: Sealer | undefined;

  constructor(private readonly app: SsoHost) {}

  get config(): SsoConfig {
    return this.app.ssoFile.current;
  }

  /** Sealing key for the flow cookie and the stored tokens, derived from the installation's binding key. */
  private get sealer(): Sealer {
    return (this.sealerMemo ??= new Sealer(loadBindingKey(this.app.options.dbPath, this.app.env)));
  }

  provider(id: string): SsoProvider | undefined {
    return this.config.providers.find((p) => p.id === id);
  }

  private providerOrThrow(id: string): SsoProvider {
    const provider = this.provider(id);
    if (!provider) throw new AppError('NOT_FOUND', `There is no single sign-on provider "${id}" in config/sso.yaml.`);
    return provider;
  }

  /** Where the browser goes to sign in with this provider, and the sealed flow its cookie keeps; null: unreachable. */
  async start(providerId: string, next: string, ip: string | undefined): Promise<{ url: string; cookie: string } | null> {
    const provider = this.providerOrThrow(providerId);
    try {
      const { url, cookie } = await beginSignIn(provider, this.sealer, next);
      return { url: url.href, cookie };
    } catch (error) {
      await this.refused(provider, 'provider_error', { message: `The provider could not be reached: ${messageOf(error).slice(0, 300)}` }, ip);
      return null;
    }
  }

  /** The provider sent the browser back: sign the person in, or refuse and say why (recorded either way). */
  async callback(providerId: string, url: URL, cookie: string | undefined, ip: string | undefined): Promise<CallbackOutcome> {
    const provider = this.providerOrThrow(providerId);
    const code = await finishSignIn(provider, this.sealer, url, cookie);
    if (!code.ok) return this.refused(provider, code.reason, { message: code.message }, ip);
    const issuer = provider.issuer;
    const subject = code.subject;
    const groups = groupsOf(code.claims, provider.groupsClaim);
    const claimed = code.claims[provider.usernameClaim];
    const username = typeof claimed === 'string' ? claimed.trim() : '';
    const role = roleFromGroups(provider, groups);
    const known = { subject, username: username.slice(0, 64), groups: groups.slice(0, 50) };
    let user = await this.app.auth.findUserByIdentity(issuer, subject);
    if (role === null) {
      // A person known here who is in no mapped group any more: the sessions still open end now, not at their refresh.
      if (user) await this.endSessionsOf(user.username, provider, 'no_mapped_group', ip);
      return this.refused(provider, 'no_mapped_group', known, ip);
    }
    if (!user) {
      if (!USER_NAME_PATTERN.test(username)) return this.refused(provider, 'no_username', { ...known, claim: provider.usernameClaim }, ip);
      try {
        user = await this.app.auth.createSsoUser(username, role, { issuer, subject }, by(provider));
      } catch (error) {
        // A local user (or another provider's person) has this name, in any case of its letters ("ADMIN" is "admin"):
        // never taken over, nor doubled, by a sign-in elsewhere.
        if (isError(error, AppError) && error.code === 'CONFLICT') return this.refused(provider, 'username_taken', known, ip);
        throw error;
      }
    } else if (user.role !== role) {
      // The role is the groups' of this sign-in: a group change applies now.
      await this.app.auth.setRole(user.username, role, by(provider));
    }
    if (user.disabled) {
      await this.endSessionsOf(user.username, provider, 'the user is disabled here', ip);
      return this.refused(provider, 'provider_error', { ...known, message: 'the user is disabled here' }, ip);
    }
    const at = now();
    const session = await this.app.auth.createSsoSession(
      user.id,
      {
        provider: provider.id,
        issuer,
        subject,
        sid: code.sid,
        sealedRefreshToken: code.refreshToken ? this.sealer.seal('sso-refresh-token', code.refreshToken) : null,
        sealedIdToken: this.sealer.seal('sso-id-token', code.idToken),
        refreshAt: code.refreshToken ? at + refreshAfter(code.expiresIn) : null,
      },
      this.config.sessionLifetimeSeconds,
    );
    await this.app.recorder.record({
      kind: 'auth',
      type: 'auth.sso.succeeded',
      actor: user.username,
      actorRole: role,
      outcome: 'succeeded',
      target: user.username,
      ip: ip ?? null,
      detail: { provider: provider.id, issuer, subject, groups: known.groups, role },
    });
    return { ok: true, token: session.token, expiresAt: session.expiresAt, next: code.flow.next, username: user.username, role };
  }

  /**
   * A session's refresh is due: ask its provider. True when it still stands (or another process is asking right now);
   * false when it ended (the provider refused, its provider left the configuration, the person is in no mapped group
   * any more), and then the session is gone. The groups are read again, as at sign-in: a changed role is set
   * (user.role_changed), no mapped group ends every session of the person (auth.logout, with the reason).
   */
  readonly refresh = async (idHash: string): Promise<boolean> => {
    const session = await this.app.auth.ssoSessionByHash(idHash);
    if (!session || session.refreshAt === null) return session !== undefined;
    if (!(await this.app.auth.claimSsoRefresh(idHash, session.refreshAt, now() + REFRESH_CLAIM_SECONDS))) return true;
    const provider = this.provider(session.provider);
    const refreshToken = session.sealedRefreshToken ? this.sealer.open('sso-refresh-token', session.sealedRefreshToken) : undefined;
    let reason: string;
    if (!provider || provider.issuer !== session.issuer) reason = 'its provider is no longer configured';
    else if (typeof refreshToken !== 'string') reason = 'no refresh token';
    else {
      try {
        const fresh = await refreshSession(provider, refreshToken, session.subject);
        const groups = groupsOf(fresh.claims, provider.groupsClaim);
        const role = roleFromGroups(provider, groups);
        if (role === null) {
          await this.endSessionsOf(session.username, provider, 'no_mapped_group', undefined, { via: 'refresh', groups: groups.slice(0, 50) });
          return false;
        }
        // The role is the groups' of this refresh: a group change applies now, not at the next sign-in.
        if (role !== session.role) await this.app.auth.setRole(session.username, role, by(provider));
        await this.app.auth.refreshedSsoSession(
          idHash,
          this.sealer.seal('sso-refresh-token', fresh.refreshToken),
          fresh.idToken ? this.sealer.seal('sso-id-token', fresh.idToken) : null,
          now() + refreshAfter(fresh.expiresIn),
        );
        return true;
      } catch (error) {
        reason = `the provider did not refresh it: ${messageOf(error).slice(0, 200)}`;
      }
    }
    await this.loggedOut(await this.app.auth.deleteSessionByHash(idHash), 'system', { via: 'refresh', provider: session.provider, reason });
    return false;
  };

  /**
   * Sign-out of a session: where to send the browser to end the provider session too (its end_session_endpoint with
   * the ID token as hint), or null for a password session or a provider without one. The session itself is ended by
   * the caller, as for every session.
   */
  async endSessionUrlFor(sessionToken: string): Promise<string | null> {
    const session = await this.app.auth.ssoSessionOf(sessionToken);
    if (!session) return null;
    const provider = this.provider(session.provider);
    const idToken = session.sealedIdToken ? this.sealer.open('sso-id-token', session.sealedIdToken) : undefined;
    if (!provider || typeof idToken !== 'string' || !this.config.baseUrl) return null;
    try {
      return await endSessionUrl(provider, idToken, `${this.config.baseUrl}/login`);
    } catch (error) {
      // The console's session ends anyway; the provider's is left to it.
      console.error('The provider\'s sign-out address could not be had.', error);
      return null;
    }
  }

  /**
   * The provider says a session (sid) or a person (sub) signed out: end the matching sessions begun before the token
   * was issued (a person who signed in again since keeps the new session). Each token is taken once: its jti is kept
   * for as long as the token could be taken, and a replay is refused (400, recorded as auth.sso.refused).
   */
  async backchannelLogout(providerId: string, logoutToken: string, ip: string | undefined): Promise<{ ended: number }> {
    const provider = this.providerOrThrow(providerId);
    let claims;
    try {
      claims = await verifyLogoutToken(provider, logoutToken);
    } catch (error) {
      throw new AppError('BAD_REQUEST', `The logout token is not valid: ${messageOf(error)}`);
    }
    const ended = await this.app.auth.endSsoSessions(provider.issuer, { jti: claims.jti, keepUntil: rememberUntil(claims), sid: claims.sid, subject: claims.sub, issuedAt: claims.iat });
    if (ended === null) {
      const target = claims.sub ?? claims.sid ?? 'unknown';
      await this.app.recorder.record({
        kind: 'auth',
        type: 'auth.sso.refused',
        actor: by(provider),
        outcome: 'refused',
        target,
        ip: ip ?? null,
        detail: { provider: provider.id, issuer: provider.issuer, reason: 'logout_token_replayed', jti: claims.jti.slice(0, 256), sid: claims.sid, subject: claims.sub },
      });
      throw new AppError('BAD_REQUEST', 'The logout token was taken already (its jti was seen): a replayed logout token is refused.');
    }
    await this.loggedOut(ended, by(provider), { via: 'backchannel', provider: provider.id, issuer: provider.issuer, sid: claims.sid, subject: claims.sub }, ip);
    return { ended: ended.length };
  }

  /**
   * Every session of a person the provider's answer no longer lets in (no mapped group, disabled here) ends, each an
   * auth.logout by the provider with the reason.
   */
  private async endSessionsOf(username: string, provider: SsoProvider, reason: string, ip?: string, detail: Record<string, unknown> = { via: 'sign_in_refused' }): Promise<void> {
    const ended = await this.app.auth.endUserSessions(username);
    await this.loggedOut(ended, by(provider), { ...detail, provider: provider.id, issuer: provider.issuer, reason }, ip);
  }

  /** Sessions ended from the provider's side (a refresh it refused, its back channel): an auth.logout for each. */
  private async loggedOut(usernames: readonly string[], actor: string, detail: Record<string, unknown>, ip?: string): Promise<void> {
    for (const username of usernames) {
      await this.app.recorder.record({ kind: 'auth', type: 'auth.logout', actor, outcome: 'succeeded', target: username, ip: ip ?? null, detail });
    }
  }

  /**
   * Passwords for everyone (password), or only for the break-glass administrator (break_glass): config/sso.yaml's
   * local_login, or a compliance profile's identity.local_login, the stricter winning.
   */
  get localLogin(): 'password' | 'break_glass' {
    return this.config.localLogin === 'break_glass' || this.app.profiles.breakGlassOnly ? 'break_glass' : 'password';
  }

  /**
   * Whether a password may sign this user name in: always, unless passwords are break-glass only and it is not that
   * user. A profile that asks for break-glass while config/sso.yaml names no break_glass_user leaves no password working
   * (closed, never open): `swarm users` on the server still works.
   */
  passwordAllowed(username: string): boolean {
    const glass = this.config.breakGlassUser;
    // compared as every name is (lib/auth/user-name.ts), as the sign-in then looks the user up
    return this.localLogin === 'password' || (glass !== null && sameUserName(glass, username));
  }

  /** Record a refused sign-in (auth.sso.refused); the callback's outcome for it. */
  private async refused(provider: SsoProvider, reason: RefusalReason, detail: Record<string, unknown>, ip: string | undefined): Promise<CallbackOutcome & { ok: false }> {
    const name = typeof detail.username === 'string' && detail.username !== '' ? detail.username : 'unknown';
    await this.app.recorder.record({
      kind: 'auth',
      type: 'auth.sso.refused',
      actor: name,
      outcome: 'refused',
      target: name,
      ip: ip ?? null,
      detail: { provider: provider.id, issuer: provider.issuer, reason, ...detail },
    });
    return { ok: false, reason, provider: provider.id };
  }
}

const by = (provider: SsoProvider) => `sso:${provider.id}`;

/** Seconds until a session asks its provider again: the access token's life, within bounds. */
function refreshAfter(expiresIn: number | null): number {
  return Math.min(REFRESH_MAX_SECONDS, Math.max(REFRESH_MIN_SECONDS, expiresIn ?? REFRESH_MAX_SECONDS));
}

/** What the page a refused person lands on says, per reason (fixed words: nothing from the address is shown). */
export const REFUSAL_TEXT: Record<RefusalReason, string> = {
  no_mapped_group: 'You signed in at your provider, but none of your groups there gives a role in this console. Ask an administrator to add you to one of the groups that config/sso.yaml maps to a role; the change applies at your next sign-in.',
  provider_error: 'The sign-in could not be completed with your provider (it refused, could not be reached, or your user is disabled here). Try again; if it persists, an administrator finds the reason in the audit trail.',
  state_mismatch: 'The answer from your provider did not belong to a sign-in started in this browser (it took over 10 minutes, cookies are off, or it was tampered with). Start again from the sign-in page.',
  nonce_mismatch: 'The identity your provider sent did not belong to this sign-in (its nonce differs), so it was refused. Start again from the sign-in page.',
  password_login_off: 'Passwords are turned off here: sign in through your provider.',
  username_taken: 'A user of this console already has your user name and was not created through this provider, so your sign-in cannot take it over. Ask an administrator.',
  no_username: 'Your provider did not send a usable user name (the claim config/sso.yaml names). Ask an administrator.',
};
