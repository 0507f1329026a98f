/**
 * Agents signed in by the company's identity provider (issue 42): `/mcp` as an OAuth 2.1 protected resource, and the
 * check API and AuthZEN taking the same access tokens, against a real authorization server (oidc-provider with
 * resource indicators and JWT access tokens: lib/test-support/oauth-provider.ts).
 *
 * - The MCP SDK's own client OAuth support does the whole flow: the 401, the protected-resource metadata, the
 *   authorization server's metadata, an authorization code with PKCE (the provider's login page driven by the test),
 *   the token for this resource; then it lists and calls tools as the mapped agent, for the person who signed in.
 * - A headless agent by client credentials; an agent acting for a person by token exchange (RFC 8693): both named.
 * - Each way a token is wrong is refused 401 with WWW-Authenticate and recorded with its reason.
 * - The inbound token never reaches an upstream: an HTTP upstream of the test sees only its own header.
 */
import { createServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTempServerEnv } from './support/in-process-api';
import { REPO_ROOT } from '@/lib/test-support/cli';
import { within } from '@/lib/test-support/wait';
import { AGENT_SCOPE, startOAuthTestProvider, type OAuthTestProvider } from '@/lib/test-support/oauth-provider';

const server = useTempServerEnv('agent-tokens', { policy: 'empty', env: { UPSTREAM_AUTHORIZATION: 'Bearer the-upstreams-own-secret' } });
const config = join(server.dir, 'config');
const EVERYTHING = join(REPO_ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const REDIRECT = 'http://127.0.0.1:9/oauth/callback';

// An upstream over Streamable HTTP that keeps every Authorization header it is sent.
const upstreamAuthorizations: string[] = [];
const upstream: HttpServer = createServer((req, res) => {
  void (async () => {
    upstreamAuthorizations.push(req.headers.authorization ?? '(none)');
    const mcp = new McpServer({ name: 'crm-upstream', version: '1' });
    mcp.registerTool('lookup', { description: 'Looks a customer up.' }, async () => ({ content: [{ type: 'text', text: 'customer 42' }] }));
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await mcp.connect(transport);
    const response = await transport.handleRequest(webRequest(req));
    res.writeHead(response.status, Object.fromEntries(response.headers)).end(Buffer.from(await response.arrayBuffer()));
  })().catch(() => res.writeHead(500).end());
});
await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`;

function webRequest(req: IncomingMessage): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
  const bodyless = req.method === 'GET' || req.method === 'HEAD';
  return new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers, body: bodyless ? undefined : (Readable.toWeb(req) as ReadableStream<Uint8Array>), duplex: 'half' } as RequestInit);
}

const { createRouteServer } = await import('./support/route-server');
const routes = createRouteServer();
await new Promise<void>((r) => routes.listen(0, '127.0.0.1', () => r()));
const base = `http://127.0.0.1:${(routes.address() as AddressInfo).port}`;
const resource = `${base}/mcp`;

const op: OAuthTestProvider = await startOAuthTestProvider({ resource: () => resource, redirectUri: REDIRECT, people: ['alice', 'bob'] });

writeFileSync(
  join(config, 'sso.yaml'),
  `base_url: ${base}
agent_tokens:
  issuers:
    - issuer: ${op.issuer}
      scopes: [${AGENT_SCOPE}]
      agents:
        mcp-desktop: desk
        crm-batch: crm
`,
);
writeFileSync(
  join(config, 'agents.yaml'),
  `agents:
  desk:
    tools: [everything__echo, everything__get-sum, crm__lookup]
  crm:
    tools: [lookup_customer, close_account]
`,
);
writeFileSync(
  join(config, 'gates.yaml'),
  `gates:
  - id: sums
    tools: [everything__get-sum]
  - id: closing
    tools: [close_account]
`,
);
writeFileSync(
  join(config, 'mcp.yaml'),
  `servers:
  - id: everything
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(EVERYTHING)}, stdio]
    on_ask: return
  - id: crm
    url: ${upstreamUrl}
    headers: { Authorization: UPSTREAM_AUTHORIZATION }
`,
);

writeFileSync(
  join(config, 'permission_policies.yaml'),
  `rules:
  - id: bob-reads-no-customers
    decision: DENY
    priority: 900
    reason: Bob's agents do not look customers up.
    when: "principal.on_behalf_of == 'bob'"
    match: { tool: lookup_customer }
`,
);
writeFileSync(join(config, 'policy_tests.yaml'), 'tests: []\n');

const { getSqliteApp } = await import('@/lib/app');
const app = getSqliteApp();

afterAll(async () => {
  const { currentMcpEndpoint } = await import('@/lib/mcp/http');
  await currentMcpEndpoint()?.close();
  routes.closeAllConnections();
  upstream.closeAllConnections();
  await Promise.all([new Promise((r) => routes.close(r)), new Promise((r) => upstream.close(r)), op.close()]);
  app.close();
  server.remove();
});

/** An MCP client's OAuth state, as a desktop client keeps it; the authorization URL is handed to the test's "browser". */
class DesktopAuth implements OAuthClientProvider {
  authorizationUrl: URL | undefined;
  private saved: OAuthTokens | undefined;
  private verifier = '';
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { redirect_uris: [REDIRECT], client_name: 'Desktop', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation(): OAuthClientInformationMixed {
    return { client_id: 'mcp-desktop' };
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/**
 * The person signs in on the provider's own page and gives consent on its consent page (the test reads what it asks);
 * returns the code the provider sends back, and what the consent page said.
 */
async function authorizeInBrowser(url: URL, login: string): Promise<{ code: string; consent: string }> {
  const cookies = new Map<string, string>();
  const go = async (target: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    headers.set('cookie', [...cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const r = await fetch(target, { ...init, headers, redirect: 'manual' });
    for (const c of r.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair!.indexOf('=');
      cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    return r;
  };
  let at = url.href;
  let consent = '';
  for (let hops = 0; hops < 12; hops++) {
    if (at.startsWith(REDIRECT)) {
      const back = new URL(at);
      expect(back.searchParams.get('error'), back.searchParams.get('error_description') ?? '').toBeNull();
      return { code: back.searchParams.get('code')!, consent };
    }
    const r = await go(at);
    if (r.status === 200) {
      const html = await r.text();
      const action = /action="([^"]+)"/.exec(html)?.[1];
      expect(action, html.slice(0, 300)).toBeTruthy();
      // the login page asks for the login; the consent page asks to authorize the client
      const isLogin = html.includes('name="login"');
      if (!isLogin) consent = html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
      const posted = await go(new URL(action!, at).href, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: isLogin ? new URLSearchParams({ prompt: 'login', login, password: 'any' }).toString() : new URLSearchParams({ prompt: 'consent' }).toString(),
      });
      at = new URL(posted.headers.get('location')!, at).href;
    } else {
      expect(r.status, await r.clone().text()).toBeGreaterThanOrEqual(300);
      at = new URL(r.headers.get('location')!, at).href;
    }
  }
  throw new Error('the provider never sent the browser back');
}

const text = (r: unknown) => (r as CallToolResult).content.map((c) => (c.type === 'text' ? c.text : '')).join('');
const sqlite = () => app.db.$client;
const refusals = () => sqlite().prepare("SELECT detail_json FROM security_events WHERE type = 'auth.token.refused' ORDER BY id").all().map((r) => JSON.parse((r as { detail_json: string }).detail_json) as { reason: string; issuer: string | null; client: string | null });

const check = (token: string, body: Record<string, unknown>) =>
  fetch(`${base}/api/v1/permissions/check`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('/mcp as an OAuth 2.1 protected resource', () => {
  let desktopToken = '';

  it('names the company\'s authorization server and the scope to ask for, from the 401 on', async () => {
    const r = await fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toBe(`Bearer realm="swarm-permissions", resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="${AGENT_SCOPE}"`);
    const meta = (await (await fetch(`${base}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<string, unknown>;
    expect(meta).toMatchObject({ resource, authorization_servers: [op.issuer], scopes_supported: [AGENT_SCOPE], bearer_methods_supported: ['header'] });
  });

  it('the MCP SDK\'s client signs a person in (authorization code with PKCE) and works as the mapped agent, for that person', async () => {
    const auth = new DesktopAuth();
    const client = new Client({ name: 'desktop', version: '1' });
    // First attempt: the SDK discovers everything from the 401 and sends the person to the provider.
    await expect(client.connect(new StreamableHTTPClientTransport(new URL(resource), { authProvider: auth }))).rejects.toBeInstanceOf(UnauthorizedError);
    const url = auth.authorizationUrl!;
    expect(url.origin).toBe(op.issuer);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('resource')).toBe(resource);
    expect(url.searchParams.get('scope')).toBe(AGENT_SCOPE);
    const { code, consent } = await authorizeInBrowser(url, 'alice');
    // the person was asked, on the provider's consent page, to let this client act for them
    expect(consent).toContain('mcp-desktop');
    const transport = new StreamableHTTPClientTransport(new URL(resource), { authProvider: auth });
    await transport.finishAuth(code);
    desktopToken = auth.tokens()!.access_token;
    // The token is a JWT for this resource, naming the person (sub) and the client.
    const claims = JSON.parse(Buffer.from(desktopToken.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    expect(claims).toMatchObject({ aud: resource, sub: 'alice', client_id: 'mcp-desktop', iss: op.issuer });

    const connected = new Client({ name: 'desktop', version: '1' });
    await connected.connect(new StreamableHTTPClientTransport(new URL(resource), { authProvider: auth }));
    try {
      let names: string[] = [];
      await within(30_000, async () => {
        names = (await connected.listTools()).tools.map((t) => t.name);
        return names.includes('everything__echo') && names.includes('crm__lookup');
      });
      // the desk's allowlist decides: what it may not use is not listed
      expect(names).not.toContain('everything__get-env');
      expect(text(await connected.callTool({ name: 'everything__echo', arguments: { message: 'for alice' } }))).toContain('for alice');
      // the remote upstream is reached with its own header, never the agent's token
      expect(text(await connected.callTool({ name: 'crm__lookup', arguments: {} }))).toContain('customer 42');
      // a refused call: recorded with the agent and the person
      const refused = (await connected.callTool({ name: 'everything__get-env', arguments: {} }).catch((e: Error) => ({ content: [{ type: 'text', text: e.message }] }))) as CallToolResult;
      expect(text(refused)).toContain('Refused by Swarm Permissions');
      // a gated call: its approval is the agent's for this person
      const asked = (await connected.callTool({ name: 'everything__get-sum', arguments: { a: 1, b: 2 } })) as CallToolResult;
      expect(text(asked)).toContain('needs a person\'s approval');
    } finally {
      await connected.close();
    }
    const approval = sqlite().prepare("SELECT requested_by FROM approvals WHERE tool_name = 'everything__get-sum'").get() as { requested_by: string };
    expect(approval.requested_by).toBe('agent:desk for alice');
    expect(sqlite().prepare("SELECT actor FROM security_events WHERE type = 'approval.requested' ORDER BY id DESC LIMIT 1").get()).toEqual({ actor: 'agent:desk for alice' });
    expect(sqlite().prepare("SELECT agent_name, principal, rule_source FROM permission_denials WHERE tool_name = 'everything__get-env'").get()).toEqual({ agent_name: 'desk', principal: 'alice', rule_source: 'agent_allowlist' });
    expect(upstreamAuthorizations.length).toBeGreaterThan(0);
    expect(new Set(upstreamAuthorizations)).toEqual(new Set(['Bearer the-upstreams-own-secret']));
  }, 90_000);

  it('a session opened for one person is not another\'s: the same agent for bob is told there is no such session', async () => {
    const forAlice = await op.mint({ iss: op.issuer, aud: resource, sub: 'alice', client_id: 'mcp-desktop', scope: AGENT_SCOPE, exp: now() + 300, iat: now() });
    const forBob = await op.mint({ iss: op.issuer, aud: resource, sub: 'bob', client_id: 'mcp-desktop', scope: AGENT_SCOPE, exp: now() + 300, iat: now() });
    const headers = (t: string) => ({ authorization: `Bearer ${t}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' });
    const init = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: headers(forAlice),
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } } }),
    });
    expect(init.status).toBe(200);
    const session = init.headers.get('mcp-session-id')!;
    await init.text();
    const stolen = await fetch(`${base}/mcp`, { method: 'POST', headers: { ...headers(forBob), 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });
    expect(stolen.status).toBe(404);
  });
});

const now = () => Math.floor(Date.now() / 1000);

describe('the check API and AuthZEN take the same tokens', () => {
  it('a headless agent (client credentials) decides as its agent, for nobody', async () => {
    const { status, body } = await op.clientCredentials('crm-batch', resource);
    expect(status, JSON.stringify(body)).toBe(200);
    const token = String(body.access_token);
    const allowed = await check(token, { agent: 'crm', tool: 'lookup_customer', arguments: { id: 7 } });
    expect(allowed.status).toBe(200);
    expect(await allowed.json()).toMatchObject({ decision: 'ALLOW' });
    const batch = await fetch(`${base}/api/v1/permissions/check/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ checks: [{ agent: 'crm', tool: 'lookup_customer', arguments: { id: 1 } }, { agent: 'crm', tool: 'drop_table', arguments: {} }] }),
    });
    expect(batch.status).toBe(200);
    expect(((await batch.json()) as { results: { decision: string }[] }).results.map((r) => r.decision)).toEqual(['ALLOW', 'DENY']);
    const denied = await check(token, { agent: 'crm', tool: 'drop_table', arguments: { name: 'customers' } });
    const answer = (await denied.json()) as { decision: string; decision_id: string };
    expect(answer.decision).toBe('DENY');
    const row = sqlite().prepare('SELECT agent_name, principal FROM permission_denials WHERE decision_id = ?').get(answer.decision_id) as { agent_name: string; principal: string };
    expect(row).toEqual({ agent_name: 'crm', principal: 'crm' });
    // another agent than its own is not its to ask for
    expect(await (await check(token, { agent: 'desk', tool: 'everything__echo', arguments: {} })).json()).toMatchObject({ decision: 'DENY', rule_source: 'rbac:agent_identity' });
  });

  it('a token exchanged for a person (RFC 8693, act) names both: the denial, the approval and AuthZEN', async () => {
    const person = await op.mint({ iss: op.issuer, aud: resource, sub: 'alice', client_id: 'mcp-desktop', scope: AGENT_SCOPE, exp: now() + 300, iat: now() });
    const { status, body } = await op.exchange('crm-batch', person, resource);
    expect(status, JSON.stringify(body)).toBe(200);
    const token = String(body.access_token);
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    expect(claims).toMatchObject({ sub: 'alice', client_id: 'crm-batch', act: { sub: 'crm-batch' } });

    const denied = (await (await check(token, { agent: 'crm', tool: 'drop_table', arguments: {} })).json()) as { decision: string; decision_id: string };
    expect(denied.decision).toBe('DENY');
    expect(sqlite().prepare('SELECT agent_name, principal FROM permission_denials WHERE decision_id = ?').get(denied.decision_id)).toEqual({ agent_name: 'crm', principal: 'alice' });

    const asked = (await (await check(token, { agent: 'crm', tool: 'close_account', arguments: { account: 'A-1' } })).json()) as { decision: string; approval_id: string };
    expect(asked.decision).toBe('ASK');
    expect(sqlite().prepare('SELECT requested_by FROM approvals WHERE id = ?').get(asked.approval_id)).toEqual({ requested_by: 'agent:crm for alice' });

    const authzen = await fetch(`${base}/access/v1/evaluation`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ subject: { type: 'agent', id: 'crm' }, action: { name: 'call' }, resource: { type: 'tool', id: 'lookup_customer' }, context: { arguments: {} } }),
    });
    expect(authzen.status, await authzen.clone().text()).toBe(200);
    expect(await authzen.json()).toMatchObject({ decision: true });
  });

  it('policy sees the person: principal.on_behalf_of in a condition', async () => {
    const forBob = await op.mint({ iss: op.issuer, aud: resource, sub: 'bob', client_id: 'mcp-desktop', scope: AGENT_SCOPE, exp: now() + 300, iat: now() });
    const exchanged = String((await op.exchange('crm-batch', forBob, resource)).body.access_token);
    const answer = (await (await check(exchanged, { agent: 'crm', tool: 'lookup_customer', arguments: { id: 7 } })).json()) as { decision: string; rule_source: string; decision_id: string };
    expect(answer).toMatchObject({ decision: 'DENY', rule_source: 'policy:bob-reads-no-customers' });
    expect(sqlite().prepare('SELECT principal FROM permission_denials WHERE decision_id = ?').get(answer.decision_id)).toEqual({ principal: 'bob' });
  });
});

describe('refused tokens: 401 with WWW-Authenticate, and recorded with the reason', () => {
  const good = () => ({ iss: op.issuer, aud: resource, sub: 'crm-batch', client_id: 'crm-batch', scope: AGENT_SCOPE, exp: now() + 300, iat: now() });
  const cases: Array<[string, () => Promise<string>, RegExp]> = [
    ['another audience', () => op.mint({ ...good(), aud: 'https://other.example/mcp' }), /not for this resource/],
    ['expired', () => op.mint({ ...good(), exp: now() - 120, iat: now() - 900 }), /expired/],
    ['not yet valid', () => op.mint({ ...good(), nbf: now() + 600 }), /not valid yet/],
    ['another issuer', () => op.mint({ ...good(), iss: 'https://evil.example' }), /issuer "https:\/\/evil.example" is not one/],
    ['a key the provider never published', () => op.mint(good(), { unpublished: true }), /key its issuer does not publish/],
    ['alg: none', () => op.mint(good(), { alg: 'none' }), /algorithm/],
    ['an ID token, not an access token', () => op.mint(good(), { typ: 'JWT' }), /not an access token/],
    ['without the scope', () => op.mint({ ...good(), scope: 'openid' }), /lacks the scope swarm-agent/],
  ];
  for (const [what, token, reason] of cases) {
    it(what, async () => {
      const before = refusals().length;
      const t = await token();
      for (const [url, body] of [
        [`${base}/mcp`, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } } }],
        [`${base}/api/v1/permissions/check`, { agent: 'crm', tool: 'lookup_customer', arguments: {} }],
      ] as const) {
        const r = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(body) });
        expect(r.status).toBe(401);
        const challenge = r.headers.get('www-authenticate') ?? '';
        expect(challenge).toMatch(/^Bearer realm="swarm-permissions"/);
        expect(challenge).toContain('error="invalid_token"');
        if (url.endsWith('/mcp')) expect(challenge).toContain('resource_metadata=');
        expect(((await r.json()) as { error: { message: string } }).error.message).toMatch(reason);
      }
      const recorded = refusals().slice(before);
      expect(recorded).toHaveLength(2);
      for (const e of recorded) expect(e.reason).toMatch(reason);
    });
  }

  it('a client the configuration does not map: refused, recorded, and told where to map it', async () => {
    const { status, body } = await op.clientCredentials('unmapped-bot', resource);
    expect(status).toBe(200);
    const r = await check(String(body.access_token), { agent: 'crm', tool: 'lookup_customer', arguments: {} });
    expect(r.status).toBe(401);
    const message = ((await r.json()) as { error: { message: string } }).error.message;
    expect(message).toContain('the client "unmapped-bot"');
    expect(message).toMatch(/add it under that issuer's agents in config\/sso\.yaml \(at sso\.yaml:\d+:\d+\)/);
    expect(refusals().at(-1)).toMatchObject({ client: 'unmapped-bot', issuer: op.issuer });
  });

  it('the provider will not issue a token for another resource at all (RFC 8707)', async () => {
    const { status, body } = await op.clientCredentials('crm-batch', 'https://other.example/mcp');
    expect(status).toBe(400);
    expect(body.error).toBe('invalid_target');
  });
});
