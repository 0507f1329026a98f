/**
 * A Mastra agent (`@mastra/core` 0.24) whose tools ask Swarm Permissions before they run: one line, withSwarm(). The
 * model is a scripted implementation of the language model interface Mastra streams from, so the example runs
 * offline; put your provider's model in its place and nothing else changes.
 *
 *   npm run examples                                   starts a server, plays the operator, runs every example
 *   SWARM_URL=http://127.0.0.1:8000 SWARM_TOKEN=swt_… SWARM_AGENT=deployer node --import tsx examples/mastra.ts
 *
 * What it shows, and checks (exit 1 when it saw otherwise):
 *   1. The agent is given only the tools the deployer may ever use: export_raw_data is left out (withoutHiddenTools).
 *   2. deploy_serving is gated: with onAsk 'interrupt' the tool suspends the run (Mastra's tool suspension), its payload
 *      the approval and its link; once an operator approved it (npm run examples does, as an operator would), the
 *      resumed run deploys, once.
 */
import { Mastra } from '@mastra/core';
import { Agent } from '@mastra/core/agent';
import { InMemoryStore } from '@mastra/core/storage';
import { createTool } from '@mastra/core/tools';
import { z } from 'zod';
import { SwarmClient, withoutHiddenTools } from '@swarm-permissions/client';
import { withSwarm, type ApprovalSuspension } from '@swarm-permissions/client/mastra';

const swarm = new SwarmClient({ agent: process.env.SWARM_AGENT ?? 'deployer' });
const ran: string[] = [];
const all = {
  export_raw_data: createTool({ id: 'export_raw_data', description: 'Export raw rows of a dataset.', inputSchema: z.object({ dataset_id: z.string() }), execute: async () => (ran.push('export_raw_data'), { rows: 120_000 }) }),
  deploy_serving: createTool({
    id: 'deploy_serving',
    description: 'Deploy a model to serving.',
    inputSchema: z.object({ model_id: z.string(), env: z.string() }),
    execute: async ({ context }) => (ran.push('deploy_serving'), { deployed: context.model_id }),
  }),
};
const usable = await withoutHiddenTools(all, swarm);
const tools = withSwarm(usable as typeof all, swarm, { onAsk: 'interrupt' });

// The scripted model (the AI SDK's language model interface v2, as Mastra 0.24 streams it): a tool call, then a sentence.
const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
const stream = (parts: unknown[]) => new ReadableStream({ start: (c) => (parts.forEach((p) => c.enqueue(p)), c.close()) });
let step = 0;
const model = {
  specificationVersion: 'v2',
  provider: 'scripted',
  modelId: 'scripted',
  supportedUrls: {},
  doGenerate: async () => {
    throw new Error('this scripted model only streams');
  },
  doStream: async () => ({
    stream: stream(
      step++ === 0
        ? [{ type: 'stream-start', warnings: [] }, { type: 'tool-call', toolCallId: 'call_deploy', toolName: 'deploy_serving', input: JSON.stringify({ model_id: 'credit-risk-v7', env: 'prod' }) }, { type: 'finish', finishReason: 'tool-calls', usage }]
        : [{ type: 'stream-start', warnings: [] }, { type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'Deployed after approval.' }, { type: 'text-end', id: 't' }, { type: 'finish', finishReason: 'stop', usage }],
    ),
  }),
};
// Storage keeps the suspended run's snapshot until it is resumed.
const mastra = new Mastra({ agents: { deployer: new Agent({ name: 'deployer', instructions: 'You deploy models.', model: model as never, tools }) }, storage: new InMemoryStore(), logger: false });
const agent = mastra.getAgent('deployer');

console.log(`the agent is given: ${Object.keys(tools).join(', ')}`);
const first = await agent.stream('Deploy credit-risk-v7 to prod.');
let suspension: ApprovalSuspension | undefined;
for await (const chunk of first.fullStream) if (chunk.type === 'tool-call-suspended') suspension = (chunk.payload as { suspendPayload: ApprovalSuspension }).suspendPayload;
if (suspension) console.log(`waiting for approval ${suspension.approval_id}: ${suspension.url}`);
const outcome = suspension ? await swarm.waitForApproval(suspension.approval_id, { waitMs: 120_000 }) : undefined;
console.log(`approval ${suspension?.approval_id}: ${outcome?.status}`);
const resumed = await agent.resumeStream({ resumed: true }, { runId: first.runId, toolCallId: 'call_deploy' });
let result: unknown;
for await (const chunk of resumed.fullStream) if (chunk.type === 'tool-result') result = (chunk.payload as { result: unknown }).result;
console.log(`deploy_serving: ${JSON.stringify(result)}`);

const expect = (ok: boolean, said: string) => {
  if (!ok) {
    console.error(`NOT AS SAID: ${said}`);
    process.exitCode = 1;
  }
};
expect(!('export_raw_data' in tools) && 'deploy_serving' in tools, '1. export_raw_data is left out of the agent\'s tools');
expect(suspension?.type === 'swarm_approval' && outcome?.status === 'approved' && JSON.stringify(result) === JSON.stringify({ deployed: 'credit-risk-v7' }), '2. deploy_serving suspends, and runs once approved');
expect(JSON.stringify(ran) === JSON.stringify(['deploy_serving']), 'only the approved tool ran, once');
