/**
 * What the client package costs (issue 40): the client's own cost per decision over loopback, and each adapter's
 * overhead, each against the bare call it stands for, measured in the same run against the same server (the product
 * as `npm start` runs it, in a child process, on a fresh SQLite database).
 *
 *   client:   SwarmClient.check(call)          against a bare fetch POST of the same body, parsed        (target ≤ 0.2 ms)
 *   adapters: the wrapped tool (AI SDK execute, Claude Agent SDK canUseTool, LangChain wrapToolCall, OpenAI Agents
 *             invoke, Mastra execute) against client.check plus the tool's own function, as code without the adapter would do it
 *             (target ≤ 0.05 ms each)
 *
 * Each pair is measured interleaved (A, B, A, B…) in rounds, sequentially (one call at a time: the cost of a call,
 * not throughput), after a warm-up; the cost is the difference of the medians. Every call is an ALLOW of
 * monitor_drift for the deployer (nothing written), so the server's answer is the same each time.
 *
 *   node --import tsx bench/client.ts            (BENCH_CLIENT_CALLS=N per side and round, default 1,000)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '@/lib/app';
import { freePort } from '@/lib/server/serve';
import { SwarmClient } from '../packages/client/src/index';
import { withSwarm as aiSdk } from '../packages/client/src/ai-sdk';
import { claudeAgentPermissions } from '../packages/client/src/claude-agent-sdk';
import { swarmMiddleware } from '../packages/client/src/langchain';
import { withSwarm as openAiAgents } from '../packages/client/src/openai-agents';
import { withSwarm as mastraTools } from '../packages/client/src/mastra';
import { createTool as mastraTool } from '@mastra/core/tools';
import { ensureBuild, ROOT, spawnLogged, stop, waitUp } from './http';
import { fmt, isMain } from './util';
import { tool as aiTool } from 'ai';
import { tool as oaTool } from '@openai/agents-core';
import { ToolMessage } from 'langchain';
import { z } from 'zod';

const TOKEN = 'bench-client-agent-token-0123456789abcdef';
export const CLIENT_TARGET_MS = 0.2;
export const ADAPTER_TARGET_MS = 0.05;

export interface ClientBenchRow {
  what: string;
  /** median ms of the bare call, and of the measured one */
  bareMs: number;
  measuredMs: number;
  /** measured − bare (ms) */
  costMs: number;
  targetMs: number;
  met: boolean;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** Medians of `bare` and `measured`, interleaved call by call over `rounds` rounds of `calls` each. */
async function pair(bare: () => Promise<unknown>, measured: () => Promise<unknown>, calls: number, rounds = 3): Promise<[number, number]> {
  for (let i = 0; i < 200; i++) {
    await bare();
    await measured();
  }
  const a: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < calls; i++) {
      let t = performance.now();
      await bare();
      a.push(performance.now() - t);
      t = performance.now();
      await measured();
      b.push(performance.now() - t);
    }
  }
  return [median(a), median(b)];
}

