/**
 * Agents signed in by the company's identity provider: `/mcp`, the check API, batch and AuthZEN accept an OAuth 2.1
 * access token in the JWT profile (RFC 9068) from an issuer of config/sso.yaml's `agent_tokens`, beside our own tokens.
 *
 * A token counts only when all of these hold (each refusal says which did not, and is recorded as auth.token.refused):
 * - its issuer is one configured, exactly (iss);
 * - its signature verifies with a key the issuer publishes (its metadata's jwks_uri, or the configured one; a key it
 *   does not know makes the set be fetched again, at most every 30 s, so the provider's rotation is followed); only
 *   asymmetric algorithms, never `none` nor a shared secret;
 * - its type is `at+jwt` (unless the issuer says token_type: any), it has expired not (exp, required), is valid already
 *   (nbf), with 30 s of clock skew;
 * - its audience is this resource (RFC 8707): a token for any other audience is refused, whoever issued it;
 * - it carries every scope the issuer's entry asks for (scope, or scp);
 * - its client (client_id; else azp, appid or cid; or the configured claim) is mapped to an agent of
 *   config/agents.yaml: an unmapped client is refused, and the answer says where to map it.
 *
 * The principal is that agent (its allowlist decides, as for our own agent tokens), acting for the person the token
 * names when it names one: a token exchanged for a person (RFC 8693, with an `act` claim), or one a person's sign-in
 * gave the client (its subject is not the client's own). A client's own token (client credentials) acts for nobody.
 * The token is never passed on: the gateway's upstreams get their own headers (config/mcp.yaml).
 */
