/**
 * Hooks from config/hooks.yaml through the route handlers over HTTP (tests/support/route-server.ts) on a real SQLite
 * file: a REST caller (as an agent in any language) is blocked, rewritten and rate-limited on the way; a webhook in
 * this test (checking the HMAC signature) reviews calls, hears approval requests, denials, decisions and finished
 * calls; a shell hook reads the event on stdin. Moved from e2e/hooks.spec.ts (issue 43), where /transparency's list
 * of the hooks stays.
 */
import type { AddressInfo } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { useTempServerEnv } from './support/in-process-api';
import { hooksYaml } from '@/lib/test-support/config-texts';
import { startHookReceiver } from '@/lib/test-support/hook-receiver';

const SECRET = 'test-hook-secret-0123456789';
const env = useTempServerEnv('hooks-config', { policy: 'empty', env: { SWARM_HOOK_SECRET: SECRET, SWARM_FLAG_PLUGIN_SHELL_HOOKS_ENABLED: 'true' } });

const receiver = await startHookReceiver(SECRET);
const { heard, unreadable } = receiver;
const shellLog = join(env.dir, 'shell-hook.jsonl');


interface Answer {
  decision: string;
  rule_source: string;
  reason: string;
  decision_id: string;
  approval_id: string | null;
  arguments: Record<string, unknown> | null;
  arguments_changed_by: string[];
  hooks: { hook: string; outcome: string }[];
}

/** What a Python agent does: one JSON POST with its bearer token. */
const restCheck = async (tool: string, args: Record<string, unknown>): Promise<Answer> => {
  const res = await fetch(`${server.url}/api/v1/permissions/check`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agentToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ agent: 'deployer', tool, arguments: args }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Answer;
};

// Written before the application is first imported: it reads config/ once.
writeFileSync(join(env.dir, 'config', 'hooks.yaml'), hooksYaml(receiver.url, shellLog));

const { getSqliteApp } = await import('@/lib/app');
const { createRouteServer } = await import('./support/route-server');
const app = getSqliteApp();
const agentToken = await app.auth.createToken({ agent: 'deployer' }, 'deployer');
const routes = createRouteServer();
const server = { url: '', token: env.adminToken };

beforeAll(async () => {
  await new Promise<void>((r) => routes.listen(0, '127.0.0.1', () => r()));
  server.url = `http://127.0.0.1:${(routes.address() as AddressInfo).port}`;
});

afterAll(async () => {
  routes.closeAllConnections();
  await new Promise((r) => routes.close(r));
  await receiver.close();
  app.close();
  env.remove();
});

it('calls are blocked, rewritten and rate-limited on the way, and each denial is recorded with its hook', async () => {
  const rival = await restCheck('send_email', { to: 'ceo@rival.example', subject: 'Our roadmap' });
  expect(rival).toMatchObject({ decision: 'DENY', rule_source: 'hook:no-rival-mail', reason: 'Mail to competitors is not sent by agents.' });

  const internal = await restCheck('send_email', { to: 'owners@swarm.example', subject: 'Drift report', bcc: 'me@elsewhere.example' });
  expect(internal).toMatchObject({ decision: 'ALLOW', arguments_changed_by: ['drop-bcc'], arguments: { to: 'owners@swarm.example', subject: 'Drift report' } });

  expect((await restCheck('monitor_drift', { model_id: 'm-1' })).decision).toBe('ALLOW');
  expect((await restCheck('monitor_drift', { model_id: 'm-1' })).decision).toBe('ALLOW');
  const third = await restCheck('monitor_drift', { model_id: 'm-1' });
  expect(third).toMatchObject({ decision: 'DENY', rule_source: 'hook:drift-rate' });

  const res = await fetch(`${server.url}/api/v1/permissions/denials?rule_source=hook&limit=10`, { headers: { authorization: `Bearer ${server.token}` } });
  const rows = ((await res.json()) as { denials: { rule_source: string; decision_id: string }[] }).denials;
  expect(rows.map((r) => r.rule_source).sort()).toEqual(['hook:drift-rate', 'hook:no-rival-mail']);
  expect(rows.map((r) => r.decision_id)).toContain(rival.decision_id);
});