export async function runClientBench(options: { calls?: number; log?: (line: string) => void } = {}): Promise<ClientBenchRow[]> {
  const log = options.log ?? (() => undefined);
  const calls = options.calls ?? Number(process.env.BENCH_CLIENT_CALLS ?? 1_000);
  const dir = mkdtempSync(join(process.env.BENCH_TMPDIR ?? tmpdir(), 'swarm-bench-client-'));
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'production',
    PORT: String(port),
    SWARM_DB: join(dir, 'swarm.db'),
    SWARM_CONFIG_DIR: 'config',
    SWARM_PROFILE: '',
    SWARM_LOG_LEVEL: 'error',
    // A throwaway benchmark database: its signing key may sit beside it (a real server refuses that).
    SWARM_AUDIT_KEY_BESIDE_DB: '1',
  };
  let server: ReturnType<typeof spawnLogged> | undefined;
  try {
    ensureBuild(env, log);
    const app = createApp({ dbPath: env.SWARM_DB!, configDir: join(ROOT, 'config'), env });
    try {
      await app.bootstrap();
      await app.auth.ensureToken(TOKEN, { agent: 'deployer' }, 'bench client');
    } finally {
      app.close();
    }
    const url = `http://127.0.0.1:${port}`;
    server = spawnLogged(['--import', 'tsx', 'scripts/start.ts'], env);
    await waitUp(url, server.child, server.output);
    const client = new SwarmClient({ url, token: TOKEN, agent: 'deployer' });
    const call = { tool: 'monitor_drift', arguments: { model_id: 'm-bench' } };
    const body = JSON.stringify({ agent: 'deployer', tool: 'monitor_drift', arguments: { model_id: 'm-bench' } });
    const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', accept: 'application/json' };
    const bareFetch = async () => (await fetch(`${url}/api/v1/permissions/check`, { method: 'POST', headers, body })).json();
    const first = (await client.check(call)) as { decision: string };
    if (first.decision !== 'ALLOW') throw new Error(`bench client: monitor_drift was answered ${JSON.stringify(first)}, not ALLOW`);
    /** The tool's own function: nothing to do. */
    const run = async (_input: unknown) => ({ drift: 0.01 });
    /** The bare equivalent of every adapter: ask, then run. */
    const checkThenRun = async () => {
      const d = await client.check(call);
      if (d.decision === 'ALLOW') await run(d.arguments ?? call.arguments);
    };
    const rows: ClientBenchRow[] = [];
    const add = (what: string, [bareMs, measuredMs]: [number, number], targetMs: number) => {
      const costMs = measuredMs - bareMs;
      rows.push({ what, bareMs, measuredMs, costMs, targetMs, met: costMs <= targetMs });
      log(`bench client: ${what}: ${fmt(measuredMs)} ms against ${fmt(bareMs)} ms bare: ${fmt(costMs)} ms (target ≤ ${targetMs} ms)`);
    };

    add('SwarmClient.check against a bare fetch', await pair(bareFetch, () => client.check(call), calls), CLIENT_TARGET_MS);

    const ai = aiSdk({ monitor_drift: aiTool({ inputSchema: z.object({ model_id: z.string() }), execute: run }) }, client);
    const aiOptions = { toolCallId: 'call_bench', messages: [] };
    add('AI SDK tool execute', await pair(checkThenRun, () => ai.monitor_drift.execute!(call.arguments, aiOptions) as Promise<unknown>, calls), ADAPTER_TARGET_MS);

    const claude = claudeAgentPermissions(client);
    let n = 0;
    add(
      'Claude Agent SDK canUseTool',
      await pair(
        () => client.check(call),
        () => claude.canUseTool('monitor_drift', call.arguments, { signal: new AbortController().signal, toolUseID: `toolu_${++n}`, requestId: `r-${n}` }),
        calls,
      ),
      ADAPTER_TARGET_MS,
    );

    const middleware = swarmMiddleware(client, { hideUnusable: false });
    const wrap = middleware.wrapToolCall!;
    const handler = async () => new ToolMessage({ content: JSON.stringify(await run(call.arguments)), tool_call_id: 'lc_bench' });
    const lcRequest = { toolCall: { id: 'lc_bench', name: 'monitor_drift', args: call.arguments }, tool: undefined, state: { messages: [] }, runtime: {} } as never;
    add('LangChain wrapToolCall', await pair(checkThenRun, () => wrap(lcRequest, handler as never) as Promise<unknown>, calls), ADAPTER_TARGET_MS);

    const [oa] = openAiAgents([oaTool({ name: 'monitor_drift', description: 'drift', parameters: z.object({ model_id: z.string() }), execute: run })], client);
    const oaDetails = { toolCall: { type: 'function_call' as const, callId: 'oa_bench', name: 'monitor_drift', arguments: JSON.stringify(call.arguments) } };
    const input = JSON.stringify(call.arguments);
    add('OpenAI Agents function tool invoke', await pair(checkThenRun, () => (oa as { invoke: (c: unknown, i: string, d: unknown) => Promise<unknown> }).invoke({}, input, oaDetails), calls), ADAPTER_TARGET_MS);

    const mastra = mastraTools({ monitor_drift: mastraTool({ id: 'monitor_drift', description: 'drift', inputSchema: z.object({ model_id: z.string() }), execute: async ({ context }) => run(context) }) }, client);
    const mastraExecute = mastra.monitor_drift.execute as (context: unknown, options: unknown) => Promise<unknown>;
    add('Mastra tool execute', await pair(checkThenRun, () => mastraExecute({ context: call.arguments, runtimeContext: undefined }, { toolCallId: 'ma_bench', messages: [] }), calls), ADAPTER_TARGET_MS);
    return rows;
  } finally {
    if (server) await stop(server.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

export function formatClientBench(rows: readonly ClientBenchRow[]): string {
  const lines = ['| what | bare (median) | with the client or adapter | cost | target |', '| --- | ---: | ---: | ---: | --- |'];
  for (const r of rows) lines.push(`| ${r.what} | ${fmt(r.bareMs)} ms | ${fmt(r.measuredMs)} ms | ${fmt(r.costMs)} ms | ≤ ${r.targetMs} ms (${r.met ? 'met' : '**missed**'}) |`);
  return lines.join('\n');
}

if (isMain(import.meta.url)) {
  const rows = await runClientBench({ log: (l) => console.log(l) });
  console.log(formatClientBench(rows));
  process.exit(rows.every((r) => r.met) ? 0 : 1);
}
