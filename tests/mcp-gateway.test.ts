/**
 * The MCP gateway with the official TypeScript SDK as the client, in front of the real reference servers
 * (@modelcontextprotocol/server-filesystem and server-everything, started by the gateway from config/mcp.yaml):
 *
 * - `swarm mcp serve` on stdio, the real binary, deciding in process on the SQLite file;
 * - `swarm mcp serve` deciding over REST (SWARM_URL, the agent's SWARM_TOKEN);
 * - `/mcp` over Streamable HTTP, the product's route handlers on a real socket.
 *
 * What the client sees is checked against what the upstream did (the files in the filesystem server's folder) and
 * what was recorded (the denials and approvals in the database).
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTempServerEnv } from './support/in-process-api';
import { REPO_ROOT, runSwarm } from '@/lib/test-support/cli';
import { within } from '@/lib/test-support/wait';

const server = useTempServerEnv('mcp', { policy: 'empty', env: { SWARM_FLAG_PLUGIN_SHELL_HOOKS_ENABLED: 'true' } });
const config = join(server.dir, 'config');
const root = join(server.dir, 'shared');
const FS = join(REPO_ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const EVERYTHING = join(REPO_ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const NOISY = join(REPO_ROOT, 'tests/fixtures/mcp/noisy-server.mjs');
// (not a second server-everything: a resource URI two servers list is refused, issue 42)
const SLOW = join(REPO_ROOT, 'tests/fixtures/mcp/slow-server.mjs');

mkdirSync(root);
writeFileSync(join(root, 'notes.txt'), 'first line\nsecond line\nthird line\n');
writeFileSync(join(root, 'secret.txt'), 'the vault code\n');
writeFileSync(join(root, 'plan.txt'), 'ship on friday\n');
writeFileSync(
  join(config, 'mcp.yaml'),
  `servers:
  - id: files
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(FS)}, ${JSON.stringify(root)}]
    tools: { write_file: { on_ask: return } }
  - id: everything
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(EVERYTHING)}, stdio]
  - id: slow
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(SLOW)}]
    call_timeout: 1s
  - id: noisy
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(NOISY)}]
approval_wait: 60s
`,
);
const AGENTS = `agents:
  desk:
    description: A desktop assistant with the shared folder and the reference server.
    tools: [files__read_text_file, files__list_directory, files__create_directory, files__write_file, files__edit_file, files__list_allowed_directories,
            everything__echo, everything__get-sum, everything__get-env, everything__trigger-long-running-operation,
            everything__get_prompt, everything__read_resource, slow__trigger-long-running-operation,
            noisy__noisy, noisy__plain, remote-everything__echo]
  clerk:
    tools: [everything__echo]
`;
writeFileSync(join(config, 'agents.yaml'), AGENTS);
writeFileSync(
  join(config, 'permission_policies.yaml'),
  `rules:
  - id: no-secret-files
    decision: DENY
    priority: 950
    reason: Files named secret are not read by agents.
    when: "args.path.contains('secret')"
    match: { tool: files__read_text_file }
  - id: no-server-env
    decision: DENY
    priority: 950
    reason: The environment of a server is not shown to agents.
    match: { tool: everything__get-env }
`,
);
writeFileSync(
  join(config, 'gates.yaml'),
  `gates:
  - id: file-writes
    tools: [files__write_file]
    risk: medium
    description: Writes to the shared folder are reviewed by a person.
  - id: destructive-mcp
    annotations: { destructiveHint: true }
    risk: high
    description: Every tool its MCP server calls destructive is reviewed by a person, whichever server it is on.
`,
);
writeFileSync(
  join(config, 'hooks.yaml'),
  `hooks:
  - id: first-line-only
    event: before_tool_call
    match: { tool: files__read_text_file }
    rewrite: { set: { head: 1 } }
  - id: log-finished
    event: after_tool_call
    match: { tool: everything__echo }
    shell:
      command: ["${process.execPath}", "-e", "require('fs').appendFileSync(process.argv[1], require('fs').readFileSync(0, 'utf8') + '\\\\n')", "${join(server.dir, 'finished.jsonl')}"]
`,
);
writeFileSync(join(config, 'policy_tests.yaml'), 'tests: []\n');

const { getSqliteApp } = await import('@/lib/app');
const { createRouteServer } = await import('./support/route-server');

const app = getSqliteApp();
const deskToken = await app.auth.createToken({ agent: 'desk' }, 'desk assistant');
const clerkToken = await app.auth.createToken({ agent: 'clerk' }, 'clerk');
await app.auth.createUser('olivia', 'operator', 'operator-password-1');
const { token: viewerToken } = await app.auth.createUserWithToken({ username: 'victor', role: 'viewer' }, 'victor');

let routes: HttpServer;
let base = '';

beforeAll(async () => {
  routes = createRouteServer();
  await new Promise<void>((r) => routes.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(routes.address() as AddressInfo).port}`;
});
afterAll(async () => {
  const { currentMcpEndpoint } = await import('@/lib/mcp/http');
  await currentMcpEndpoint()?.close();
  routes.closeAllConnections();
  await new Promise((r) => routes.close(r));
  app.close();
  server.remove();
});

const childEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({ ...process.env, SWARM_URL: '', SWARM_TOKEN: '', SWARM_AGENT: '', ...extra });

/** `swarm mcp serve` as an MCP client launches it: the real binary on stdio. */
async function serve(args: string[], env: NodeJS.ProcessEnv): Promise<{ client: Client; transport: StdioClientTransport }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [join(REPO_ROOT, 'bin/swarm.mjs'), 'mcp', 'serve', ...args], env: Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)), cwd: REPO_ROOT, stderr: 'pipe' });
  const client = new Client({ name: 'gateway-test', version: '1' });
  await client.connect(transport);
  return { client, transport };
}

