/**
 * Gates from config/gates.yaml through the route handlers on a real SQLite file: a REST caller (as an agent written in
 * Python would be) is gated only where the gate's condition holds, and the request it opens carries the gate's risk
 * and description. Moved from e2e/gates.spec.ts (issue 43), where the two-person approval in the browser stays.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { callRoute, useTempServerEnv } from './support/in-process-api';
import { GATES_YAML } from '@/lib/test-support/config-texts';

const env = useTempServerEnv('gates-config', { policy: 'empty' });
// Written before the application is first imported: it reads config/ once.
writeFileSync(join(env.dir, 'config', 'gates.yaml'), GATES_YAML);

const { getSqliteApp } = await import('@/lib/app');
const check = await import('@/app/api/v1/permissions/check/route');
const approval = await import('@/app/api/v1/approvals/[id]/route');
const app = getSqliteApp();
const agentToken = await app.auth.createToken({ agent: 'deployer' }, 'deployer');

afterAll(async () => {
  app.close();
  env.remove();
});

/** What a Python agent does: one JSON POST with its bearer token, nothing from this project's code. */
async function restCheck(tool: string, args: Record<string, unknown>) {
  const r = await callRoute(check.POST, '/api/v1/permissions/check', { method: 'POST', token: agentToken, body: JSON.stringify({ agent: 'deployer', tool, arguments: args }) });
  expect(r.status).toBe(200);
  return (await r.json()) as { decision: string; rule_source: string; approval_id: string | null };
}

it('a REST caller is gated by gates.yaml only where the condition holds (env: prod)', async () => {
  const staging = await restCheck('rollback_serving', { env: 'staging' });
  expect(staging).toMatchObject({ decision: 'ALLOW', rule_source: 'agent_allowlist' });
  const prod = await restCheck('rollback_serving', { env: 'prod' });
  expect(prod).toMatchObject({ decision: 'ASK', rule_source: 'hitl:prod-rollback' });
  expect(prod.approval_id).toMatch(/^apr_/);
  // the gated request is in the queue with the gate's risk and description
  const res = await callRoute(approval.GET, `/api/v1/approvals/${prod.approval_id}`, { token: env.adminToken, params: { id: prod.approval_id! } });
  expect(await res.json()).toMatchObject({ gate: 'prod-rollback', risk: 'medium', gate_description: 'A production rollback changes what customers see.' });
});