import { createRemoteJWKSet, decodeJwt, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { messageOf } from '@/lib/errors';
import type { Principal, Recorder } from '@/lib/permissions';
import type { AgentTokenIssuer, SsoConfig } from '@/lib/sso/config';

/** The asymmetric algorithms an access token may be signed with (never `none`, never HS*: the key is public). */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
const CLOCK_SKEW_SECONDS = 30;
/** An issuer's metadata (where its keys are) is asked again after this; a failure after a few seconds. */
const METADATA_TTL_MS = 60 * 60 * 1000;
const METADATA_RETRY_MS = 5_000;
const FETCH_TIMEOUT_MS = 5_000;

/** A compact JWS: three base64url parts, the first a JSON header (our own tokens never look like this). */
export function looksLikeJwt(secret: string): boolean {
  return /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(secret);
}

export type AgentTokenOutcome =
  | { ok: true; principal: Principal; issuer: string; client: string; person: string | null }
  | { ok: false; reason: string; issuer: string | null; client: string | null };

export interface AgentTokenHost {
  readonly ssoFile: { readonly current: SsoConfig };
  /** whether config/agents.yaml has this agent */
  hasAgent(name: string): boolean;
  /** the trail: a refused token is an auth.token.refused event */
  readonly recorder: Pick<Recorder, 'record'>;
}

interface IssuerKeys {
  jwks: JWTVerifyGetKey;
  /** when the metadata is to be asked again (ms) */
  until: number;
  jwksUri: string;
}

export class AgentTokens {
  private readonly keys = new Map<string, IssuerKeys | Promise<IssuerKeys>>();
  private readonly failedAt = new Map<string, { at: number; error: string }>();

  constructor(
    private readonly host: AgentTokenHost,
    private readonly options: {
      /** how soon after fetching the keys a token with an unknown key makes them be fetched again (ms; default 30 s) */
      keyCooldownMs?: number;
    } = {},
  ) {}

  /** The configuration in force, or null when no issuer is configured (then no JWT is accepted). */
  get config(): SsoConfig['agentTokens'] {
    return this.host.ssoFile.current.agentTokens;
  }

  /**
   * The principal of a JWT access token, or undefined when it is refused: then the refusal is recorded
   * (auth.token.refused, with the reason, the issuer and the client) and `why` hears the reason, for the 401's words.
   */
  async principal(token: string, ip: string | undefined, why?: (reason: string) => void): Promise<Principal | undefined> {
    const outcome = await this.verify(token);
    if (outcome.ok) return outcome.principal;
    why?.(outcome.reason);
    const actor = outcome.client ? `client:${outcome.client.slice(0, 100)}` : 'unknown';
    await this.host.recorder.record({
      kind: 'auth',
      type: 'auth.token.refused',
      actor,
      outcome: 'refused',
      target: 'access token',
      ip: ip ?? null,
      detail: { reason: outcome.reason, issuer: outcome.issuer, client: outcome.client },
    });
    return undefined;
  }

  /** Who a JWT access token names, or why it is refused. */
  async verify(token: string): Promise<AgentTokenOutcome> {
    const config = this.config;
    let unverified: JWTPayload;
    try {
      unverified = decodeJwt(token);
    } catch {
      return refused('the bearer token is not a JWT this server can read', null, null);
    }
    const claimedIssuer = typeof unverified.iss === 'string' ? unverified.iss : null;
    if (!config) return refused('this server takes no access tokens from an identity provider (config/sso.yaml has no agent_tokens)', claimedIssuer, null);
    const issuer = config.issuers.find((i) => i.issuer === claimedIssuer);
    if (!issuer) return refused(`the token's issuer ${JSON.stringify(claimedIssuer ?? '(none)')} is not one of config/sso.yaml's agent_tokens issuers`, claimedIssuer, null);
    let keys: IssuerKeys;
    try {
      keys = await this.keysOf(issuer);
    } catch (error) {
      return refused(`the keys of ${issuer.issuer} could not be had (${messageOf(error)})`, issuer.issuer, null);
    }
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys.jwks, {
        issuer: issuer.issuer,
        audience: config.resource,
        algorithms: ALGORITHMS,
        clockTolerance: CLOCK_SKEW_SECONDS,
        requiredClaims: ['exp'],
        ...(issuer.tokenType === 'at+jwt' ? { typ: 'at+jwt' } : {}),
      }));
    } catch (error) {
      return refused(whyRefused(error, config.resource), issuer.issuer, clientOf(unverified, issuer));
    }
    const client = clientOf(payload, issuer);
    if (!client) return refused(`the token names no client (${issuer.clientClaim ?? 'client_id, azp, appid or cid'})`, issuer.issuer, null);
    const granted = scopesOf(payload);
    const missing = issuer.scopes.filter((s) => !granted.has(s));
    if (missing.length > 0) return refused(`the token lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')} that config/sso.yaml asks of ${issuer.issuer}`, issuer.issuer, client);
    const agent = issuer.agents.get(client);
    if (!agent) {
      return refused(
        `the client "${client}" of ${issuer.issuer} is not mapped to an agent: add it under that issuer's agents in config/sso.yaml (at ${issuer.position.split('/').pop()}), as "${client}: <agent of config/agents.yaml>"`,
        issuer.issuer,
        client,
      );
    }
    if (!this.host.hasAgent(agent)) return refused(`the client "${client}" is mapped to the agent "${agent}", which config/agents.yaml does not have`, issuer.issuer, client);
    const person = personOf(payload, issuer, client);
    const principal: Principal = { kind: 'agent', id: agent, role: 'viewer', agent, scopes: ['decide'], ...(person ? { onBehalfOf: person } : {}) };
    return { ok: true, principal, issuer: issuer.issuer, client, person };
  }

  /** The issuer's published keys, found through its metadata (kept an hour; a failure is asked again after 5 s). */
  private async keysOf(issuer: AgentTokenIssuer): Promise<IssuerKeys> {
    const held = this.keys.get(issuer.issuer);
    if (held && !(held instanceof Promise) && held.until > Date.now()) return held;
    if (held instanceof Promise) return held;
    const failed = this.failedAt.get(issuer.issuer);
    if (failed && Date.now() - failed.at < METADATA_RETRY_MS) throw new Error(failed.error);
    const finding = (async (): Promise<IssuerKeys> => {
      const jwksUri = issuer.jwksUri ?? (await this.discoverJwksUri(issuer.issuer));
      // The same key set is kept when the metadata still names it (its cache of keys and their rotation go on).
      const previous = held && !(held instanceof Promise) && held.jwksUri === jwksUri ? held.jwks : undefined;
      const jwks = previous ?? createRemoteJWKSet(new URL(jwksUri), { timeoutDuration: FETCH_TIMEOUT_MS, cooldownDuration: this.options.keyCooldownMs ?? 30_000, cacheMaxAge: 10 * 60_000 });
      return { jwks, jwksUri, until: Date.now() + METADATA_TTL_MS };
    })();
    this.keys.set(issuer.issuer, finding);
    try {
      const found = await finding;
      this.keys.set(issuer.issuer, found);
      this.failedAt.delete(issuer.issuer);
      return found;
    } catch (error) {
      this.keys.delete(issuer.issuer);
      this.failedAt.set(issuer.issuer, { at: Date.now(), error: messageOf(error) });
      throw error;
    }
  }

  /** OpenID Connect Discovery, else RFC 8414's well-known address (with the issuer's path after it). */
  private async discoverJwksUri(issuer: string): Promise<string> {
    const url = new URL(issuer);
    const path = url.pathname.replace(/\/+$/, '');
    const candidates = [`${url.origin}${path}/.well-known/openid-configuration`, `${url.origin}/.well-known/oauth-authorization-server${path}`];
    const problems: string[] = [];
    for (const candidate of candidates) {
      try {
        const response = await fetch(candidate, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: 'error' });
        if (!response.ok) {
          problems.push(`${candidate}: HTTP ${response.status}`);
          continue;
        }
        const metadata = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
        // RFC 8414 §3.3: the metadata must name the issuer it was asked for, or it is not used.
        if (metadata.issuer !== issuer) {
          problems.push(`${candidate} names the issuer ${JSON.stringify(metadata.issuer)}`);
          continue;
        }
        if (typeof metadata.jwks_uri !== 'string') {
          problems.push(`${candidate} has no jwks_uri`);
          continue;
        }
        return metadata.jwks_uri;
      } catch (error) {
        problems.push(`${candidate}: ${messageOf(error)}`);
      }
    }
    throw new Error(`no usable metadata (${problems.join('; ')})`);
  }
}

