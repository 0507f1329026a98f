/**
 * Test fixture: a real OAuth 2.1 authorization server (the `oidc-provider` package) that issues access tokens for one
 * protected resource in the JWT profile (RFC 9068), audience-bound by resource indicators (RFC 8707), as a company's
 * provider does for an MCP server:
 *
 * - a public client (`mcp-desktop`) for an MCP client that signs a person in: authorization code with PKCE; the test
 *   drives the provider's own login and consent pages;
 * - confidential clients for headless agents: client credentials (`crm-batch`, `unmapped-bot`);
 * - token exchange (RFC 8693) at the token endpoint for `crm-batch`: a person's access token in, a token for the agent
 *   acting for that person out (its `act` claim names the agent);
 * - `mint` signs any claims with the provider's published key (or a key it never published), for the refusals.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, jwtVerify, createLocalJWKSet, SignJWT, type JWK, type JWTPayload } from 'jose';
import Provider, { errors } from 'oidc-provider';

export const AGENT_SCOPE = 'swarm-agent';
export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

export interface OAuthTestProvider {
  issuer: string;
  /** the confidential clients' secret (every one has this) */
  clientSecret: string;
  /** sign claims as the provider would (kid of its published key), or with a key it never published */
  mint(claims: JWTPayload, options?: { unpublished?: boolean; typ?: string; alg?: 'RS256' | 'none' }): Promise<string>;
  /** client credentials for a confidential client, for `resource` */
  clientCredentials(clientId: string, resource: string, scope?: string): Promise<{ status: number; body: Record<string, unknown> }>;
  /** token exchange: the person's access token for a token of `clientId` acting for them */
  exchange(clientId: string, subjectToken: string, resource: string): Promise<{ status: number; body: Record<string, unknown> }>;
  close(): Promise<void>;
}

export interface OAuthTestProviderOptions {
  /** the protected resource (the /mcp address): the only audience tokens are issued for */
  resource: () => string;
  /** where the public client's authorization response goes */
  redirectUri: string;
  /** the people who can sign in (subject = login typed on the provider's page) */
  people: string[];
}

export async function startOAuthTestProvider(options: OAuthTestProviderOptions): Promise<OAuthTestProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://localhost:${(server.address() as AddressInfo).port}`;
  const clientSecret = 'oauth-test-client-secret-0123456789abcdef';
  const kid = `key-${randomUUID().slice(0, 8)}`;
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const rogue = await generateKeyPair('RS256', { extractable: true });
  const privateJwk: JWK = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
  const ownKeys = createLocalJWKSet({ keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'RS256' }] });
  const people = new Set(options.people);

  const confidential = (client_id: string, grants: string[]) => ({
    client_id,
    client_secret: clientSecret,
    grant_types: grants,
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
    scope: AGENT_SCOPE,
  });

  const provider = new Provider(issuer, {
    jwks: { keys: [privateJwk] },
    scopes: ['openid', 'offline_access', AGENT_SCOPE],
    clients: [
      {
        client_id: 'mcp-desktop',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: [options.redirectUri],
      },
      confidential('crm-batch', ['client_credentials', TOKEN_EXCHANGE]),
      confidential('unmapped-bot', ['client_credentials']),
    ],
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => options.resource(),
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, indicator: string) => {
          if (indicator !== options.resource()) throw new errors.InvalidTarget();
          return { scope: AGENT_SCOPE, audience: indicator, accessTokenTTL: 600, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } };
        },
      },
    },
    pkce: { required: () => true },
    async findAccount(_ctx, sub) {
      return people.has(sub) ? { accountId: sub, claims: async () => ({ sub }) } : undefined;
    },
  });
  provider.proxy = false;

  // RFC 8693 token exchange for an agent acting for a person: the subject token must be one of ours, for the resource.
  provider.registerGrantType(
    TOKEN_EXCHANGE,
    async (ctx) => {
      const params = ctx.oidc.params as Record<string, string | undefined>;
      if (params.subject_token_type !== ACCESS_TOKEN_TYPE) throw new errors.InvalidRequest('subject_token_type must be an access token');
      let subject: JWTPayload;
      try {
        ({ payload: subject } = await jwtVerify(params.subject_token ?? '', ownKeys, { issuer, audience: options.resource() }));
      } catch {
        throw new errors.InvalidGrant('the subject token is not valid');
      }
      const client = ctx.oidc.client!.clientId;
      const now = Math.floor(Date.now() / 1000);
      const token = await new SignJWT({ client_id: client, scope: AGENT_SCOPE, act: { sub: client } })
        .setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt' })
        .setIssuer(issuer)
        .setSubject(String(subject.sub))
        .setAudience(params.resource ?? options.resource())
        .setIssuedAt(now)
        .setExpirationTime(now + 600)
        .setJti(randomUUID())
        .sign(privateKey);
      ctx.body = { access_token: token, issued_token_type: ACCESS_TOKEN_TYPE, token_type: 'Bearer', expires_in: 600, scope: AGENT_SCOPE };
    },
    ['subject_token', 'subject_token_type', 'resource', 'scope', 'audience', 'actor_token', 'actor_token_type', 'requested_token_type'],
  );
  server.on('request', provider.callback());
  provider.on('grant.error', (_ctx: unknown, error: unknown) => console.error('oauth test provider: token request refused:', error));

  const tokenRequest = async (clientId: string, form: Record<string, string>) => {
    const response = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}` },
      body: new URLSearchParams(form).toString(),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  return {
    issuer,
    clientSecret,
    async mint(claims, mintOptions = {}) {
      if (mintOptions.alg === 'none') {
        const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
        return `${part({ alg: 'none', typ: mintOptions.typ ?? 'at+jwt' })}.${part(claims)}.`;
      }
      return new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: mintOptions.unpublished ? `${kid}-other` : kid, typ: mintOptions.typ ?? 'at+jwt' })
        .sign(mintOptions.unpublished ? rogue.privateKey : privateKey);
    },
    clientCredentials: (clientId, resource, scope = AGENT_SCOPE) => tokenRequest(clientId, { grant_type: 'client_credentials', resource, scope }),
    exchange: (clientId, subjectToken, resource) =>
      tokenRequest(clientId, { grant_type: TOKEN_EXCHANGE, subject_token: subjectToken, subject_token_type: ACCESS_TOKEN_TYPE, resource, scope: AGENT_SCOPE }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
