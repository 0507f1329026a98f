import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect, test, type Page } from '@playwright/test';
import { E2E, user } from './fixtures/accounts';
import { isolatedServer, type IsolatedServer } from './fixtures/isolated-server';
import { signIn } from './fixtures/session';

/**
 * The MCP gateway end to end (issue 26): a server of its own whose config/mcp.yaml puts the real reference servers
 * (server-filesystem on a temporary folder, server-everything) behind the engine. An agent's MCP client (the official
 * SDK, Streamable HTTP on /mcp with the agent's token) calls a gated files__write_file in `wait` mode; while the call
 * is held, an operator signs in, finds the card (server, tool, and the client that asked) on /approvals and approves
 * it through the confirmation; the held call then completes and the file is there. /transparency shows the servers
 * connected and what each agent is shown, and the denial explorer names the server of a refused MCP call.
 */
const SHOTS = '/tmp/mcp-ui';
const FS = join(process.cwd(), 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const EVERYTHING = join(process.cwd(), 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

test.describe('the MCP gateway in the console', () => {
  // A server of its own, two upstreams starting and a call held for a person: more than one test's default time.
  test.describe.configure({ mode: 'serial', timeout: 120_000 });
  let server: IsolatedServer;
  let root = '';
  let deskToken = '';
  const olivia = user('olivia');

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    server = isolatedServer(E2E.port + 11);
    root = join(server.dir, 'shared');
    mkdirSync(root);
    const config = server.configDir;
    writeFileSync(
      join(config, 'mcp.yaml'),
      `servers:
  - id: files
    description: The team's shared folder.
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(FS)}, ${JSON.stringify(root)}]
  - id: everything
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(EVERYTHING)}, stdio]
approval_wait: 90s
`,
    );
    writeFileSync(
      join(config, 'agents.yaml'),
      `agents:
  desk:
    description: A desktop assistant with the shared folder.
    tools: [files__read_text_file, files__list_directory, files__write_file, files__list_allowed_directories, everything__echo]
  clerk:
    tools: [everything__echo]
`,
    );
    writeFileSync(join(config, 'permission_policies.yaml'), 'rules: []\n');
    writeFileSync(
      join(config, 'gates.yaml'),
      `gates:
  - id: file-writes
    tools: [files__write_file]
    risk: medium
    description: Writes to the shared folder are reviewed by a person.
`,
    );
    writeFileSync(join(config, 'policy_tests.yaml'), 'tests: []\n');
    await server.start();
    expect((await server.swarm('users', 'add', 'olivia', '--role', olivia.role, '--password', olivia.password)).code).toBe(0);
    const token = await server.swarm('tokens', 'add', '--agent', 'desk', '--name', 'desk assistant');
    expect(token.code, token.out).toBe(0);
    deskToken = /swt_[A-Za-z0-9_-]+/.exec(token.out)?.[0] ?? '';
    expect(deskToken).not.toBe('');
  });
  test.afterAll(async () => {
    await server?.kill('SIGTERM');
  });

  /** The agent's MCP client, named as a real one names itself at initialize ("remote-test 1" on the card). */
  async function connect(): Promise<Client> {
    const client = new Client({ name: 'remote-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${deskToken}` } } }));
    // The upstreams start with the gateway: wait until the filesystem server's tools are listed.
    await expect.poll(async () => (await client.listTools()).tools.map((t) => t.name), { timeout: 60_000 }).toContain('files__write_file');
    return client;
  }

  async function signInAsOlivia(page: Page) {
    await server.signIn(page, 'olivia', olivia.password);
  }

  test('a held write_file is approved in the browser while the client waits, and then runs once', async ({ page }) => {
    const client = await connect();
    try {
      const target = join(root, 'approved.txt');
      const progress: string[] = [];
      let settled = false;
      const held = client
        .callTool({ name: 'files__write_file', arguments: { path: target, content: 'approved in the browser\n' } }, undefined, {
          onprogress: (p) => progress.push(p.message ?? ''),
          timeout: 100_000,
          resetTimeoutOnProgress: true,
        })
        .finally(() => (settled = true));

      await page.setViewportSize({ width: 1440, height: 900 });
      await signInAsOlivia(page);
      await page.goto(`${server.url}/approvals`);
      await expect(page.locator('section[data-ready="true"]')).toBeVisible();
      // The card appears once the gateway has asked (the queue polls): the server and tool apart, the client that asked.
      const card = page.getByRole('listitem', { name: 'desk wants to run write_file on the MCP server files' });
      await expect(card).toBeVisible({ timeout: 30_000 });
      await expect(card.getByRole('heading', { level: 3 })).toHaveText(/desk wants to run write_file on MCP server files/);
      await expect(card).toContainText('Requested by agent:desk through remote-test 1');
      await expect(card).toContainText('Writes to the shared folder are reviewed by a person.');
      await expect(card).toContainText('approved in the browser');
      expect(settled).toBe(false);
      await page.screenshot({ path: `${SHOTS}/approvals-1440.png`, fullPage: true });
      await page.setViewportSize({ width: 390, height: 844 });
      await expect(card).toBeVisible();
      await page.screenshot({ path: `${SHOTS}/approvals-390.png`, fullPage: true });
      await page.setViewportSize({ width: 1440, height: 900 });

      // The gateway tells the waiting client which request it waits for.
      await expect.poll(() => progress.join('\n'), { timeout: 20_000 }).toMatch(/apr_/);
      expect(existsSync(target)).toBe(false);

      await card.getByRole('button', { name: 'Approve…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Approve this request?' });
      await expect(dialog).toContainText('desk wants to run write_file on MCP server files');
      await expect(dialog).toContainText('through remote-test 1');
      await page.screenshot({ path: `${SHOTS}/approvals-dialog-1440.png` });
      // (a medium-risk gate: the box ticked on purpose first)
      await dialog.getByRole('checkbox').check();
      await dialog.getByRole('button', { name: 'Approve', exact: true }).click();
      await expect(dialog).toBeHidden();

      const result = (await held) as CallToolResult;
      expect(result.isError ?? false, JSON.stringify(result)).toBe(false);
      expect(readFileSync(target, 'utf8')).toBe('approved in the browser\n');
      await expect(card).toBeHidden();

      // Approved once: the history says it ran, through the same client.
      await page.goto(`${server.url}/approvals?tab=history`);
      const row = page.getByRole('row').filter({ hasText: 'write_file' });
      await expect(row).toContainText('approved and run');
      await expect(row).toContainText('through remote-test 1');

      // A refused MCP call: the denial explorer's detail names its server and the server's own tool.
      const refused = (await client.callTool({ name: 'files__edit_file', arguments: { path: target, edits: [] } })) as CallToolResult;
      expect(refused.isError).toBe(true);
      await page.goto(`${server.url}/denials?tool=files__edit_file`);
      const denial = page.getByRole('table', { name: 'Denials' }).locator('tbody tr').first();
      await expect(denial).toContainText('files__edit_file');
      await denial.locator('td').first().click();
      await expect(page.getByTestId('denial-detail')).toBeVisible();
      await expect(page.getByTestId('denial-mcp-server')).toHaveText('files (its tool edit_file)');
      await page.getByTestId('denial-detail').screenshot({ path: `${SHOTS}/denial-detail-1440.png` });
    } finally {
      await client.close();
    }
  });

  test('/transparency shows the servers connected and what tools/list gives each agent', async ({ page }) => {
    // The gateway of this server is running (the first test connected); the page reads its state.
    await signInAsOlivia(page);
    for (const width of [1440, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${server.url}/transparency#mcp`);
      const section = page.locator('section[aria-labelledby="mcp"]');
      await expect(section.getByRole('heading', { level: 2, name: 'MCP gateway' })).toBeVisible();
      await expect(page.getByRole('navigation', { name: 'On this page' }).getByRole('link', { name: 'MCP gateway' })).toHaveAttribute('href', '#mcp');

      const servers = page.getByRole('region', { name: 'MCP servers and their state' });
      await expect(servers.locator('tr[data-mcp-server="files"]')).toContainText('Connected');
      await expect(servers.locator('tr[data-mcp-server="everything"]')).toContainText('Connected');
      await expect(servers.locator('tr[data-mcp-server="files"]')).toContainText("The team's shared folder.");
      // What runs, without the host's paths: the script relative to the server's folder, the temporary root by its name.
      await expect(servers.locator('tr[data-mcp-server="files"]')).toContainText('node_modules/@modelcontextprotocol/server-filesystem/dist/index.js shared');

      const matrix = page.getByRole('region', { name: 'What tools/list gives each agent, per MCP tool' });
      await expect(matrix).toHaveAttribute('tabindex', '0');
      const cell = (tool: string, agent: number) => matrix.locator(`tr[data-mcp-tool="${tool}"] td`).nth(agent);
      // Columns: clerk, then desk (sorted).
      await expect(matrix.locator('thead th')).toHaveText(['Tool', 'clerk', 'desk']);
      await expect(cell('files__write_file', 1)).toHaveText(/needs approval/);
      await expect(cell('files__write_file', 0)).toHaveText(/hidden/);
      await expect(cell('files__read_text_file', 1)).toHaveText(/allowed/);
      await expect(cell('everything__echo', 0)).toHaveText(/allowed/);
      await expect(matrix.locator('tr[data-mcp-tool="files__write_file"] th')).toContainText('destructive');
      await expect(matrix.locator('tr[data-mcp-tool="files__read_text_file"] th')).toContainText('read-only');

      const text = await page.locator('body').innerText();
      expect(text).not.toContain(server.dir);
      expect(text).not.toContain(process.cwd());
      await page.screenshot({ path: `${SHOTS}/transparency-${width}.png`, fullPage: true });
      await section.screenshot({ path: `${SHOTS}/transparency-mcp-${width}.png` });
    }
  });
});

test('/transparency without config/mcp.yaml says in one sentence how to add MCP servers', async ({ page }) => {
  // The shared e2e server: its configuration ships no mcp.yaml.
  await page.setViewportSize({ width: 1440, height: 900 });
  await signIn(page, 'victor');
  await page.goto('/transparency#mcp');
  const section = page.locator('section[aria-labelledby="mcp"]');
  await expect(section.getByTestId('mcp-none')).toHaveText(/^No MCP server is configured\. To put MCP servers behind the engine, add config\/mcp\.yaml/);
  await expect(section.getByRole('table')).toHaveCount(0);
  await section.screenshot({ path: `${SHOTS}/transparency-none-1440.png` });
});