it('a webhook reviews calls before they run, and hears approval requests and denials', async () => {
  const prod = await restCheck('rollback_serving', { model_id: 'm-9', env: 'prod' });
  expect(prod).toMatchObject({ decision: 'DENY', rule_source: 'hook:rollback-review', reason: 'The release desk has not signed off a production rollback.' });
  const staging = await restCheck('rollback_serving', { model_id: 'm-9', env: 'staging' });
  expect(staging).toMatchObject({ decision: 'ALLOW', arguments_changed_by: ['rollback-review'], arguments: { model_id: 'm-9', env: 'staging', change_ticket: 'CHG-1042' } });

  const asked = await restCheck('deploy_serving', { model_id: 'm-9', env: 'prod' });
  expect(asked).toMatchObject({ decision: 'ASK', rule_source: 'hitl:deploy' });
  await expect.poll(() => heard.some((h) => h.event === 'approval_requested' && (h.json.approval as { id: string }).id === asked.approval_id), { timeout: 10_000 }).toBe(true);
  await expect.poll(() => heard.filter((h) => h.event === 'denied').map((h) => h.json.decision_id), { timeout: 10_000 }).toContain(prod.decision_id);
  expect(heard.every((h) => h.signed), `deliveries that were not JSON: ${unreadable.join('; ') || 'none'}`).toBe(true);
  expect(heard.filter((h) => h.event === 'before_tool_call')).toHaveLength(2);
});

it('a shell hook reviews calls with the event on stdin; decisions and finished calls reach their webhooks', async () => {
  const kept = await restCheck('promote_challenger', { model_id: 'm-bad' });
  expect(kept).toMatchObject({ decision: 'DENY', rule_source: 'hook:promote-review', reason: 'The champion stays.' });
  // Hooks also run for a call that asks: the hook lets it through, and the gate still asks a person.
  expect(await restCheck('promote_challenger', { model_id: 'm-good' })).toMatchObject({ decision: 'ASK', rule_source: 'hitl:deploy', hooks: [expect.objectContaining({ hook: 'promote-review', outcome: 'passed' })] });
  const stdin = readFileSync(shellLog, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { event: string; hook: string; call: { arguments: unknown } });
  expect(stdin.map((e) => [e.event, e.hook, e.call.arguments])).toEqual([
    ['before_tool_call', 'promote-review', { model_id: 'm-bad' }],
    ['before_tool_call', 'promote-review', { model_id: 'm-good' }],
  ]);

  // A person decides a request: approval_decided.
  const asked = await restCheck('deploy_serving', { model_id: 'm-decided', env: 'prod' });
  const rejected = await fetch(`${server.url}/api/v1/approvals/${asked.approval_id}/reject`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ reason: 'Not before the audit.' }),
  });
  expect(rejected.status).toBe(200);
  await expect.poll(() => heard.find((h) => h.event === 'approval_decided' && (h.json.approval as { id: string }).id === asked.approval_id)?.json.approval, { timeout: 10_000 }).toMatchObject({
    status: 'rejected',
    reason: 'Not before the audit.',
  });

  // The agent reports a call it ran: after_tool_call.
  const finished = await fetch(`${server.url}/api/v1/permissions/finished`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agentToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ agent: 'deployer', tool: 'monitor_drift', arguments: { model_id: 'm-1' }, outcome: 'succeeded', result: { drift: 0.02 } }),
  });
  expect(finished.status).toBe(202);
  await expect.poll(() => heard.find((h) => h.event === 'after_tool_call')?.json, { timeout: 10_000 }).toMatchObject({ hook: 'tell-ran', outcome: 'succeeded', result: { drift: 0.02 } });
  expect(heard.every((h) => h.signed), `deliveries that were not JSON: ${unreadable.join('; ') || 'none'}`).toBe(true);
});
