/**
 * The MCP gateway's cost: the latency it adds to one tools/call, against calling the same upstream directly in the
 * same run (the reference), and the calls per second through it.
 *
 *   node --import tsx bench/mcp.ts              # 2,000 calls per row
 *   node --import tsx bench/mcp.ts --calls 500
 *
 * Upstream: the reference server @modelcontextprotocol/server-everything on stdio, its `echo` tool. Rows:
 * - direct: the SDK client calls the upstream itself (the reference);
 * - gateway in process: the SDK client talks to the gateway over an in-memory transport, the gateway decides on a
 *   temp SQLite file (allowlist, policy, hooks: the product's path) and forwards to the same upstream: what deciding
 *   and forwarding add;
 * - swarm mcp serve: the client launches the real command on stdio, as Claude Desktop would: the whole added latency,
 *   the second JSON-RPC hop and process included.
 * Calls per second: 16 calls in flight at a time through the in-process gateway, against the same directly.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createApp } from '@/lib/app';
import { InProcessDecider } from '@/lib/mcp/decider';
import { McpGateway } from '@/lib/mcp/gateway';
import { UpstreamPool } from '@/lib/mcp/upstreams';
import { fmt, fmtInt, isMain, markdownTable, nowNs, percentiles } from './util';

export const MCP_ADDED_P50_TARGET_MS = 1;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EVERYTHING = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

export interface McpBenchRow {
  label: string;
  calls: number;
  p50Ms: number;
  p99Ms: number;
  /** p50 minus the direct p50 of the same run */
  addedP50Ms: number | null;
}

export interface McpBenchResult {
  rows: McpBenchRow[];
  throughput: { label: string; callsPerSec: number }[];
}

async function timeCalls(client: Client, tool: string, calls: number): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < 200; i++) await client.callTool({ name: tool, arguments: { message: `warm ${i}` } });
  const ms = new Float64Array(calls);
  for (let i = 0; i < calls; i++) {
    const t = nowNs();
    await client.callTool({ name: tool, arguments: { message: `call ${i}` } });
    ms[i] = Number(nowNs() - t) / 1e6;
  }
  const [p50, p99] = percentiles(ms, calls, [50, 99]);
  return { p50: p50!, p99: p99! };
}

async function throughput(client: Client, tool: string, calls: number, inFlight = 16): Promise<number> {
  const t = nowNs();
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < calls) {
        next++;
        await client.callTool({ name: tool, arguments: { message: 'x' } });
      }
    }),
  );
  return calls / (Number(nowNs() - t) / 1e9);
}

export async function runMcpBench(options: { calls?: number; log?: (line: string) => void } = {}): Promise<McpBenchResult> {
  const calls = options.calls ?? 2_000;
  const log = options.log ?? (() => {});
  const dir = mkdtempSync(join(tmpdir(), 'swarm-bench-mcp-'));
  const config = join(dir, 'config');
  cpSync(join(ROOT, 'config'), config, { recursive: true });
  writeFileSync(join(config, 'mcp.yaml'), `servers:\n  - id: everything\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(EVERYTHING)}, stdio]\n`);
  writeFileSync(join(config, 'agents.yaml'), 'agents:\n  bench:\n    tools: [everything__echo]\n');
  writeFileSync(join(config, 'policy_tests.yaml'), 'tests: []\n');
  mkdirSync(join(dir, 'data'));
  const env = { ...process.env, SWARM_DB: join(dir, 'data', 'bench.db'), SWARM_CONFIG_DIR: config, SWARM_POLICY_FILE: join(config, 'permission_policies.yaml'), SWARM_PROFILE: '', SWARM_URL: '', SWARM_TOKEN: '' };
  const rows: McpBenchRow[] = [];
  const tput: McpBenchResult['throughput'] = [];
  const app = createApp({ dbPath: env.SWARM_DB, configDir: config, env, profile: '' });
  const direct = new Client({ name: 'bench-direct', version: '1' });
  const pool = new UpstreamPool(() => app.mcpFile.current);
  const viaGateway = new Client({ name: 'bench-gateway', version: '1' });
  const served = new Client({ name: 'bench-serve', version: '1' });
  try {
    await direct.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'pipe' }));
    log('mcp: direct calls');
    const ref = await timeCalls(direct, 'echo', calls);
    rows.push({ label: 'direct to the upstream (reference)', calls, p50Ms: ref.p50, p99Ms: ref.p99, addedP50Ms: null });

    const gateway = new McpGateway(pool);
    pool.sync();
    await pool.settled();
    const server = gateway.session(new InProcessDecider(app, { kind: 'agent', id: 'bench', role: 'viewer', agent: 'bench' }, undefined));
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    await viaGateway.connect(b);
    log('mcp: through the gateway, in process');
    const inProc = await timeCalls(viaGateway, 'everything__echo', calls);
    rows.push({ label: 'through the gateway, in process (SQLite)', calls, p50Ms: inProc.p50, p99Ms: inProc.p99, addedP50Ms: inProc.p50 - ref.p50 });

    log('mcp: through swarm mcp serve on stdio');
    await served.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [join(ROOT, 'bin/swarm.mjs'), 'mcp', 'serve', '--agent', 'bench'],
        env: Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)),
        stderr: 'pipe',
      }),
    );
    for (let i = 0; i < 100 && !(await served.listTools()).tools.some((t) => t.name === 'everything__echo'); i++) await new Promise((r) => setTimeout(r, 100));
    const viaServe = await timeCalls(served, 'everything__echo', calls);
    rows.push({ label: 'through swarm mcp serve (stdio, SQLite)', calls, p50Ms: viaServe.p50, p99Ms: viaServe.p99, addedP50Ms: viaServe.p50 - ref.p50 });

    log('mcp: calls per second');
    tput.push({ label: 'direct, 16 in flight', callsPerSec: await throughput(direct, 'echo', calls) });
    tput.push({ label: 'through the gateway in process, 16 in flight', callsPerSec: await throughput(viaGateway, 'everything__echo', calls) });
  } finally {
    await Promise.all([direct.close(), viaGateway.close(), served.close()].map((p) => p.catch(() => {})));
    await pool.close();
    app.close();
    rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 25 });
  }
  return { rows, throughput: tput };
}

export function formatMcpResult(r: McpBenchResult): string {
  return [
    markdownTable(
      ['path', 'calls', 'p50 ms', 'p99 ms', 'added p50 ms'],
      r.rows.map((row) => [row.label, fmtInt(row.calls), fmt(row.p50Ms), fmt(row.p99Ms), row.addedP50Ms === null ? '–' : fmt(row.addedP50Ms)]),
    ),
    '',
    markdownTable(['calls per second', ''], r.throughput.map((t) => [t.label, fmtInt(t.callsPerSec)])),
  ].join('\n');
}

if (isMain(import.meta.url)) {
  const i = process.argv.indexOf('--calls');
  const result = await runMcpBench({ calls: i > 0 ? Number(process.argv[i + 1]) : undefined, log: (l) => console.error(l) });
  console.log(formatMcpResult(result));
  const added = result.rows.find((r) => r.label.includes('in process'))?.addedP50Ms ?? NaN;
  console.log(`\nadded p50 in process: ${fmt(added)} ms (target < ${MCP_ADDED_P50_TARGET_MS} ms): ${added < MCP_ADDED_P50_TARGET_MS ? 'met' : 'MISSED'}`);
}
