/**
 * Test fixture: a real OpenID Provider (the `oidc-provider` package) on a free loopback port, with people and groups
 * of its own. Its login page is the package's development page (any password is taken; the login names the account),
 * consent is given at once for the one client (a first-party application asks no one), and it offers RP-initiated
 * logout and back-channel logout as a company's provider would. Tests change a person's groups between sign-ins.
 */
import { createSign, generateKeyPairSync, randomUUID, type JsonWebKey } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export interface TestPerson {
  /** the subject the provider gives (and the login typed on its page) */
  sub: string;
  preferred_username: string;
  email?: string;
  groups: string[];
}

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** the people the provider knows; change a person's groups and the next sign-in carries them */
  people: Map<string, TestPerson>;
  /** end every provider session of a subject (as when the company signs a person out), so refreshing fails */
  revokeGrants(sub: string): Promise<number>;
  /**
   * The provider posts a logout token of its own making (sub, and sid: the client requires it) to the relying party's
   * back-channel logout URI; resolves with the token it sent, once the relying party answered 200.
   */
  backchannelLogout(sub: string, sid: string): Promise<string>;
  /** every logout token the provider posted, oldest first */
  readonly logoutTokens: readonly string[];
  /**
   * A logout token signed with the provider's own key (the one its jwks_uri publishes): iss, aud, iat (now), a jti and
   * the logout event, with `claims` over them (a claim given as undefined is left out), for the tokens a provider's
   * own flows do not make (no sid, another iat, no jti).
   */
  signLogoutToken(claims: Record<string, unknown>): string;
  close(): Promise<void>;
}

export interface TestProviderOptions {
  /** where the relying party takes its authorization response */
  redirectUris: string[];
  postLogoutRedirectUris?: string[];
  /** the relying party's back-channel logout route, when it offers one */
  backchannelLogoutUri?: string;
  people: TestPerson[];
  port?: number;
  clientId?: string;
  clientSecret?: string;
  /** seconds an access token lives (the relying party refreshes after) */
  accessTokenTtl?: number;
  /**
   * The person's claims (name, groups) only at the userinfo endpoint, none in the ID token, as Okta and Entra do by
   * default (default: in the ID token too)
   */
  claimsAtUserinfo?: boolean;
}

/** Start the provider; resolves once it listens. */
export async function startTestProvider(options: TestProviderOptions): Promise<TestProvider> {
  const people = new Map(options.people.map((p) => [p.sub, { ...p }]));
  const clientId = options.clientId ?? 'swarm-console';
  const clientSecret = options.clientSecret ?? 'test-client-secret-0123456789abcdef';
  /** grant id → subject: the in-memory adapter lists nothing, so the grants given are kept here to revoke them */
  const grants = new Map<string, string>();
  // The provider's signing key, made here so that a test can sign what the provider's own flows do not make.
  const kid = 'test-provider-signing-key';
  const signingKey = { ...(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }) as JsonWebKey), kid, use: 'sig', alg: 'RS256' };
  const logoutTokens: string[] = [];
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://localhost:${port}`;

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        post_logout_redirect_uris: options.postLogoutRedirectUris ?? [],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        ...(options.backchannelLogoutUri ? { backchannel_logout_uri: options.backchannelLogoutUri, backchannel_logout_session_required: true } : {}),
      },
    ],
    claims: { openid: ['sub'], profile: ['preferred_username', 'name'], email: ['email'], groups: ['groups'] },
    scopes: ['openid', 'offline_access', 'profile', 'email', 'groups'],
    features: {
      devInteractions: { enabled: true },
      rpInitiatedLogout: { enabled: true },
      backchannelLogout: { enabled: true },
    },
    pkce: { required: () => true },
    jwks: { keys: [signingKey] },
    // The provider refuses to post to loopback addresses (its guard against SSRF); the test's relying party is on one.
    // The logout tokens it posts are kept, so that a test can send one again.
    fetch: (url, options) => {
      const body = (options as { body?: unknown }).body;
      if (body instanceof URLSearchParams && body.has('logout_token')) logoutTokens.push(body.get('logout_token')!);
      return globalThis.fetch(url, { ...options, dispatcher: undefined } as RequestInit);
    },
    ttl: { AccessToken: options.accessTokenTtl ?? 3600, IdToken: 3600, RefreshToken: 86400, Session: 86400, Grant: 86400, Interaction: 600 },
    // Claims in the ID token too (not only at userinfo): the relying party reads groups from the ID token; with
    // claimsAtUserinfo, only at userinfo (the ID token of a code flow then carries none).
    conformIdTokenClaims: options.claimsAtUserinfo === true,
    // Every sign-in may refresh (no consent prompt for offline_access on a first-party client).
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    async findAccount(_ctx, sub) {
      const person = people.get(sub);
      if (!person) return undefined;
      return { accountId: sub, claims: async () => ({ sub, preferred_username: person.preferred_username, name: person.preferred_username, email: person.email, groups: [...person.groups] }) };
    },
    // Consent for the console is given at once: the grant holds every scope and claim asked for.
    async loadExistingGrant(ctx) {
      const client = ctx.oidc.client;
      const session = ctx.oidc.session;
      const accountId = session?.accountId;
      if (!client || !session || !accountId) return undefined;
      const existing = session.grantIdFor(client.clientId);
      if (existing) {
        const grant = await ctx.oidc.provider.Grant.find(existing);
        if (grant) {
          grants.set(grant.jti, accountId);
          return grant;
        }
      }
      const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId });
      grant.addOIDCScope('openid offline_access profile email groups');
      grant.addOIDCClaims(['preferred_username', 'name', 'email', 'groups']);
      await grant.save();
      session.grantIdFor(client.clientId, grant.jti);
      grants.set(grant.jti, accountId);
      return grant;
    },
  });
  // The test server speaks plain HTTP on loopback.
  provider.proxy = false;
  server.on('request', provider.callback());
  // A back-channel logout the relying party refused is a test failure to see, not a silence.
  provider.on('backchannel.error', (...args: unknown[]) => console.error('test provider: back-channel logout failed', ...args));
  provider.on('grant.error', (_ctx: unknown, error: unknown) => console.error('test provider: token request refused:', error));

  return {
    issuer,
    clientId,
    clientSecret,
    people,
    async revokeGrants(sub: string) {
      let count = 0;
      for (const [grantId, owner] of grants) {
        if (owner !== sub) continue;
        await provider.RefreshToken.revokeByGrantId(grantId);
        await provider.AccessToken.revokeByGrantId(grantId);
        count++;
      }
      return count;
    },
    logoutTokens,
    async backchannelLogout(sub: string, sid: string) {
      const client = await provider.Client.find(clientId);
      if (!client) throw new Error(`the test provider has no client ${clientId}`);
      const before = logoutTokens.length;
      await client.backchannelLogout(sub, sid);
      const sent = logoutTokens[before];
      if (!sent) throw new Error('the provider posted no logout token');
      return sent;
    },
    signLogoutToken(claims: Record<string, unknown>) {
      const payload: Record<string, unknown> = {
        iss: issuer,
        aud: clientId,
        iat: Math.floor(Date.now() / 1000),
        jti: randomUUID(),
        events: { 'http://schemas.openid.net/event/backchannel-logout': {} },
      };
      for (const [k, v] of Object.entries(claims)) {
        if (v === undefined) delete payload[k];
        else payload[k] = v;
      }
      const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
      const signed = `${part({ alg: 'RS256', kid, typ: 'logout+jwt' })}.${part(payload)}`;
      return `${signed}.${createSign('sha256').update(signed).sign({ key: signingKey, format: 'jwk' }).toString('base64url')}`;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