/** The tools list once both upstreams are connected (they start with the gateway). */
async function listWhenReady(client: Client) {
  let names: string[] = [];
  await within(30_000, async () => {
    names = (await client.listTools()).tools.map((t) => t.name);
    return names.some((n) => n.startsWith('files__')) && names.some((n) => n.startsWith('everything__'));
  });
  return (await client.listTools()).tools;
}

const text = (r: unknown) => (r as CallToolResult).content.map((c) => (c.type === 'text' ? c.text : '')).join('');

function pendingApproval(tool: string) {
  return app.db
    .$client.prepare("SELECT id FROM approvals WHERE tool_name = ? AND status = 'pending' ORDER BY requested_at DESC LIMIT 1")
    .get(tool) as { id: string } | undefined;
}

const approve = (id: string) => runSwarm(['approvals', 'approve', id, '--as', 'olivia', '--reason', 'reviewed'], childEnv());

describe('swarm mcp serve, deciding in process', () => {
  let client: Client;
  let transport: StdioClientTransport;

  beforeAll(async () => {
    ({ client, transport } = await serve(['--agent', 'desk'], childEnv()));
    await listWhenReady(client);
  }, 60_000);
  afterAll(async () => {
    await client?.close();
  });

  it('lists the tools the agent may use, namespaced, with their schemas and annotations; a gated tool says so', async () => {
    const tools = await listWhenReady(client);
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['files__read_text_file', 'files__list_directory', 'files__write_file', 'everything__echo', 'everything__get-sum']));
    // not in its allowlist, and denied without condition: never listed
    expect(names).not.toContain('files__move_file');
    expect(names).not.toContain('everything__get-env');
    const write = tools.find((t) => t.name === 'files__write_file')!;
    expect(write.description).toMatch(/^Needs a person's approval/);
    expect(write.inputSchema.properties).toHaveProperty('content');
    expect(write.annotations).toMatchObject({ destructiveHint: true });
    expect(tools.find((t) => t.name === 'everything__echo')!.description).not.toMatch(/approval/);
    // gated by its annotation alone (destructiveHint: true), not by name; a tool declared not destructive is not
    expect(tools.find((t) => t.name === 'files__edit_file')!.description).toMatch(/^Needs a person's approval/);
    expect(tools.find((t) => t.name === 'files__create_directory')!.description).not.toMatch(/approval/);
    // a tool that declares no annotation at all is destructive (the specification's default): gated too
    expect(tools.find((t) => t.name === 'noisy__plain')!.description).toMatch(/^Needs a person's approval/);
    expect(tools.find((t) => t.name === 'noisy__noisy')!.description).toBe('Answers after writing garbage to stdout.');
  }, 60_000);

  it('refuses a denied call with the rule, the reason and the decision id; the upstream never sees it; the denial is recorded', async () => {
    const r = (await client.callTool({ name: 'files__read_text_file', arguments: { path: join(root, 'secret.txt') } })) as CallToolResult;
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/Refused by Swarm Permissions: Files named secret are not read by agents\. \(rule policy:no-secret-files, decision \S+\)/);
    expect(text(r)).not.toContain('vault');
    const id = /decision (\S+)\)/.exec(text(r))![1];
    const row = app.db.$client.prepare('SELECT agent_name, tool_name, rule_source FROM permission_denials WHERE decision_id = ?').get(id);
    expect(row).toEqual({ agent_name: 'desk', tool_name: 'files__read_text_file', rule_source: 'policy:no-secret-files' });
  });

  it('reports an allowed call\'s outcome to the after_tool_call hooks, with its decision id', async () => {
    const log = join(server.dir, 'finished.jsonl');
    expect(((await client.callTool({ name: 'everything__echo', arguments: { message: 'report me' } })) as CallToolResult).isError).toBeFalsy();
    await within(10_000, () => existsSync(log) && readFileSync(log, 'utf8').includes('report me'));
    const reported = readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>).find((e) => JSON.stringify(e).includes('report me'))!;
    expect(reported).toMatchObject({ event: 'after_tool_call', call: { agent: 'desk', tool: 'everything__echo' }, outcome: 'succeeded' });
    expect(String(reported.decision_id)).toMatch(/\S+/);
  });

  it('forwards an allowed call with the arguments a rewrite hook left: the filesystem server reads one line', async () => {
    const r = (await client.callTool({ name: 'files__read_text_file', arguments: { path: join(root, 'notes.txt') } })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    expect(text(r).trim()).toBe('first line');
  });

  it('ASK `return`: answers at once with the approval to get; once approved, the same call runs once', async () => {
    const target = join(root, 'from-agent.txt');
    const call = () => client.callTool({ name: 'files__write_file', arguments: { path: target, content: 'written by the agent\n' } }) as Promise<CallToolResult>;
    const first = await call();
    expect(first.isError).toBe(true);
    expect(text(first)).toMatch(/needs a person's approval \(approval (\S+), rule hitl:file-writes\)/);
    expect(text(first)).toContain('/approvals?request=');
    expect(existsSync(target)).toBe(false);
    const id = /approval (\S+),/.exec(text(first))![1]!;
    expect((await approve(id)).code).toBe(0);
    const second = await call();
    expect(second.isError).toBeFalsy();
    expect(readFileSync(target, 'utf8')).toBe('written by the agent\n');
    // used once: the next identical call asks again
    expect(text(await call())).toMatch(/needs a person's approval/);
  });

  it('ASK `wait` (a destructive tool, gated by its annotation): holds the call, with progress, until an operator approves; then it runs once', async () => {
    const target = join(root, 'plan.txt');
    const progress: string[] = [];
    const pending = client.callTool(
      { name: 'files__edit_file', arguments: { path: target, edits: [{ oldText: 'friday', newText: 'monday' }] } },
      undefined,
      { onprogress: (p) => progress.push(p.message ?? ''), timeout: 60_000 },
    ) as Promise<CallToolResult>;
    let id = '';
    await within(20_000, () => {
      id = pendingApproval('files__edit_file')?.id ?? '';
      return id !== '';
    });
    expect(readFileSync(target, 'utf8')).toBe('ship on friday\n');
    expect(app.db.$client.prepare('SELECT gate FROM approvals WHERE id = ?').get(id)).toEqual({ gate: 'destructive-mcp' });
    expect((await approve(id)).code).toBe(0);
    const r = await pending;
    expect(r.isError).toBeFalsy();
    expect(readFileSync(target, 'utf8')).toBe('ship on monday\n');
    expect(progress.some((m) => m.includes(id))).toBe(true);
  }, 60_000);

  it('an upstream killed mid-call: the call fails with the reason, its tools leave the list, and it is started again', async () => {
    const changed: number[] = [];
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed.push(Date.now()));
    let started = false;
    const running = client.callTool({ name: 'everything__trigger-long-running-operation', arguments: { duration: 30, steps: 30 } }, undefined, {
      onprogress: () => void (started = true),
      timeout: 60_000,
    }) as Promise<CallToolResult>;
    await within(20_000, () => started);
    // the reference server is a child of the gateway: kill it as a crash would
    const children = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(transport.pid)], { encoding: 'utf8' });
    const everything = children.split('\n').find((l) => l.includes('server-everything'))!;
    process.kill(Number(everything.trim().split(/\s+/)[0]), 'SIGKILL');
    const r = await running;
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/The MCP server "everything" did not answer .*connection closed/i);
    await within(10_000, () => changed.length > 0);
    // back after its backoff (a second), its tools listed again
    await within(20_000, async () => (await client.listTools()).tools.some((t) => t.name === 'everything__echo'));
    const echo = (await client.callTool({ name: 'everything__echo', arguments: { message: 'back' } })) as CallToolResult;
    expect(text(echo)).toContain('back');
  }, 60_000);

  it('ASK `wait` rejected by the operator: answered as a DENY with the reason, and the call never runs', async () => {
    const target = join(root, 'notes.txt');
    const pending = client.callTool({ name: 'files__edit_file', arguments: { path: target, edits: [{ oldText: 'first', newText: 'FIRST' }] } }, undefined, { timeout: 60_000 }) as Promise<CallToolResult>;
    let id = '';
    await within(20_000, () => {
      id = pendingApproval('files__edit_file')?.id ?? '';
      return id !== '';
    });
    expect((await runSwarm(['approvals', 'reject', id, '--as', 'olivia', '--reason', 'not before the audit'], childEnv())).code).toBe(0);
    const r = await pending;
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/Refused by Swarm Permissions: Rejected by an operator \(approval apr_\S+\): not before the audit \(rule hitl:destructive-mcp, decision \S+\)/);
    expect(readFileSync(target, 'utf8')).toContain('first line');
  }, 60_000);

  it('an upstream that writes malformed JSON-RPC: its garbage is dropped, its answers still arrive, nothing crashes', async () => {
    for (let i = 0; i < 2; i++) {
      const r = (await client.callTool({ name: 'noisy__noisy', arguments: {} })) as CallToolResult;
      expect(r.isError).toBeFalsy();
      expect(text(r)).toBe('noisy answered');
    }
  });

  it('a call the upstream does not answer within call_timeout fails with the reason, and does not hold the session', async () => {
    const r = (await client.callTool({ name: 'slow__trigger-long-running-operation', arguments: { duration: 10, steps: 10 } })) as CallToolResult;
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/The MCP server "slow" did not answer .*timed out/i);
    expect(text((await client.callTool({ name: 'everything__echo', arguments: { message: 'still here' } })) as CallToolResult)).toContain('still here');
  }, 30_000);

  it('passes resources and prompts through, namespaced, each read decided like a tool call', async () => {
    const { resources } = await client.listResources();
    const doc = resources.find((r) => r.name === 'everything__architecture.md')!;
    expect(doc.uri).toBe('demo://resource/static/document/architecture.md');
    const read = await client.readResource({ uri: doc.uri });
    expect(JSON.stringify(read.contents)).toContain('Architecture');
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toContain('everything__simple-prompt');
    const prompt = await client.getPrompt({ name: 'everything__simple-prompt' });
    expect(prompt.messages.length).toBeGreaterThan(0);
    await expect(client.getPrompt({ name: 'files__nothing' })).rejects.toThrow(/no prompt "files__nothing"/);
  });

  it('tells the client when the policy changes what it may use (notifications/tools/list_changed)', async () => {
    let changes = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes++);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('everything__get-sum');
    writeFileSync(join(config, 'agents.yaml'), AGENTS.replace('everything__get-sum, ', ''));
    try {
      await within(15_000, () => changes > 0);
      expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('everything__get-sum');
      const r = (await client.callTool({ name: 'everything__get-sum', arguments: { a: 1, b: 2 } })) as CallToolResult;
      expect(text(r)).toMatch(/rule agent_allowlist/);
    } finally {
      writeFileSync(join(config, 'agents.yaml'), AGENTS);
    }
    await within(15_000, async () => (await client.listTools()).tools.some((t) => t.name === 'everything__get-sum'));
  }, 40_000);
});

