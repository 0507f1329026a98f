/**
 * The client as a user installs it (issue 40): `npm pack` of packages/client, the tarball installed with one framework
 * (the Vercel AI SDK, from npm's cache: the versions this repository's lock holds) into an empty folder outside the
 * repository, an agent written there against the installed package only, type-checked as a user's TypeScript would
 * be (NodeNext), and run against a real decision listener on a real SQLite file: a denied call never runs and the
 * model reads why, an allowed one runs.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type SqliteApp } from '@/lib/app';
import { createFrontServer } from '@/lib/server/front';
import { TEST_AGENTS } from '@/lib/test-support/temp-app';

const ROOT = resolve(import.meta.dirname, '..');
const lockVersion = (name: string): string => (JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version: string }> }).packages[`node_modules/${name}`]!.version;

/** The user's agent: only the installed package, the framework and its mock model. */
const AGENT = `import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { SwarmClient, type CheckAnswer } from '@swarm-permissions/client';
import { withSwarm, type Refusal } from '@swarm-permissions/client/ai-sdk';

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
let step = 0;
const model = new MockLanguageModelV3({
  doGenerate: async () =>
    step++ === 0
      ? {
          content: [
            { type: 'tool-call', toolCallId: 'call_export', toolName: 'export_raw_data', input: JSON.stringify({ dataset_id: 'customers' }) },
            { type: 'tool-call', toolCallId: 'call_drift', toolName: 'monitor_drift', input: JSON.stringify({ model_id: 'm-1' }) },
          ],
          finishReason: { unified: 'tool-calls', raw: undefined },
          usage,
          warnings: [],
        }
      : { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] },
});
const ran: string[] = [];
const tools = {
  export_raw_data: tool({ inputSchema: z.object({ dataset_id: z.string() }), execute: async () => (ran.push('export_raw_data'), { rows: 1 }) }),
  monitor_drift: tool({ inputSchema: z.object({ model_id: z.string() }), execute: async () => (ran.push('monitor_drift'), { drift: 0.01 }) }),
};
const swarm = new SwarmClient({ agent: 'deployer' });
const first: CheckAnswer = await swarm.check({ tool: 'monitor_drift', arguments: { model_id: 'm-0' }, dryRun: true });
const result = await generateText({ model, tools: withSwarm(tools, swarm), prompt: 'go', stopWhen: stepCountIs(2) });
const refusal = result.steps[0]!.toolResults.find((r) => r.toolCallId === 'call_export')!.output as Refusal;
console.log(JSON.stringify({ dryRun: first.decision, ran, refusal, text: result.text }));
`;

/** A command's output; a failure says what it printed. */
function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): string {
  const r = spawnSync(command, args, { ...options, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** The same, without blocking this process. */
function runAsync(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { ...options, encoding: 'utf8' }, (error, stdout, stderr) => (error ? reject(new Error(`${command} ${args.join(' ')} failed: ${error.message}\n${stdout}\n${stderr}`)) : resolve(stdout)));
  });
}

let dir = '';
let app: SqliteApp;
let front: Server;
let url = '';
let token = '';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'swarm-client-pack-'));
  const config = join(dir, 'config');
  mkdirSync(config);
  writeFileSync(join(config, 'agents.yaml'), TEST_AGENTS);
  writeFileSync(join(config, 'permission_policies.yaml'), 'rules: []\n');
  app = createApp({ dbPath: join(dir, 'swarm.db'), configDir: config, env: {} });
  token = await app.auth.createToken({ agent: 'deployer' }, 'packed client');
  front = createFrontServer({ app, upstream: { host: '127.0.0.1', port: 1 } });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => front.close(r));
  front.closeAllConnections();
  app.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the packed client', () => {
  it('installs into an empty folder with the AI SDK, type-checks as a user\'s code, and guards an agent there', async () => {
    const packs = join(dir, 'packs');
    mkdirSync(packs);
    run('npm', ['pack', '--pack-destination', packs, '--silent'], { cwd: join(ROOT, 'packages', 'client') });
    const [tarball] = readdirSync(packs);
    expect(tarball).toMatch(/^swarm-permissions-client-\d+\.\d+\.\d+\.tgz$/);

    const user = join(dir, 'user-project');
    mkdirSync(user);
    writeFileSync(join(user, 'package.json'), JSON.stringify({ name: 'user-project', private: true, type: 'module' }));
    // From npm's cache (npm ci filled it): the framework and zod at the versions this repository is tested with.
    run(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', join(packs, tarball!), `ai@${lockVersion('ai')}`, `zod@${lockVersion('zod')}`, `@types/node@${lockVersion('@types/node')}`],
      { cwd: user },
    );
    writeFileSync(join(user, 'agent.ts'), AGENT);
    writeFileSync(
      join(user, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true, outDir: 'out', types: ['node'] }, include: ['agent.ts'] }),
    );
    // Type-checked and compiled as the user's TypeScript would (the package's own .d.ts, through its exports).
    run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', user], { cwd: user });
    // (in a child this process does not wait for: the decision listener answering it runs in this process)
    const out = await runAsync(process.execPath, [join(user, 'out', 'agent.js')], { cwd: user, env: { ...process.env, SWARM_URL: url, SWARM_TOKEN: token } });
    const seen = JSON.parse(out) as { dryRun: string; ran: string[]; refusal: Record<string, unknown>; text: string };
    expect(seen).toMatchObject({ dryRun: 'ALLOW', ran: ['monitor_drift'], refusal: { refused: true, decision: 'DENY', rule_source: 'agent_allowlist' }, text: 'done' });
    // The package brought no runtime dependency of its own.
    const installed = JSON.parse(readFileSync(join(user, 'node_modules', '@swarm-permissions', 'client', 'package.json'), 'utf8')) as { dependencies?: object };
    expect(installed.dependencies).toBeUndefined();
  }, 180_000);
});
