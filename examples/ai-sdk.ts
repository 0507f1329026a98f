/**
 * An agent on the Vercel AI SDK (`ai` 6) whose tools ask Swarm Permissions before they run: one line, withSwarm().
 * The model here is the SDK's own mock with scripted tool calls, so the example runs offline; put your provider's
 * model in its place and nothing else changes.
 *
 *   npm run examples                                   starts a server, plays the operator, runs every example
 *   SWARM_URL=http://127.0.0.1:8000 SWARM_TOKEN=swt_… SWARM_AGENT=deployer node --import tsx examples/ai-sdk.ts
 *
 * What it shows, and checks (exit 1 when it saw otherwise):
 *   1. export_raw_data is not among the deployer's tools: DENY. The tool never runs; the model reads the refusal as the
 *      tool's result, with the rule (agent_allowlist) and the decision id.
 *   2. monitor_drift is the deployer's, ungated: ALLOW. It runs, and its outcome is reported with its decision id.
 *   3. deploy_serving is gated (hitl:deploy): the call is held, the link to the request is printed, and it runs once an
 *      operator approved it on the console (npm run examples approves it as an operator would).
 */
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { SwarmClient } from '@swarm-permissions/client';
import { withSwarm, type Refusal } from '@swarm-permissions/client/ai-sdk';

const swarm = new SwarmClient({ agent: process.env.SWARM_AGENT ?? 'deployer' });
const ran: string[] = [];
const tools = withSwarm(
  {
    export_raw_data: tool({ description: 'Export raw rows of a dataset.', inputSchema: z.object({ dataset_id: z.string() }), execute: async () => (ran.push('export_raw_data'), { rows: 120_000 }) }),
    monitor_drift: tool({ description: 'Read the drift of a model in serving.', inputSchema: z.object({ model_id: z.string() }), execute: async () => (ran.push('monitor_drift'), { drift: 0.02 }) }),
    deploy_serving: tool({
      description: 'Deploy a model to serving.',
      inputSchema: z.object({ model_id: z.string(), env: z.enum(['staging', 'prod']) }),
      execute: async ({ model_id }) => (ran.push('deploy_serving'), { deployed: model_id }),
    }),
  },
  swarm,
  // ASK: hold the call for a person's decision (at most two minutes here), saying where to decide it.
  { onAsk: 'wait', waitMs: 120_000, onHold: (answer, link) => console.log(`waiting for approval ${answer.approval_id}: ${link}`) },
);

// The scripted model: three tool calls in its first step, then a sentence.
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
const calls = [
  { toolCallId: 'call_export', toolName: 'export_raw_data', input: { dataset_id: 'customers-2026' } },
  { toolCallId: 'call_drift', toolName: 'monitor_drift', input: { model_id: 'credit-risk-v7' } },
  { toolCallId: 'call_deploy', toolName: 'deploy_serving', input: { model_id: 'credit-risk-v7', env: 'prod' } },
];
let step = 0;
const model = new MockLanguageModelV3({
  doGenerate: async () =>
    step++ === 0
      ? { content: calls.map((c) => ({ type: 'tool-call' as const, ...c, input: JSON.stringify(c.input) })), finishReason: { unified: 'tool-calls' as const, raw: undefined }, usage, warnings: [] }
      : { content: [{ type: 'text' as const, text: 'Drift is low; the deployment went out after approval; the export was refused.' }], finishReason: { unified: 'stop' as const, raw: undefined }, usage, warnings: [] },
});

const result = await generateText({ model, tools, prompt: 'Check drift on credit-risk-v7, deploy it to prod, and export the customers.', stopWhen: stepCountIs(2) });
const results = Object.fromEntries(result.steps[0]!.toolResults.map((r) => [r.toolCallId, r.output]));
const refusal = results.call_export as Refusal;
console.log(`export_raw_data: ${refusal.refused ? `refused by ${refusal.rule_source}: ${refusal.reason} (decision ${refusal.decision_id})` : 'ran'}`);
console.log(`monitor_drift: ${JSON.stringify(results.call_drift)}`);
console.log(`deploy_serving: ${JSON.stringify(results.call_deploy)}`);
console.log(`model: ${result.text}`);

const expect = (ok: boolean, said: string) => {
  if (!ok) {
    console.error(`NOT AS SAID: ${said}`);
    process.exitCode = 1;
  }
};
expect(refusal.refused === true && refusal.rule_source === 'agent_allowlist' && refusal.decision_id !== null, '1. export_raw_data is refused by agent_allowlist, with a decision id');
expect(JSON.stringify(results.call_drift) === JSON.stringify({ drift: 0.02 }), '2. monitor_drift runs');
expect(JSON.stringify(results.call_deploy) === JSON.stringify({ deployed: 'credit-risk-v7' }), '3. deploy_serving runs once an operator approved it');
expect(JSON.stringify(ran.sort()) === JSON.stringify(['deploy_serving', 'monitor_drift']), 'only the allowed and the approved tools ran');
