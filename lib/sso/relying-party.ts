/**
 * The relying party: the console's side of OpenID Connect, through `openid-client` (v6). Authorization code with PKCE,
 * state and nonce; the sign-in under way travels in a sealed, HttpOnly cookie (seal.ts), never in the address.
 * Everything here speaks to the provider; what a sign-in means for users and sessions is sign-in.ts's.
 */
import * as oidc from 'openid-client';
import { messageOf } from '@/lib/errors';
import type { SsoProvider } from './config';
import type { Sealer } from './seal';

/** The cookie holding the sign-in under way, sent back only to the callback. */
export const FLOW_COOKIE = 'swarm_sso_flow';
/** How long a person has to sign in at the provider. */
export const FLOW_SECONDS = 10 * 60;

export interface Flow {
  provider: string;
  state: string;
  nonce: string;
  verifier: string;
  next: string;
  /** seconds since the epoch after which the flow is refused */
  expiresAt: number;
}

/** Refusal reasons, as the trail names them (auth.sso.refused). */
export type RefusalReason = 'no_mapped_group' | 'provider_error' | 'state_mismatch' | 'nonce_mismatch' | 'password_login_off' | 'username_taken' | 'no_username';

export type CodeOutcome =
  | {
      ok: true;
      flow: Flow;
      subject: string;
      /** the claims of the ID token, with userinfo's filled in where the ID token lacks them */
      claims: Record<string, unknown>;
      /** the provider's session id (sid), when it gives one: back-channel logout names it */
      sid: string | null;
      idToken: string;
      refreshToken: string | null;
      /** seconds the access token lives: when the session next asks the provider whether it still stands */
      expiresIn: number | null;
    }
  | { ok: false; reason: RefusalReason; message: string };

/** The provider's metadata and client, discovered once per provider version (a reload of sso.yaml discovers anew). */
const configurations = new WeakMap<SsoProvider, Promise<oidc.Configuration>>();

/** http:// is taken only for a provider on this machine (a development or test provider); anything else is https. */
function isLoopback(issuer: string): boolean {
  const host = new URL(issuer).hostname;
  return host === 'localhost' || host === '127.0.0.1' || host === '[::1]';
}

export function configurationOf(provider: SsoProvider): Promise<oidc.Configuration> {
  let found = configurations.get(provider);
  if (!found) {
    const auth = provider.clientSecret !== '' ? oidc.ClientSecretBasic(provider.clientSecret) : oidc.None();
    found = oidc.discovery(new URL(provider.issuer), provider.clientId, undefined, auth, {
      timeout: 10,
      ...(new URL(provider.issuer).protocol === 'http:' && isLoopback(provider.issuer) ? { execute: [oidc.allowInsecureRequests] } : {}),
    });
    // A failed discovery is tried again at the next sign-in, not remembered.
    found.catch(() => configurations.delete(provider));
    configurations.set(provider, found);
  }
  return found;
}

/** Where to send the browser to sign in, and the sealed flow for the cookie. */
export async function beginSignIn(provider: SsoProvider, sealer: Sealer, next: string): Promise<{ url: URL; cookie: string }> {
  const config = await configurationOf(provider);
  const flow: Flow = {
    provider: provider.id,
    state: oidc.randomState(),
    nonce: oidc.randomNonce(),
    verifier: oidc.randomPKCECodeVerifier(),
    next,
    expiresAt: Math.floor(Date.now() / 1000) + FLOW_SECONDS,
  };
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: provider.redirectUri,
    scope: provider.scopes.join(' '),
    code_challenge: await oidc.calculatePKCECodeChallenge(flow.verifier),
    code_challenge_method: 'S256',
    state: flow.state,
    nonce: flow.nonce,
  });
  return { url, cookie: sealer.seal('sso-flow', flow) };
}

function openFlow(sealer: Sealer, cookie: string | undefined, provider: SsoProvider): Flow | null {
  if (!cookie) return null;
  const flow = sealer.open('sso-flow', cookie) as Flow | undefined;
  if (!flow || typeof flow.state !== 'string' || flow.provider !== provider.id || !(flow.expiresAt > Date.now() / 1000)) return null;
  return flow;
}

/** Whether an error of openid-client is its check of the ID token's nonce. */
function isNonceMismatch(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 4; depth++) {
    const c = e as { code?: unknown; cause?: unknown };
    if (c.code === 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' && (c.cause as { claim?: unknown } | undefined)?.claim === 'nonce') return true;
    e = c.cause;
  }
  return false;
}

/**
 * The callback: the flow from the cookie must match the response's state; the code is exchanged with the PKCE verifier;
 * the ID token must carry the flow's nonce. Any other failure (the provider refused, or its answer did not verify) is a
 * provider_error, with its message.
 */