describe('swarm mcp serve, fuzzed JSON-RPC on stdin', () => {
  it('answers malformed messages with the protocol\'s errors and keeps serving', async () => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'bin/swarm.mjs'), 'mcp', 'serve', '--agent', 'desk'], { env: childEnv(), cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const lines = () => out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { id?: unknown; error?: { code: number }; result?: unknown });
    const send = (line: string) => child.stdin.write(`${line}\n`);
    try {
      send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '0' } } }));
      await within(30_000, () => lines().some((l) => l.id === 1));
      send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
      const garbage = ['{', 'not json at all', '[]', '{"jsonrpc":"2.0"}', '{"jsonrpc":"1.0","id":2,"method":"tools/list"}', '\u0000\u0001', '{"id":{},"method":5}', '9'.repeat(400)];
      for (const g of garbage) send(g);
      // generated: lines that are not JSON, and requests of every method with parameters of any shape
      for (const line of fc.sample(fc.string({ maxLength: 200 }), { numRuns: 40, seed: 26 })) send(line.replace(/[\r\n]/g, ' '));
      const methods = ['tools/call', 'tools/list', 'resources/read', 'resources/list', 'prompts/get', 'ping', 'tasks/get', 'tasks/result', 'completion/complete', 'logging/setLevel', 'x/y'];
      const fuzzed = fc.sample(fc.record({ method: fc.constantFrom(...methods), params: fc.oneof(fc.jsonValue(), fc.dictionary(fc.string(), fc.jsonValue()), fc.record({ name: fc.string(), arguments: fc.jsonValue() })) }), { numRuns: 60, seed: 26 });
      fuzzed.forEach((m, i) => send(JSON.stringify({ jsonrpc: '2.0', id: `fuzz-${i}`, ...m })));
      send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 5 } }));
      send(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'no/such/method' }));
      send(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'nobody__nothing', arguments: {} } }));
      send(JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'tools/list' }));
      await within(30_000, () => [3, 4, 5, 6].every((id) => lines().some((l) => l.id === id)));
      // every generated request is answered, with a result or the protocol's error
      await within(30_000, () => fuzzed.every((_, i) => lines().some((l) => l.id === `fuzz-${i}`)));
      for (const l of lines().filter((x) => String(x.id).startsWith('fuzz-'))) expect(l.error !== undefined || l.result !== undefined).toBe(true);
      // and every line that was not JSON, or not a request, got the protocol's error without an id
      expect(lines().filter((l) => l.id === null && l.error?.code === -32700).length).toBeGreaterThanOrEqual(3);
      expect(lines().some((l) => l.id === null && l.error?.code === -32600)).toBe(true);
      const by = (id: number) => lines().find((l) => l.id === id)!;
      // (the SDK answers a request its schema refuses with an internal error; a bad request all the same, with its id)
      expect([-32602, -32603]).toContain(by(3).error?.code);
      expect(by(4).error?.code).toBe(-32601);
      expect(by(5).error?.code).toBe(-32602);
      expect(by(6).result).toHaveProperty('tools');
      expect(child.exitCode).toBeNull();
    } finally {
      child.kill();
    }
  }, 60_000);
});

