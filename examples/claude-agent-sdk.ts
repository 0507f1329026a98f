/**
 * An agent on the Claude Agent SDK (`@anthropic-ai/claude-agent-sdk` 0.3) whose tool calls Swarm Permissions decides:
 * one line, `options: { ...claudeAgentPermissions(client) }`, gives the SDK its canUseTool and hooks.
 *
 *   npm run examples                                   starts a server, plays the operator, runs every example
 *   SWARM_URL=http://127.0.0.1:8000 SWARM_TOKEN=swt_… SWARM_AGENT=deployer node --import tsx examples/claude-agent-sdk.ts
 *
 * Offline (no ANTHROPIC_API_KEY: how `npm run examples` runs it) the SDK's callbacks are called as the SDK calls them
 * for three tool calls; with a key, the same permissions guard a real `query()` (not run by npm run examples).
 *
 * What it shows, and checks (exit 1 when it saw otherwise):
 *   1. export_raw_data is not among the deployer's tools: canUseTool denies it; the message the model reads names the
 *      rule (agent_allowlist) and the decision.
 *   2. send_email to a colleague is allowed, and the server's before_tool_call hook drop-bcc has taken the blind copy
 *      out: the SDK runs it with `updatedInput`, never with the arguments the model wrote.
 *   3. deploy_serving is gated: in `interrupt` mode the run stops with the approval's id and link; once an operator
 *      approved it (npm run examples does, as an operator would), the resumed session's retry is allowed, once.
 */
import { query, type PermissionResult } from '@anthropic-ai/claude-agent-sdk';
import { SwarmClient } from '@swarm-permissions/client';
import { claudeAgentPermissions } from '@swarm-permissions/client/claude-agent-sdk';

const swarm = new SwarmClient({ agent: process.env.SWARM_AGENT ?? 'deployer' });
const permissions = claudeAgentPermissions(swarm, { onAsk: 'interrupt' });

if (process.env.ANTHROPIC_API_KEY) {
  // A real session: every tool call it makes is decided by the server.
  for await (const message of query({ prompt: 'Check the drift of credit-risk-v7.', options: { canUseTool: permissions.canUseTool, hooks: permissions.hooks } })) {
    if (message.type === 'result') console.log(message);
  }
} else {
  const expect = (ok: boolean, said: string) => {
    if (!ok) {
      console.error(`NOT AS SAID: ${said}`);
      process.exitCode = 1;
    }
  };
  let request = 0;
  /** canUseTool as the SDK calls it for one tool_use of the model. */
  const ask = async (tool: string, input: Record<string, unknown>, toolUseID: string): Promise<PermissionResult> =>
    (await permissions.canUseTool(tool, input, { signal: new AbortController().signal, toolUseID, requestId: `req-${++request}`, suggestions: [] }))!;
  const said = (r: PermissionResult) => (r.behavior === 'deny' ? r.message : JSON.stringify(r.updatedInput));

  const exported = await ask('export_raw_data', { dataset_id: 'customers-2026' }, 'toolu_export');
  console.log(`export_raw_data: ${exported.behavior}: ${said(exported)}`);
  expect(exported.behavior === 'deny' && /\(agent_allowlist, decision [0-9a-f-]+\)$/.test(said(exported)), '1. export_raw_data is denied by agent_allowlist, with the decision');

  const mail = await ask('send_email', { to: 'risk-team@swarm.example', subject: 'credit-risk-v7 drift', bcc: 'me@private.example' }, 'toolu_mail');
  console.log(`send_email: ${mail.behavior} with ${said(mail)}`);
  expect(mail.behavior === 'allow' && !('bcc' in (mail.updatedInput ?? {})), '2. send_email is allowed without its blind copy');

  const deploy = await ask('deploy_serving', { model_id: 'credit-risk-v7', env: 'prod' }, 'toolu_deploy');
  const approval = /approval (apr_[A-Za-z0-9_-]+)/.exec(said(deploy))?.[1];
  console.log(`deploy_serving: ${deploy.behavior}${deploy.behavior === 'deny' && deploy.interrupt ? ' (the run stops)' : ''}: ${said(deploy)}`);
  expect(deploy.behavior === 'deny' && deploy.interrupt === true && approval !== undefined, '3. deploy_serving stops the run with its approval');
  if (approval) {
    console.log(`waiting for approval ${approval}: ${swarm.approvalLink(approval)}`);
    const outcome = await swarm.waitForApproval(approval, { waitMs: 120_000 });
    console.log(`approval ${approval}: ${outcome?.status}`);
    // The session resumed: the model tries the call again.
    const retried = await ask('deploy_serving', { model_id: 'credit-risk-v7', env: 'prod' }, 'toolu_deploy_again');
    console.log(`deploy_serving, resumed: ${retried.behavior}`);
    expect(outcome?.status === 'approved' && retried.behavior === 'allow', '3. once approved, the retried call is allowed');
  }
}
