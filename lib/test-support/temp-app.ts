/**
 * Test fixture: a real application on a real SQLite file in a fresh temp directory, with its own config files.
 * No mocks: the stores, triggers and migrations are the production ones.
 */
import { CredentialSeal, type SealCheck } from '@/lib/auth/seal';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, type SqliteApp } from '@/lib/app';
import type { ApprovalRequest } from '@/lib/approvals/store';
import { CallBinding } from '@/lib/approvals/binding';

export interface TempApp {
  app: SqliteApp;
  dir: string;
  dbPath: string;
  policyPath: string;
  agentsPath: string;
  gatesPath: string;
  cleanup(): void;
}

export const TEST_AGENTS = `
agents:
  data_cleaner:
    tools: [profile_dataset, clean_dataset, export_raw_data]
  deployer:
    tools: [deploy_serving, promote_challenger, fairness_audit, monitor_drift]
  compliance_agent:
    tools: [export_raw_data, generate_report]
  evaluator:
    tools: [evaluate_model, fairness_audit, grade_with_llm]
`;

export function tempApp(
  options: { agents?: string; policy?: string; gates?: string; hooks?: string; tests?: string; env?: Record<string, string | undefined>; profile?: string } = {},
): TempApp {
  const dir = mkdtempSync(join(tmpdir(), 'swarm-test-'));
  const agentsPath = join(dir, 'agents.yaml');
  const policyPath = join(dir, 'permission_policies.yaml');
  writeFileSync(agentsPath, options.agents ?? TEST_AGENTS);
  writeFileSync(policyPath, options.policy ?? 'rules: []\n');
  const gatesPath = join(dir, 'gates.yaml');
  if (options.gates !== undefined) writeFileSync(gatesPath, options.gates);
  if (options.tests !== undefined) writeFileSync(join(dir, 'policy_tests.yaml'), options.tests);
  if (options.hooks !== undefined) writeFileSync(join(dir, 'hooks.yaml'), options.hooks);
  const dbPath = join(dir, 'test.db');
  // The shipped compliance profiles, for tests that activate one (`profile: 'bfsi'`).
  cpSync('config/profiles', join(dir, 'profiles'), { recursive: true });
  const app = createApp({ dbPath, configDir: dir, env: options.env ?? {}, profile: options.profile });
  return {
    app,
    dir,
    dbPath,
    policyPath,
    agentsPath,
    gatesPath,
    cleanup() {
      app.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A gated call as the engine would request its approval: the deployer deploying m-42 to prod. */
export function deployRequest(over: Partial<ApprovalRequest> = {}): ApprovalRequest {
  return {
    gate: 'deploy',
    agent: 'deployer',
    tool: 'deploy_serving',
    arguments: { model_id: 'm-42', env: 'prod' },
    requestedBy: 'agent:deployer',
    ruleSource: 'hitl:deploy',
    reason: 'r',
    expiresInSeconds: 3600,
    ...over,
  };
}

/**
 * A fixed approval binding key for stores built without an application (the tests of one store, or of two stores that
 * stand for two servers of one installation: the same key, as an installation's servers share theirs).
 */
export const testBinding = (): CallBinding => TEST_BINDING;
const TEST_BINDING = CallBinding.ofKey(Buffer.alloc(32, 7));

/**
 * How stores built without an application check the seals of credentials (lib/auth/seal.ts): a fixed key, and the
 * rows that failed, listed in `unverified` for a test to read.
 */
export function testSealCheck(): SealCheck & { unverified: SealCheck['unverified']; failed: string[] } {
  const failed: string[] = [];
  return { seal: () => TEST_SEAL, unverified: (table, id) => void failed.push(`${table}#${id}`), failed };
}
const TEST_SEAL = CredentialSeal.ofSecret(Buffer.alloc(32, 7));

/** SWARM_APPROVAL_KEY for applications of a test on PostgreSQL (which never makes a key of its own). */
export const TEST_APPROVAL_KEY = 'test-approval-binding-key-0123456789abcdef';
