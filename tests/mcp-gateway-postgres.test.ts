/**
 * The MCP gateway deciding on PostgreSQL as it does on SQLite: the SDK client talks to the gateway (in memory), the
 * gateway decides through an application on a real PostgreSQL cluster and forwards to the reference server. The list is
 * filtered, a denial is recorded in PostgreSQL's trail, each tool is pinned at first sight, and an ASK `return` runs
 * once after its approval.
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApp, type App } from '@/lib/app';
import { InProcessDecider } from '@/lib/mcp/decider';
import { McpGateway } from '@/lib/mcp/gateway';
import { UpstreamPool } from '@/lib/mcp/upstreams';
import { REPO_ROOT } from '@/lib/test-support/cli';
import { TEST_APPROVAL_KEY } from '@/lib/test-support/temp-app';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { within } from '@/lib/test-support/wait';

const pg15 = usePostgres();
const dir = mkdtempSync(join(tmpdir(), 'swarm-mcp-pg-'));
const EVERYTHING = join(REPO_ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
let app: App;
let pool: UpstreamPool;
let client: Client;

const text = (r: unknown) => (r as CallToolResult).content.map((c) => (c.type === 'text' ? c.text : '')).join('');

beforeAll(async () => {
  const database = await pg15.freshDatabase('mcp');
  const config = join(dir, 'config');
  cpSync('config', config, { recursive: true });
  writeFileSync(join(config, 'mcp.yaml'), `servers:\n  - id: everything\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(EVERYTHING)}, stdio]\n    on_ask: return\n`);
  writeFileSync(join(config, 'agents.yaml'), 'agents:\n  desk:\n    tools: [everything__echo, everything__get-sum, everything__get-env]\n');
  writeFileSync(
    join(config, 'permission_policies.yaml'),
    'rules:\n  - id: big-sums\n    decision: DENY\n    priority: 950\n    reason: Sums over a million are not for agents.\n    when: "args.a > 1000000"\n    match: { tool: everything__get-sum }\n',
  );
  writeFileSync(join(config, 'gates.yaml'), 'gates:\n  - id: env-review\n    tools: [everything__get-env]\n    risk: high\n');
  writeFileSync(join(config, 'policy_tests.yaml'), 'tests: []\n');
  writeFileSync(join(config, 'hooks.yaml'), 'hooks: []\n');
  const env = { SWARM_DB: pg15.cluster.urlOf(database), SWARM_CONFIG_DIR: config, SWARM_APPROVAL_KEY: TEST_APPROVAL_KEY, SWARM_POLICY_FILE: '', SWARM_PROFILE: '' };
  app = await openApp({ dbPath: env.SWARM_DB, configDir: config, env, profile: '' });
  await app.auth.createUser('olivia', 'operator', 'operator-password-1');
  pool = new UpstreamPool(() => app.mcpFile.current);
  const server = new McpGateway(pool).session(new InProcessDecider(app, { kind: 'agent', id: 'desk', role: 'viewer', agent: 'desk' }, undefined));
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  client = new Client({ name: 'pg-test', version: '1' });
  await client.connect(b);
  await within(30_000, async () => (await client.listTools()).tools.length > 0);
}, 60_000);
afterAll(async () => {
  await client?.close();
  await pool?.close();
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the MCP gateway on PostgreSQL', () => {
  it('lists only the allowed tools, records a denial in the trail, forwards what is allowed', async () => {
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(['everything__echo', 'everything__get-env', 'everything__get-sum']);
    const denied = (await client.callTool({ name: 'everything__get-sum', arguments: { a: 2_000_000, b: 1 } })) as CallToolResult;
    expect(denied.isError).toBe(true);
    const id = /decision (\S+)\)/.exec(text(denied))![1];
    const row = await app.pool!.query('SELECT agent_name, tool_name, rule_source FROM permission_denials WHERE decision_id = $1', [id]);
    expect(row.rows).toEqual([{ agent_name: 'desk', tool_name: 'everything__get-sum', rule_source: 'policy:big-sums' }]);
    expect(text(await client.callTool({ name: 'everything__get-sum', arguments: { a: 2, b: 3 } }))).toContain('5');
    // each tool pinned at first sight, in PostgreSQL's table, with its event in the trail (issue 42)
    const pins = await app.pool!.query("SELECT tool_name FROM mcp_tool_pins WHERE server_id = 'everything' AND state = 'accepted' AND tool_name = 'get-sum'");
    expect(pins.rowCount).toBe(1);
    const pinned = await app.pool!.query("SELECT count(*)::int AS n FROM security_events WHERE type = 'mcp.tool.pinned' AND target = 'everything/get-sum'");
    expect(pinned.rows[0].n).toBe(1);
  });

  it('answers an ASK with the approval; once an operator approves, the same call runs once', async () => {
    const call = () => client.callTool({ name: 'everything__get-env', arguments: {} }) as Promise<CallToolResult>;
    const first = await call();
    const approval = /approval (apr_[\w-]+),/.exec(text(first))![1]!;
    const olivia = { kind: 'user' as const, id: 'olivia', role: 'operator' as const };
    await app.approvals.approve(approval, olivia, 'checked');
    const second = await call();
    expect(second.isError).toBeFalsy();
    expect(text(second)).toContain('PATH');
    expect(text(await call())).toMatch(/needs a person's approval/);
  });
});
