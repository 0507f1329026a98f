/**
 * Impact by replay over a sampled decision log (issue 28): a real application whose profile keeps a quarter of the
 * allowed calls (decision_log.sample, decision_log_all off) records exactly the sampled ones, the replay reads them with
 * their rate, and `swarm policy impact` says that the counts of newly denied calls are of the sample.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type SqliteApp } from '@/lib/app';
import { parseAgents } from '@/lib/config/agents';
import { parsePolicy } from '@/lib/permissions/policy';
import { runSwarm } from '@/lib/test-support/cli';
import { isSampled } from './trail/sampling';
import { impactOf, recordedCalls, type RecordedCall } from './impact';

const AGENTS = 'agents:\n  trainer:\n    tools: [train_model, run_batch]\n';
const CANDIDATE_POLICY = 'rules:\n  - id: no-batch\n    decision: DENY\n    reason: Batches wait.\n    match: { tool: run_batch }\n';
const PROFILE = `title: Sampled
description: Keeps a quarter of the allowed calls.
frameworks: [Internal logging standard]
decision_log:
  sample: 0.25
  basis: A quarter is enough to review the allowed traffic.
`;

let dir = '';
let app: SqliteApp;
const allowed: string[] = [];
const denied: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'swarm-impact-sampling-'));
  writeFileSync(join(dir, 'agents.yaml'), AGENTS);
  writeFileSync(join(dir, 'permission_policies.yaml'), 'rules: []\n');
  mkdirSync(join(dir, 'profiles', 'sampled'), { recursive: true });
  writeFileSync(join(dir, 'profiles', 'sampled', 'profile.yaml'), PROFILE);
  app = createApp({ dbPath: join(dir, 'test.db'), configDir: dir, env: {}, profile: 'sampled' });
  const principal = { kind: 'agent' as const, id: 'trainer', role: 'viewer' as const, agent: 'trainer' };
  for (let i = 0; i < 400; i++) {
    // every fifth call is to a tool the trainer is not allowed: a denial, recorded whatever the rate
    const tool = i % 5 === 0 ? 'export_raw_data' : i % 2 ? 'run_batch' : 'train_model';
    const r = await app.decisions.decide({ kind: 'tool', principal, agent: 'trainer', tool, arguments: { i } });
    (r.decision === 'DENY' ? denied : allowed).push(r.decisionId!);
  }
  mkdirSync(join(dir, 'proposed'));
  writeFileSync(join(dir, 'proposed', 'agents.yaml'), AGENTS);
  writeFileSync(join(dir, 'proposed', 'permission_policies.yaml'), CANDIDATE_POLICY);
});
afterAll(() => {
  app.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('impact over a sampled decision log', () => {
  it('replays every denial and exactly the sampled allowed calls, and reports their rate', async () => {
    expect(app.flags.values().get('decision_log_all')).toBe(false);
    const calls: RecordedCall[] = [];
    for await (const c of recordedCalls(app.database, 0)) calls.push(c);
    const sampled = allowed.filter((id) => isSampled(id, 0.25));
    expect(sampled.length).toBeGreaterThan(0);
    expect(sampled.length).toBeLessThan(allowed.length);
    expect(calls.filter((c) => c.sampleRate === undefined).map((c) => c.decisionId)).toEqual(denied);
    expect(calls.filter((c) => c.sampleRate !== undefined).map((c) => c.decisionId)).toEqual(sampled);
    expect(calls.every((c) => c.sampleRate === undefined || c.sampleRate === 0.25)).toBe(true);

    const candidate = { ...app.policyConfig(), agents: parseAgents(AGENTS), policy: parsePolicy(CANDIDATE_POLICY) };
    const report = await impactOf(calls, app.policyConfig(), candidate, app.flags.values());
    expect(report.allowed_sample_rate).toBe(0.25);
    expect(report.by_direction.newly_denied).toBe(calls.filter((c) => c.tool === 'run_batch').length);
  });

  it('says 1 when every allowed call was logged, the lowest rate when they differ, null when none was replayed', async () => {
    const call = (i: number, sampleRate?: number): RecordedCall => ({
      decisionId: `d${i}`,
      agent: 'trainer',
      tool: 'train_model',
      principal: { kind: 'agent', id: 'trainer', role: 'viewer', agent: 'trainer' },
      arguments: {},
      masked: false,
      timestamp: 1_790_000_000,
      ...(sampleRate === undefined ? {} : { sampleRate }),
    });
    const config = app.policyConfig();
    const flags = app.flags.values();
    expect((await impactOf([call(1, 1), call(2, 1), call(3)], config, config, flags)).allowed_sample_rate).toBe(1);
    expect((await impactOf([call(1, 1), call(2, 0.1), call(3, 0.5)], config, config, flags)).allowed_sample_rate).toBe(0.1);
    expect((await impactOf([call(3)], config, config, flags)).allowed_sample_rate).toBeNull();
    expect((await impactOf([], config, config, flags)).allowed_sample_rate).toBeNull();
  });

  it('swarm policy impact says the counts of newly denied calls are of the sample', async () => {
    const env = { ...process.env, SWARM_DB: join(dir, 'test.db'), SWARM_CONFIG_DIR: dir, SWARM_POLICY_FILE: '', SWARM_PROFILE: '' };
    const text = await runSwarm(['policy', 'impact', join(dir, 'proposed')], env);
    expect(text.code).toBe(5);
    expect(text.stdout).toMatch(/^Allowed calls are a 25% sample: counts of newly denied calls are of the sample\.$/m);
    const json = await runSwarm(['policy', 'impact', join(dir, 'proposed'), '--json'], env);
    expect(JSON.parse(json.stdout)).toMatchObject({ allowed_sample_rate: 0.25 });
  });
});
