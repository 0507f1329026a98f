/**
 * A LangChain v1 agent (`createAgent`, on LangGraph.js) whose tool calls Swarm Permissions decides: one middleware,
 * swarmMiddleware(). The model is LangChain's own fake tool-calling model with scripted calls, so the example runs
 * offline; put your provider's chat model in its place and nothing else changes.
 *
 *   npm run examples                                   starts a server, plays the operator, runs every example
 *   SWARM_URL=http://127.0.0.1:8000 SWARM_TOKEN=swt_… SWARM_AGENT=deployer node --import tsx examples/langchain.ts
 *
 * What it shows, and checks (exit 1 when it saw otherwise):
 *   1. The model is never shown export_raw_data: the deployer can never use it (the middleware leaves it out).
 *   2. Asked for anyway, export_raw_data is refused: the model reads a ToolMessage with status "error" naming the rule
 *      (agent_allowlist) and the decision; the tool never runs.
 *   3. deploy_serving is gated: with onAsk 'interrupt' the run stops with LangGraph's interrupt(), carrying the approval
 *      and its link; once an operator approved it (npm run examples does, as an operator would), the resumed run
 *      deploys, once.
 */
import { Command, MemorySaver } from '@langchain/langgraph';
import { createAgent, createMiddleware, FakeToolCallingModel, ToolMessage, tool } from 'langchain';
import { z } from 'zod';
import { SwarmClient } from '@swarm-permissions/client';
import { swarmMiddleware, type ApprovalInterrupt } from '@swarm-permissions/client/langchain';

const swarm = new SwarmClient({ agent: process.env.SWARM_AGENT ?? 'deployer' });
const ran: string[] = [];
const tools = [
  tool(async () => (ran.push('export_raw_data'), '{"rows":120000}'), { name: 'export_raw_data', description: 'Export raw rows of a dataset.', schema: z.object({ dataset_id: z.string() }) }),
  tool(async () => (ran.push('deploy_serving'), '{"deployed":"credit-risk-v7"}'), { name: 'deploy_serving', description: 'Deploy a model to serving.', schema: z.object({ model_id: z.string(), env: z.string() }) }),
];
// What each model call is shown of the tools (a middleware after ours sees what the model sees).
const shown: string[][] = [];
const seeTools = createMiddleware({ name: 'ToolsShown', wrapModelCall: (request, handler) => (shown.push((request.tools ?? []).map((t) => (t as { name: string }).name)), handler(request)) });
const model = new FakeToolCallingModel({
  toolCalls: [
    [
      { name: 'export_raw_data', args: { dataset_id: 'customers-2026' }, id: 'call_export' },
      { name: 'deploy_serving', args: { model_id: 'credit-risk-v7', env: 'prod' }, id: 'call_deploy' },
    ],
    [],
  ],
});
const agent = createAgent({ model, tools, middleware: [swarmMiddleware(swarm, { onAsk: 'interrupt' }), seeTools], checkpointer: new MemorySaver() });
const thread = { configurable: { thread_id: 'example' } };

const first = await agent.invoke({ messages: [{ role: 'user', content: 'Deploy credit-risk-v7 to prod and export the customers.' }] }, thread);
const raised = (first as { __interrupt__?: { value: ApprovalInterrupt }[] }).__interrupt__?.[0]?.value;
console.log(`the model was shown: ${shown[0]?.join(', ')}`);
if (raised) console.log(`waiting for approval ${raised.approval_id}: ${raised.url}`);
const outcome = raised ? await swarm.waitForApproval(raised.approval_id, { waitMs: 120_000 }) : undefined;
console.log(`approval ${raised?.approval_id}: ${outcome?.status}`);
const resumed = await agent.invoke(new Command({ resume: { resumed: true } }), thread);
const results = Object.fromEntries(resumed.messages.filter((m) => ToolMessage.isInstance(m)).map((m) => [(m as ToolMessage).tool_call_id, m as ToolMessage]));
const refused = results.call_export;
console.log(`export_raw_data: ${refused?.status}: ${refused?.content}`);
console.log(`deploy_serving: ${results.call_deploy?.content}`);

const expect = (ok: boolean, said: string) => {
  if (!ok) {
    console.error(`NOT AS SAID: ${said}`);
    process.exitCode = 1;
  }
};
expect(shown.length > 0 && !shown[0]!.includes('export_raw_data') && shown[0]!.includes('deploy_serving'), '1. the model is never shown export_raw_data');
const refusal = JSON.parse(String(refused?.content ?? '{}')) as { refused?: boolean; rule_source?: string; decision_id?: string | null };
expect(refused?.status === 'error' && refusal.refused === true && refusal.rule_source === 'agent_allowlist' && !!refusal.decision_id, '2. export_raw_data is refused by agent_allowlist, with the decision');
expect(raised?.type === 'swarm_approval' && outcome?.status === 'approved' && results.call_deploy?.content === '{"deployed":"credit-risk-v7"}', '3. deploy_serving interrupts, and runs once approved');
expect(JSON.stringify(ran) === JSON.stringify(['deploy_serving']), 'only the approved tool ran, once');