export async function finishSignIn(provider: SsoProvider, sealer: Sealer, callbackUrl: URL, cookie: string | undefined): Promise<CodeOutcome> {
  const flow = openFlow(sealer, cookie, provider);
  const returned = callbackUrl.searchParams.get('state');
  if (!flow || returned === null || returned !== flow.state) {
    return { ok: false, reason: 'state_mismatch', message: flow ? 'The answer from the provider is not for the sign-in this browser started.' : 'This browser has no sign-in under way (it expired after 10 minutes, or cookies are off).' };
  }
  const providerError = callbackUrl.searchParams.get('error');
  if (providerError !== null) {
    const description = callbackUrl.searchParams.get('error_description');
    return { ok: false, reason: 'provider_error', message: `The provider refused the sign-in: ${providerError}${description ? ` (${description.slice(0, 200)})` : ''}.` };
  }
  try {
    const config = await configurationOf(provider);
    // The redirect URI sent with the code is the registered one (openid-client takes it from the address given): the
    // address this server sees may differ behind a proxy (another host name, http instead of https).
    const current = new URL(provider.redirectUri);
    current.search = callbackUrl.search;
    const tokens = await oidc.authorizationCodeGrant(config, current, { pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce });
    const idClaims = tokens.claims();
    if (!idClaims || !tokens.id_token) return { ok: false, reason: 'provider_error', message: 'The provider sent no ID token.' };
    const claims: Record<string, unknown> = { ...idClaims };
    // Groups and names are often only at userinfo (Okta, Entra by default): asked for when the ID token lacks them.
    if (claims[provider.groupsClaim] === undefined || claims[provider.usernameClaim] === undefined) {
      const info = await oidc.fetchUserInfo(config, tokens.access_token, idClaims.sub);
      for (const [k, v] of Object.entries(info)) if (claims[k] === undefined) claims[k] = v;
    }
    return {
      ok: true,
      flow,
      subject: idClaims.sub,
      claims,
      sid: typeof idClaims.sid === 'string' ? idClaims.sid : null,
      idToken: tokens.id_token,
      refreshToken: tokens.refresh_token ?? null,
      expiresIn: tokens.expiresIn() ?? null,
    };
  } catch (error) {
    if (isNonceMismatch(error)) return { ok: false, reason: 'nonce_mismatch', message: 'The provider\'s ID token is not for the sign-in this browser started (its nonce differs).' };
    return { ok: false, reason: 'provider_error', message: `The sign-in could not be completed with the provider: ${providerMessage(error)}` };
  }
}

/** An error of openid-client in words, with the provider's own error code and description when it sent them. */
function providerMessage(error: unknown): string {
  const e = error as { error?: unknown; error_description?: unknown };
  const said = typeof e.error === 'string' ? ` (${e.error}${typeof e.error_description === 'string' ? `: ${e.error_description}` : ''})` : '';
  return `${messageOf(error)}${said}`.slice(0, 300);
}

/** A refresh the provider granted: the new tokens and what it now says of the person. */
export interface RefreshedSession {
  refreshToken: string;
  expiresIn: number | null;
  idToken: string | null;
  /** the refreshed ID token's claims, with userinfo's filled in when it carries no groups (or none came) */
  claims: Record<string, unknown>;
}

/**
 * Ask the provider for fresh tokens: its session still stands, or (an error) it ended. What it says of the person is
 * read again, as at sign-in: the refreshed ID token's claims, or the userinfo endpoint's where the ID token carries no
 * groups (or none came); both must be of `subject`, the person the session was opened for.
 */
export async function refreshSession(provider: SsoProvider, refreshToken: string, subject: string): Promise<RefreshedSession> {
  const config = await configurationOf(provider);
  const tokens = await oidc.refreshTokenGrant(config, refreshToken);
  const idClaims = tokens.claims();
  if (idClaims && idClaims.sub !== subject) throw new Error('the refreshed ID token is of another person (its sub differs)');
  const claims: Record<string, unknown> = { ...(idClaims ?? {}) };
  if (claims[provider.groupsClaim] === undefined) {
    const info = await oidc.fetchUserInfo(config, tokens.access_token, subject);
    for (const [k, v] of Object.entries(info)) if (claims[k] === undefined) claims[k] = v;
  }
  return { refreshToken: tokens.refresh_token ?? refreshToken, expiresIn: tokens.expiresIn() ?? null, idToken: tokens.id_token ?? null, claims };
}

/** The provider's sign-out address for this ID token (RP-initiated logout), or null when it offers none. */
export async function endSessionUrl(provider: SsoProvider, idToken: string, postLogoutRedirectUri: string): Promise<string | null> {
  const config = await configurationOf(provider);
  if (!config.serverMetadata().end_session_endpoint) return null;
  return oidc.buildEndSessionUrl(config, { id_token_hint: idToken, post_logout_redirect_uri: postLogoutRedirectUri, client_id: provider.clientId }).href;
}

/** The value a claim holds as a list of group names (a list, or one string), else empty. */
export function groupsOf(claims: Record<string, unknown>, claim: string): string[] {
  const v = claims[claim];
  if (Array.isArray(v)) return v.filter((g): g is string => typeof g === 'string');
  return typeof v === 'string' ? [v] : [];
}
