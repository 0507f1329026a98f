/**
 * An agent on the OpenAI Agents SDK (`@openai/agents-core` 0.14) whose function tools ask Swarm Permissions before they
 * run: one line, withSwarm(). The model is a scripted implementation of the SDK's Model interface, so the example runs
 * offline; put an OpenAI model (or any provider's) in its place and nothing else changes.
 *
 *   npm run examples                                   starts a server, plays the operator, runs every example
 *   SWARM_URL=http://127.0.0.1:8000 SWARM_TOKEN=swt_… SWARM_AGENT=deployer node --import tsx examples/openai-agents.ts
 *
 * What it shows, and checks (exit 1 when it saw otherwise):
 *   1. export_raw_data is not among the deployer's tools: DENY; the tool never runs and the model reads the refusal as
 *      the call's output (the rule agent_allowlist, the decision id).
 *   2. deploy_serving is gated: with onAsk 'interrupt' the run ends with an interruption; approvalFor() gives the
 *      server's request and its link. The person chatting approves it in the SDK, but only the operator's approval
 *      counts: once an operator approved it (npm run examples does, as an operator would), the resumed run deploys, once.
 */
import { Agent, run, setTracingDisabled, tool, Usage, type Model } from '@openai/agents-core';
import { z } from 'zod';
import { SwarmClient } from '@swarm-permissions/client';
import { approvalFor, withSwarm } from '@swarm-permissions/client/openai-agents';

// Offline: the SDK's traces are not exported anywhere.
setTracingDisabled(true);
const swarm = new SwarmClient({ agent: process.env.SWARM_AGENT ?? 'deployer' });
const ran: string[] = [];
const tools = withSwarm(
  [
    tool({ name: 'export_raw_data', description: 'Export raw rows of a dataset.', parameters: z.object({ dataset_id: z.string() }), execute: async () => (ran.push('export_raw_data'), 'rows: 120000') }),
    tool({ name: 'deploy_serving', description: 'Deploy a model to serving.', parameters: z.object({ model_id: z.string(), env: z.string() }), execute: async ({ model_id }) => (ran.push('deploy_serving'), `deployed ${model_id}`) }),
  ],
  swarm,
  { onAsk: 'interrupt' },
);

// The scripted model: two function calls, then a sentence; it keeps what it was sent.
const sent: unknown[] = [];
let step = 0;
const model: Model = {
  async getResponse(request) {
    sent.push(request.input);
    const output =
      step++ === 0
        ? [
            { type: 'function_call' as const, callId: 'call_export', name: 'export_raw_data', arguments: JSON.stringify({ dataset_id: 'customers-2026' }), status: 'completed' as const },
            { type: 'function_call' as const, callId: 'call_deploy', name: 'deploy_serving', arguments: JSON.stringify({ model_id: 'credit-risk-v7', env: 'prod' }), status: 'completed' as const },
          ]
        : [{ type: 'message' as const, role: 'assistant' as const, status: 'completed' as const, content: [{ type: 'output_text' as const, text: 'Deployed after approval; the export was refused.' }] }];
    return { usage: new Usage(), output };
  },
  getStreamedResponse() {
    throw new Error('this scripted model does not stream');
  },
};
const agent = new Agent({ name: 'deployer', instructions: 'You deploy models.', model, tools });

const first = await run(agent, 'Deploy credit-risk-v7 to prod and export the customers.');
const held = first.interruptions[0];
const ours = held && 'callId' in held.rawItem ? approvalFor(tools, held.rawItem.callId as string) : undefined;
if (ours) console.log(`waiting for approval ${ours.approvalId}: ${ours.url}`);
const outcome = ours ? await swarm.waitForApproval(ours.approvalId, { waitMs: 120_000 }) : undefined;
console.log(`approval ${ours?.approvalId}: ${outcome?.status}`);
// The person chatting approves in the SDK: the server still decides.
if (held) first.state.approve(held);
const result = await run(agent, first.state);
const outputs = Object.fromEntries(
  (sent.at(-1) as { type?: string; callId?: string; output?: { text?: string } | string }[]).filter((i) => i.type === 'function_call_result').map((i) => [i.callId, typeof i.output === 'string' ? i.output : i.output?.text]),
);
console.log(`export_raw_data: ${outputs.call_export}`);
console.log(`deploy_serving: ${outputs.call_deploy}`);
console.log(`model: ${result.finalOutput}`);

const expect = (ok: boolean, said: string) => {
  if (!ok) {
    console.error(`NOT AS SAID: ${said}`);
    process.exitCode = 1;
  }
};
const refusal = JSON.parse(String(outputs.call_export ?? '{}')) as { refused?: boolean; rule_source?: string; decision_id?: string | null };
expect(refusal.refused === true && refusal.rule_source === 'agent_allowlist' && !!refusal.decision_id, '1. export_raw_data is refused by agent_allowlist, with the decision id');
expect(ours !== undefined && outcome?.status === 'approved' && outputs.call_deploy === 'deployed credit-risk-v7', '2. deploy_serving interrupts, and runs once the operator approved');
expect(JSON.stringify(ran) === JSON.stringify(['deploy_serving']), 'only the approved tool ran, once');
