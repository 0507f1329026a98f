/**
 * Agents with access tokens of the company's provider on PostgreSQL (the SQLite side: tests/agent-tokens.test.ts): a
 * token exchanged for a person names both on the rows PostgreSQL keeps (the denial, the approval), and a refused token
 * is recorded there. The check route's core, as every transport runs it, against a real provider.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApp, type App } from '@/lib/app';
import { fromWebRequest, toResponse } from '@/lib/http/route';
import { checkToolCall } from '@/lib/http/routes/decisions';
import { AGENT_SCOPE, startOAuthTestProvider, type OAuthTestProvider } from '@/lib/test-support/oauth-provider';
import { usePostgres } from '@/lib/test-support/use-postgres';

const cluster = usePostgres();
const RESOURCE = 'https://swarm.test/mcp';

describe('agent access tokens on PostgreSQL', () => {
  let app: App;
  let op: OAuthTestProvider;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'swarm-pg-agent-tokens-'));
    op = await startOAuthTestProvider({ resource: () => RESOURCE, redirectUri: 'http://127.0.0.1:9/callback', people: ['alice'] });
    writeFileSync(join(dir, 'sso.yaml'), `base_url: https://swarm.test\nagent_tokens:\n  issuers:\n    - issuer: ${op.issuer}\n      scopes: [${AGENT_SCOPE}]\n      agents: { crm-batch: crm }\n`);
    writeFileSync(join(dir, 'agents.yaml'), 'agents:\n  crm:\n    tools: [lookup_customer, close_account]\n');
    writeFileSync(join(dir, 'gates.yaml'), 'gates:\n  - id: closing\n    tools: [close_account]\n');
    writeFileSync(join(dir, 'permission_policies.yaml'), 'rules: []\n');
    app = await openApp({ dbPath: cluster.cluster.urlOf(await cluster.freshDatabase('agent_tokens')), configDir: dir, env: { SWARM_APPROVAL_KEY: 'pg-agent-tokens-binding-key-0123456789abcdef' }, profile: '' });
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await op?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const check = async (token: string, body: Record<string, unknown>) => {
    const request = new Request('https://swarm.test/api/v1/permissions/check', { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const response = toResponse(await checkToolCall.core(app, fromWebRequest(request), {}));
    return { status: response.status, challenge: response.headers.get('www-authenticate'), body: (await response.json()) as Record<string, unknown> };
  };
  const now = () => Math.floor(Date.now() / 1000);

  it('a token exchanged for a person: the denial and the approval name the agent and the person', async () => {
    const person = await op.mint({ iss: op.issuer, aud: RESOURCE, sub: 'alice', client_id: 'mcp-desktop', scope: AGENT_SCOPE, exp: now() + 300 });
    const token = String((await op.exchange('crm-batch', person, RESOURCE)).body.access_token);
    const denied = await check(token, { agent: 'crm', tool: 'drop_table', arguments: {} });
    expect(denied.body.decision).toBe('DENY');
    expect(await app.database.all(sql`SELECT agent_name, principal FROM permission_denials WHERE decision_id = ${denied.body.decision_id}`)).toEqual([{ agent_name: 'crm', principal: 'alice' }]);
    const asked = await check(token, { agent: 'crm', tool: 'close_account', arguments: { account: 'A-1' } });
    expect(asked.body.decision).toBe('ASK');
    expect(await app.database.all(sql`SELECT requested_by FROM approvals WHERE id = ${asked.body.approval_id}`)).toEqual([{ requested_by: 'agent:crm for alice' }]);
  });

  it('a token for another audience: 401 with the challenge, and auth.token.refused with the reason', async () => {
    const token = await op.mint({ iss: op.issuer, aud: 'https://other.example', client_id: 'crm-batch', sub: 'crm-batch', scope: AGENT_SCOPE, exp: now() + 300 });
    const refused = await check(token, { agent: 'crm', tool: 'lookup_customer', arguments: {} });
    expect(refused.status).toBe(401);
    expect(refused.challenge).toMatch(/^Bearer realm="swarm-permissions", error="invalid_token", error_description="the token is not for this resource/);
    const [event] = await app.securityEvents.ofType('auth.token.refused', 5);
    expect(JSON.parse(event!.detailJson ?? '{}')).toMatchObject({ client: 'crm-batch', issuer: op.issuer, reason: expect.stringMatching(/not for this resource/) });
  });
});
