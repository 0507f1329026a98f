import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { E2E } from './fixtures/accounts';
import { isolatedServer, type IsolatedServer } from './fixtures/isolated-server';
import { AGENT_SCOPE, startOAuthTestProvider, type OAuthTestProvider } from '../lib/test-support/oauth-provider';

/**
 * Agents signed in by the company's provider, through the product as `npm start` runs it (the decision listener in
 * front, Next.js behind; issue 42): the protected-resource metadata names the provider, a headless agent's token from
 * the real provider (client credentials) decides as its agent, every wrong token is answered 401 with its reason and
 * the challenge (never a 500, in the built server's bundles too), and /transparency shows who may come in this way.
 */
const SHOTS = '/tmp/agent-tokens';

test.describe('agents with access tokens of the company\'s provider', () => {
  test.describe.configure({ mode: 'serial', timeout: 90_000 });
  let server: IsolatedServer;
  let op: OAuthTestProvider;

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    server = isolatedServer(E2E.port + 31, { as: 'npm start' });
    op = await startOAuthTestProvider({ resource: () => `${server.url}/mcp`, redirectUri: 'http://127.0.0.1:9/callback', people: ['alice'] });
    writeFileSync(
      join(server.configDir, 'sso.yaml'),
      `base_url: ${server.url}
agent_tokens:
  issuers:
    - issuer: ${op.issuer}
      scopes: [${AGENT_SCOPE}]
      agents:
        crm-batch: deployer
`,
    );
    await server.start();
  });
  test.afterAll(async () => {
    await server?.kill('SIGTERM');
    await op?.close();
  });

  test('the metadata names the provider; a call without a token is told where to get one', async ({ request }) => {
    const meta = await request.get(`${server.url}/.well-known/oauth-protected-resource/mcp`);
    expect(await meta.json()).toMatchObject({ resource: `${server.url}/mcp`, authorization_servers: [op.issuer], scopes_supported: [AGENT_SCOPE] });
    const r = await request.post(`${server.url}/mcp`, { data: {}, headers: { accept: 'application/json, text/event-stream' } });
    expect(r.status()).toBe(401);
    expect(r.headers()['www-authenticate']).toBe(`Bearer realm="swarm-permissions", resource_metadata="${server.url}/.well-known/oauth-protected-resource/mcp", scope="${AGENT_SCOPE}"`);
  });

  test('a headless agent\'s token decides as its agent; wrong tokens are refused 401 with the reason, on the listener and on Next.js', async ({ request }) => {
    const granted = await op.clientCredentials('crm-batch', `${server.url}/mcp`);
    expect(granted.status).toBe(200);
    const token = String(granted.body.access_token);
    const decided = await server.check<{ decision: string; rule_source: string }>(token, { agent: 'deployer', tool: 'deploy_serving', arguments: { env: 'staging' } });
    expect(decided.decision).not.toBe('DENY');

    const now = Math.floor(Date.now() / 1000);
    const wrongAudience = await op.mint({ iss: op.issuer, aud: 'https://other.example/mcp', client_id: 'crm-batch', sub: 'crm-batch', scope: AGENT_SCOPE, exp: now + 300 });
    const expired = await op.mint({ iss: op.issuer, aud: `${server.url}/mcp`, client_id: 'crm-batch', sub: 'crm-batch', scope: AGENT_SCOPE, exp: now - 300 });
    for (const [bad, why] of [
      [wrongAudience, /not for this resource/],
      [expired, /expired/],
    ] as const) {
      // the check is answered by the decision listener, the denials list by Next.js: the same answer from both
      for (const [method, path] of [
        ['POST', '/api/v1/permissions/check'],
        ['GET', '/api/v1/permissions/denials'],
      ] as const) {
        const r = await request.fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${bad}` }, ...(method === 'POST' ? { data: { agent: 'deployer', tool: 'deploy_serving', arguments: {} } } : {}) });
        expect(r.status(), `${method} ${path}`).toBe(401);
        expect(r.headers()['www-authenticate']).toContain('error="invalid_token"');
        expect(((await r.json()) as { error: { message: string } }).error.message).toMatch(why);
      }
    }
  });

  test('/transparency shows the issuers and which client is which agent', async ({ page }) => {
    await server.signIn(page);
    for (const [width, height] of [
      [1440, 900],
      [390, 844],
    ] as const) {
      await page.setViewportSize({ width, height });
      await page.goto(`${server.url}/transparency#sso`);
      const row = page.getByTestId('agent-token-issuer');
      await expect(row).toContainText(op.issuer);
      await expect(row).toContainText('crm-batch');
      await expect(row).toContainText('deployer');
      await row.scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${SHOTS}/transparency-${width}.png` });
    }
  });
});
