/**
 * A policy change takes effect without a restart, in the application the route handlers serve (watching its
 * configuration, as the server's does); a malformed one, or one that fails config/policy_tests.yaml, keeps the last
 * good policy in force and /transparency says why. Moved from e2e/reliability.spec.ts (issue 43): the reload is the
 * application's, the built server only hosts it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { callRoute, useTempServerEnv } from './support/in-process-api';

const env = useTempServerEnv('policy-reload', { policy: 'empty' });
const { getApp } = await import('@/lib/app');
const checkRoute = await import('@/app/api/v1/permissions/check/route');
const transparency = await import('@/app/api/v1/transparency/route');
const policy = join(env.dir, 'config', 'permission_policies.yaml');
let close: () => void = () => undefined;

beforeAll(async () => {
  const app = await getApp();
  close = () => app.close();
});
afterAll(() => {
  close();
  env.remove();
});

async function check(body: Record<string, unknown>): Promise<{ decision: string; rule_source: string }> {
  const res = await callRoute(checkRoute.POST, '/api/v1/permissions/check', { method: 'POST', token: env.adminToken, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  return (await res.json()) as { decision: string; rule_source: string };
}

/** The policy file's load error as /transparency shows it ('' while the file in force loaded cleanly). */
async function policyError(): Promise<string> {
  const res = await callRoute(transparency.GET, '/api/v1/transparency', { token: env.adminToken });
  return ((await res.json()) as { sources: { policy: { file: { error: string | null } } } }).sources.policy.file.error ?? '';
}

it('a policy change takes effect without a restart; a malformed one, or one that fails its tests, keeps the last good policy', async () => {
  const call = { agent: 'deployer', tool: 'monitor_drift', arguments: { model_id: 'm-1' } };
  expect((await check(call)).decision).toBe('ALLOW');
  writeFileSync(policy, 'rules:\n  - id: freeze\n    decision: DENY\n    reason: Change freeze.\n    match: { agent: deployer, tool: monitor_drift }\n');
  await expect.poll(async () => (await check(call)).rule_source, { timeout: 5000 }).toBe('policy:freeze');
  // A half-written file: refused once the application has read it (at its line and column), the last good policy in force.
  writeFileSync(policy, 'rules:\n  - id: freeze\n    decision: DE');
  await expect.poll(policyError, { timeout: 5000 }).toMatch(/:3:\d+: rules\.0\.decision/);
  for (let i = 0; i < 20; i++) expect((await check(call)).rule_source).toBe('policy:freeze');
  // A well-formed policy that breaks config/policy_tests.yaml (production deploys must ask, not be refused): refused too,
  // and /transparency says which test failed.
  writeFileSync(policy, 'rules:\n  - id: freeze-all\n    decision: DENY\n    match: { agent: deployer }\n');
  await expect.poll(policyError, { timeout: 5000 }).toContain('policy test "a production deploy waits for a person" failed');
  expect((await check(call)).rule_source).toBe('policy:freeze');
  writeFileSync(policy, 'rules: []\n');
  await expect.poll(async () => (await check(call)).decision, { timeout: 5000 }).toBe('ALLOW');
});