function refused(reason: string, issuer: string | null, client: string | null): AgentTokenOutcome {
  return { ok: false, reason, issuer, client };
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

function clientOf(claims: JWTPayload, issuer: AgentTokenIssuer): string | null {
  if (issuer.clientClaim) return str(claims[issuer.clientClaim]);
  return str(claims.client_id) ?? str(claims.azp) ?? str(claims.appid) ?? str(claims.cid);
}

function scopesOf(claims: JWTPayload): Set<string> {
  const out = new Set<string>();
  const add = (v: unknown) => {
    const list: unknown[] = typeof v === 'string' ? v.split(' ') : Array.isArray(v) ? v : [];
    for (const s of list) if (typeof s === 'string' && s !== '') out.add(s);
  };
  add(claims.scope);
  add(claims.scp);
  return out;
}

/**
 * The person a token acts for, or null for a client acting on its own. A token with an `act` claim (RFC 8693) acts for
 * its subject; so does one whose subject is not the client itself. The client's own token is known by its subject
 * being the client (RFC 9068, Okta), Entra ID's `idtyp: app`, or Keycloak's service-account user name.
 */
function personOf(claims: JWTPayload, issuer: AgentTokenIssuer, client: string): string | null {
  const sub = str(claims.sub);
  const acting = claims.act !== undefined && claims.act !== null && typeof claims.act === 'object';
  if (!acting) {
    if (sub === null || sub === client) return null;
    if (claims.idtyp === 'app') return null;
    const username = str(claims.preferred_username);
    if (username !== null && username.startsWith('service-account-')) return null;
  }
  const person = str(claims[issuer.personClaim]) ?? sub;
  return person === null ? null : person.slice(0, 200);
}

/**
 * Why jose refused a token, in words an operator can act on. By the errors' codes, not their classes: a class may
 * exist twice in the built server's bundles.
 */
function whyRefused(error: unknown, resource: string): string {
  const e = error as { code?: unknown; claim?: unknown; reason?: unknown };
  switch (e.code) {
    case 'ERR_JWT_EXPIRED':
      return 'the token has expired';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (e.claim === 'aud') return `the token is not for this resource: its audience is not ${resource}`;
      if (e.claim === 'nbf') return 'the token is not valid yet (nbf)';
      if (e.claim === 'iss') return 'the token names another issuer';
      if (e.claim === 'exp') return 'the token has no expiry (exp)';
      if (e.claim === 'typ') return 'the token is not an access token (its type is not at+jwt)';
      return `the token's ${String(e.claim)} claim is not valid (${String(e.reason)})`;
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
    case 'ERR_JOSE_NOT_SUPPORTED':
      return 'the token is signed with an algorithm this server does not take (none and shared secrets never are)';
    case 'ERR_JWKS_NO_MATCHING_KEY':
      return 'the token is signed with a key its issuer does not publish';
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return "the token's signature does not verify";
    case 'ERR_JWKS_TIMEOUT':
      return "the issuer's keys could not be fetched in time";
    default:
      return `the token could not be verified (${messageOf(error).slice(0, 200)})`;
  }
}