describe('swarm mcp serve, deciding over REST (SWARM_URL, SWARM_TOKEN)', () => {
  it('lists, refuses and forwards as the agent of the token', async () => {
    const { client } = await serve([], childEnv({ SWARM_URL: base, SWARM_TOKEN: deskToken }));
    try {
      const names = (await listWhenReady(client)).map((t) => t.name);
      expect(names).toContain('everything__echo');
      expect(names).not.toContain('everything__get-env');
      const denied = (await client.callTool({ name: 'files__read_text_file', arguments: { path: join(root, 'secret.txt') } })) as CallToolResult;
      expect(text(denied)).toMatch(/rule policy:no-secret-files, decision \S+/);
      const echo = (await client.callTool({ name: 'everything__echo', arguments: { message: 'over rest' } })) as CallToolResult;
      expect(text(echo)).toContain('over rest');
    } finally {
      await client.close();
    }
  }, 60_000);

  it('fails closed: when the permission service cannot answer, the call is refused and never reaches the upstream', async () => {
    // the service behind a switch: forwarded while up, 503 once down
    let up = true;
    const proxy = createServer((req, res) => {
      if (!up) return void res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"message":"down for maintenance"}}');
      const forward = httpRequest(`${base}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      req.pipe(forward);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    const { client } = await serve([], childEnv({ SWARM_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, SWARM_TOKEN: deskToken }));
    try {
      await listWhenReady(client);
      up = false;
      const target = join(root, 'made-while-down');
      const r = (await client.callTool({ name: 'files__create_directory', arguments: { path: target } })) as CallToolResult;
      expect(r.isError).toBe(true);
      expect(text(r)).toMatch(/could not decide this call \(the permission service answered 503: down for maintenance\); it is refused/);
      expect(existsSync(target)).toBe(false);
      up = true;
      expect(((await client.callTool({ name: 'files__create_directory', arguments: { path: target } })) as CallToolResult).isError).toBeFalsy();
      expect(existsSync(target)).toBe(true);
    } finally {
      await client.close();
      proxy.closeAllConnections();
      await new Promise((r) => proxy.close(r));
    }
  }, 60_000);

  it('reaches a remote upstream over Streamable HTTP, its headers taken from named variables (here: this server\'s /mcp as the clerk)', async () => {
    const remoteConfig = join(server.dir, 'remote-config');
    mkdirSync(remoteConfig);
    // Another separator than the remote's: its tool everything__echo holds "__", and a tool whose name holds the
    // separator is not listed (it would read as another server's tool: issue 42).
    writeFileSync(join(remoteConfig, 'mcp.yaml'), `separator: "-"\nservers:\n  - id: remote\n    url: ${base}/mcp\n    headers: { Authorization: CLERK_MCP_AUTHORIZATION }\n`);
    const { client } = await serve(['--config-dir', remoteConfig], childEnv({ SWARM_URL: base, SWARM_TOKEN: deskToken, CLERK_MCP_AUTHORIZATION: `Bearer ${clerkToken}` }));
    try {
      let names: string[] = [];
      await within(30_000, async () => {
        names = (await client.listTools()).tools.map((t) => t.name);
        return names.length > 0;
      });
      // the remote gateway lists the clerk's one tool; this one lets the desk use it as remote-everything__echo
      expect(names).toEqual(['remote-everything__echo']);
      const r = (await client.callTool({ name: 'remote-everything__echo', arguments: { message: 'two gateways' } })) as CallToolResult;
      expect(text(r)).toContain('two gateways');
      // a gateway deciding over REST reports what its upstreams list: pinned at first sight on the server, by its agent
      const pinned = app.db.$client.prepare("SELECT e.actor, e.detail_json AS detail FROM security_events e WHERE e.type = 'mcp.tool.pinned' AND e.target = 'remote/everything__echo'").get() as { detail: string };
      expect(JSON.parse(pinned.detail)).toMatchObject({ server: 'remote', tool: 'everything__echo', observed_by: 'agent:desk', accepted_via: 'first_use' });
    } finally {
      await client.close();
    }
  }, 60_000);

  it('refuses to start when a variable config/mcp.yaml names is not set, at its line', async () => {
    const remoteConfig = join(server.dir, 'unset-config');
    mkdirSync(remoteConfig);
    writeFileSync(join(remoteConfig, 'mcp.yaml'), 'servers:\n  - id: remote\n    url: https://x.example/mcp\n    headers: { Authorization: NOT_SET_ANYWHERE }\n');
    const r = await runSwarm(['mcp', 'serve', '--agent', 'desk', '--config-dir', remoteConfig], childEnv());
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/mcp\.yaml:4:31: servers\.0\.headers\.Authorization: the environment variable NOT_SET_ANYWHERE is not set/);
  });

  it('refuses to start with a token that is not an agent\'s, saying why', async () => {
    const r = await runSwarm(['mcp', 'serve'], childEnv({ SWARM_URL: base, SWARM_TOKEN: viewerToken }));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/not an agent's token/);
  });
});

describe('/mcp over Streamable HTTP', () => {
  it('answers a call without a token 401, naming the protected-resource metadata', async () => {
    const r = await fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toBe(`Bearer realm="swarm-permissions", resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`);
    const meta = await (await fetch(`${base}/.well-known/oauth-protected-resource/mcp`)).json();
    expect(meta).toMatchObject({ resource: `${base}/mcp`, bearer_methods_supported: ['header'] });
  });

  it('refuses a person\'s token: the endpoint serves agents', async () => {
    const r = await fetch(`${base}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${viewerToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(r.status).toBe(403);
  });

  it('answers fuzzed JSON-RPC bodies with the protocol\'s errors (4xx), never a 500, and keeps serving', async () => {
    const headers = { authorization: `Bearer ${deskToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const init = await fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '0' } } }) });
    const session = init.headers.get('mcp-session-id')!;
    await init.text();
    const inSession = { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
    const bodies = [
      ...fc.sample(fc.string({ maxLength: 300 }), { numRuns: 25, seed: 7 }),
      ...fc.sample(fc.jsonValue(), { numRuns: 25, seed: 7 }).map((v) => JSON.stringify(v)),
      ...fc.sample(fc.record({ jsonrpc: fc.constantFrom('2.0', '1.0'), id: fc.oneof(fc.integer(), fc.string(), fc.constant(null)), method: fc.string(), params: fc.jsonValue() }), { numRuns: 25, seed: 7 }).map((v) => JSON.stringify(v)),
    ];
    const statuses = new Set<number>();
    for (const body of bodies) {
      const r = await fetch(`${base}/mcp`, { method: 'POST', headers: inSession, body });
      statuses.add(r.status);
      await r.text();
    }
    expect([...statuses].every((st) => st === 200 || st === 202 || (st >= 400 && st < 500))).toBe(true);
    expect(statuses.has(400)).toBe(true);
    const list = await fetch(`${base}/mcp`, { method: 'POST', headers: inSession, body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/list' }) });
    expect(list.status).toBe(200);
    expect(await list.text()).toContain('everything__echo');
    await fetch(`${base}/mcp`, { method: 'DELETE', headers: inSession });
  }, 60_000);

  it('resumes a broken stream: the events after Last-Event-ID are sent again on a GET of the session', async () => {
    const headers = { authorization: `Bearer ${deskToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const post = (body: unknown, session?: string) =>
      fetch(`${base}/mcp`, { method: 'POST', headers: { ...headers, ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } : {}) }, body: JSON.stringify(body) });
    const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    const session = init.headers.get('mcp-session-id')!;
    await init.text();
    await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)).text();
    await within(30_000, async () => {
      const r = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, session);
      return (await r.text()).includes('everything__trigger-long-running-operation');
    });
    const call = await post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'everything__trigger-long-running-operation', arguments: { duration: 2, steps: 4 }, _meta: { progressToken: 'p' } } }, session);
    // read up to the first event that has an id, then drop the connection as a network failure would
    const reader = call.body!.getReader();
    let seen = '';
    let lastId: string | undefined;
    while (!lastId) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += Buffer.from(value).toString('utf8');
      lastId = /^id: (.+)$/m.exec(seen)?.[1];
    }
    await reader.cancel();
    expect(lastId).toBeDefined();
    // (409 until the server has noticed that the broken stream is gone)
    let resumed: Response | undefined;
    await within(10_000, async () => {
      resumed = await fetch(`${base}/mcp`, { headers: { authorization: `Bearer ${deskToken}`, accept: 'text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18', 'last-event-id': lastId! } });
      if (resumed.status === 409) await resumed.body?.cancel();
      return resumed.status !== 409;
    });
    expect(resumed!.status).toBe(200);
    const replay = resumed!.body!.getReader();
    let after = '';
    while (!after.includes('"id":3')) {
      const { value, done } = await replay.read();
      if (done) break;
      after += Buffer.from(value).toString('utf8');
    }
    await replay.cancel();
    // what came after the last event it had: further progress, and the call's result
    expect(after).toContain('notifications/progress');
    expect(after).toMatch(/"result":\{"content":\[\{"type":"text","text":"Long running operation completed/);
    expect(after).not.toContain(`id: ${lastId}\n`);
    await fetch(`${base}/mcp`, { method: 'DELETE', headers: { authorization: `Bearer ${deskToken}`, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } });
  }, 60_000);

  it('serves a session as the token\'s agent: filtered list, denials, calls; another agent cannot use its session', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${deskToken}` } } });
    const client = new Client({ name: 'remote-test', version: '1' });
    await client.connect(transport);
    try {
      expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      const names = (await listWhenReady(client)).map((t) => t.name);
      expect(names).toContain('files__write_file');
      expect(names).not.toContain('everything__get-env');
      const denied = (await client.callTool({ name: 'files__read_text_file', arguments: { path: join(root, 'secret.txt') } })) as CallToolResult;
      expect(denied.isError).toBe(true);
      expect(text(denied)).toMatch(/rule policy:no-secret-files/);
      expect(text((await client.callTool({ name: 'everything__get-sum', arguments: { a: 2, b: 3 } })) as CallToolResult)).toContain('5');
      // A client that supports tasks: the ASK is a task that works until the operator decides, even where on_ask says return.
      const target = join(root, 'by-task.txt');
      const seen: string[] = [];
      let result: CallToolResult | undefined;
      const stream = client.experimental.tasks.callToolStream({ name: 'files__write_file', arguments: { path: target, content: 'via a task\n' } }, CallToolResultSchema, { task: { ttl: 60_000 } });
      for await (const m of stream) {
        if (m.type === 'taskCreated') seen.push('created');
        if (m.type === 'taskStatus') {
          seen.push(`${m.task.status}: ${m.task.statusMessage ?? ''}`);
          const id = /\((apr_[\w-]+)\)/.exec(m.task.statusMessage ?? '')?.[1];
          if (id && !seen.includes('approved')) {
            expect(existsSync(target)).toBe(false);
            seen.push('approved');
            expect((await approve(id)).code).toBe(0);
          }
        }
        if (m.type === 'result') result = m.result as CallToolResult;
        if (m.type === 'error') throw m.error;
      }
      expect(seen[0]).toBe('created');
      expect(seen.some((x) => x.startsWith("working: Waiting for a person's approval"))).toBe(true);
      expect(result?.isError).toBeFalsy();
      expect(readFileSync(target, 'utf8')).toBe('via a task\n');
      // the clerk's token with the desk's session: no such session
      const stolen = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${clerkToken}`, 'mcp-session-id': transport.sessionId!, 'mcp-protocol-version': '2025-06-18', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
      });
      expect(stolen.status).toBe(404);
      // the clerk sees only its own tool
      const clerk = new Client({ name: 'clerk', version: '1' });
      await clerk.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${clerkToken}` } } }));
      expect((await clerk.listTools()).tools.map((t) => t.name)).toEqual(['everything__echo']);
      // nothing to read for the clerk: no resource is listed, and a read is refused with the rule
      expect((await clerk.listResources()).resources).toEqual([]);
      await expect(clerk.readResource({ uri: 'demo://resource/static/document/architecture.md' })).rejects.toThrow(/Refused by Swarm Permissions.*agent_allowlist/);
      await clerk.close();
    } finally {
      await transport.terminateSession();
      await client.close();
    }
  }, 60_000);
});
