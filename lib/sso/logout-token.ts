/**
 * Back-channel logout (OpenID Connect Back-Channel Logout 1.0): the provider posts a signed logout token naming a
 * session (sid) or a person (sub), and the console ends the matching sessions. The token is verified here with
 * node:crypto against the provider's published keys (openid-client v6 verifies ID tokens, not logout tokens):
 * signature, issuer, audience, age, the logout event, a sid or sub, a jti, and no nonce (so an ID token is never taken
 * for one). That a jti is taken once is the caller's (lib/sso/service.ts keeps each until rememberUntil).
 */
import { constants, createPublicKey, verify, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { SsoProvider } from './config';
import { configurationOf } from './relying-party';
import { brand } from '@/lib/errors';

export const LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** How old (by iat) a logout token may be, and how far in the future the provider's clock may be. */
export const LOGOUT_TOKEN_MAX_AGE_SECONDS = 5 * 60;
const SKEW_SECONDS = 60;

export interface LogoutClaims {
  sid: string | null;
  sub: string | null;
  /** the token's id: Back-Channel Logout 1.0 requires one, so that a token is taken once */
  jti: string;
  /** when the provider issued it (seconds since the epoch): it ends no session begun after */
  iat: number;
}

/** Until when a copy of a token issued at `iat` could still be taken (and so until when its jti is kept). */
export const rememberUntil = (claims: Pick<LogoutClaims, 'iat'>): number => claims.iat + LOGOUT_TOKEN_MAX_AGE_SECONDS;

type Verifier = (data: Buffer, key: KeyObject, signature: Buffer) => boolean;
const ALGORITHMS: Record<string, Verifier> = {
  RS256: (d, k, s) => verify('sha256', d, k, s),
  RS384: (d, k, s) => verify('sha384', d, k, s),
  RS512: (d, k, s) => verify('sha512', d, k, s),
  PS256: (d, k, s) => verify('sha256', d, { key: k, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }, s),
  ES256: (d, k, s) => verify('sha256', d, { key: k, dsaEncoding: 'ieee-p1363' }, s),
  ES384: (d, k, s) => verify('sha384', d, { key: k, dsaEncoding: 'ieee-p1363' }, s),
  EdDSA: (d, k, s) => verify(null, d, k, s),
};

export class LogoutTokenError extends Error {
  static readonly kind = 'LogoutTokenError';
  constructor(message: string) {
    super(message);
    brand(this, LogoutTokenError);
  }
}

/** The provider's published keys, per jwks_uri; fetched again when a token names a key not among them. */
const keySets = new Map<string, { at: number; keys: Array<JsonWebKey & { kid?: string; use?: string; alg?: string }> }>();

async function keysOf(jwksUri: string, refresh: boolean): Promise<Array<JsonWebKey & { kid?: string; use?: string; alg?: string }>> {
  const cached = keySets.get(jwksUri);
  // Fetched at most every 30 s, so that tokens naming unknown keys cannot make us hammer the provider.
  if (cached && (!refresh || Date.now() - cached.at < 30_000)) return cached.keys;
  const res = await fetch(jwksUri, { signal: AbortSignal.timeout(10_000), headers: { accept: 'application/json' } });
  if (!res.ok) throw new LogoutTokenError(`the provider's keys could not be fetched (${res.status})`);
  const body = (await res.json()) as { keys?: unknown };
  const keys = Array.isArray(body.keys) ? (body.keys as Array<JsonWebKey & { kid?: string }>) : [];
  keySets.set(jwksUri, { at: Date.now(), keys });
  return keys;
}

const part = (segment: string): Record<string, unknown> => {
  const value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as unknown;
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new LogoutTokenError('a part of the token is not a JSON object');
  return value as Record<string, unknown>;
};

/** Verify a logout token from this provider; throws LogoutTokenError saying what is wrong. */
export async function verifyLogoutToken(provider: SsoProvider, token: string, now = Date.now() / 1000): Promise<LogoutClaims> {
  const segments = token.split('.');
  if (segments.length !== 3) throw new LogoutTokenError('the logout token is not a signed JWT');
  let header: Record<string, unknown>;
  let claims: Record<string, unknown>;
  try {
    header = part(segments[0]!);
    claims = part(segments[1]!);
  } catch {
    throw new LogoutTokenError('the logout token does not decode');
  }
  const alg = typeof header.alg === 'string' ? header.alg : '';
  const check = ALGORITHMS[alg];
  if (!check) throw new LogoutTokenError(`the logout token's algorithm "${alg.slice(0, 20)}" is not taken`);
  const config = await configurationOf(provider);
  const metadata = config.serverMetadata();
  if (!metadata.jwks_uri) throw new LogoutTokenError('the provider publishes no keys');
  const kid = typeof header.kid === 'string' ? header.kid : undefined;
  const pick = (keys: Array<JsonWebKey & { kid?: string; use?: string }>) => keys.filter((k) => (kid === undefined || k.kid === kid) && (k.use === undefined || k.use === 'sig'));
  let candidates = pick(await keysOf(metadata.jwks_uri, false));
  if (candidates.length === 0) candidates = pick(await keysOf(metadata.jwks_uri, true));
  const data = Buffer.from(`${segments[0]}.${segments[1]}`);
  const signature = Buffer.from(segments[2]!, 'base64url');
  const verified = candidates.some((jwk) => {
    try {
      return check(data, createPublicKey({ key: jwk, format: 'jwk' }), signature);
    } catch {
      return false;
    }
  });
  if (!verified) throw new LogoutTokenError('the logout token\'s signature does not verify with the provider\'s keys');

  if (claims.iss !== metadata.issuer) throw new LogoutTokenError('the logout token is from another issuer');
  const aud = claims.aud;
  if (!(aud === provider.clientId || (Array.isArray(aud) && aud.includes(provider.clientId)))) throw new LogoutTokenError('the logout token is for another client');
  const iat = claims.iat;
  if (typeof iat !== 'number' || !Number.isFinite(iat) || iat > now + SKEW_SECONDS || iat < now - LOGOUT_TOKEN_MAX_AGE_SECONDS) throw new LogoutTokenError('the logout token is too old, or from the future');
  if (typeof claims.exp === 'number' && claims.exp < now - SKEW_SECONDS) throw new LogoutTokenError('the logout token has expired');
  const events = claims.events;
  if (!events || typeof events !== 'object' || !(LOGOUT_EVENT in events)) throw new LogoutTokenError('the token carries no back-channel logout event');
  if ('nonce' in claims) throw new LogoutTokenError('a logout token has no nonce (this looks like an ID token)');
  const sid = typeof claims.sid === 'string' ? claims.sid : null;
  const sub = typeof claims.sub === 'string' ? claims.sub : null;
  if (sid === null && sub === null) throw new LogoutTokenError('the logout token names neither a session (sid) nor a person (sub)');
  const jti = claims.jti;
  if (typeof jti !== 'string' || jti === '' || jti.length > 256) throw new LogoutTokenError('the logout token has no jti (its id, which back-channel logout requires)');
  return { sid, sub, jti, iat };
}
