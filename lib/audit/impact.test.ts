/**
 * Impact by replay (issue 28): a generated stretch of traffic is decided and recorded by a real application (SQLite,
 * decision_log_all on); the impact of a changed configuration, read back from the recorded rows, equals what deciding
 * every call under both configurations says (gates, conditions, allowlists and flags), calls whose arguments were masked
 * when recorded are counted as uncertain, and `swarm policy impact` exits 0, 5 or 3 as a CI job expects.
 */
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSwarm } from '@/lib/test-support/cli';
import { tempApp, type TempApp } from '@/lib/test-support/temp-app';
import { parseAgents } from '@/lib/config/agents';
import { gatesWithProfiles } from '@/lib/profiles/load';
import { parsePolicy } from '@/lib/permissions/policy';
import type { ToolContext } from '@/lib/permissions';
import { authorize } from '@/lib/permissions';
import { impactOf, recordedCalls, replayConfiguration } from './impact';
import { parseHooks } from '@/lib/hooks/config';

const AGENTS = `agents:
  deployer:
    tools: [deploy_serving, send_email, monitor_drift]
  trainer:
    tools: [train_model, run_batch]
`;
const POLICY = `rules:
  - id: no-competitor-mail
    decision: DENY
    priority: 950
    reason: No mail to competitors.
    when: "args.to.endsWith('@competitor.com')"
    match: { tool: send_email }
`;
// The candidate: mail to competitors allowed again, big training jobs denied, run_batch taken from the trainer,
// and monitoring gated.
const CANDIDATE_AGENTS = AGENTS.replace('[train_model, run_batch]', '[train_model]');
const CANDIDATE_POLICY = `rules:
  - id: big-training
    decision: DENY
    priority: 950
    reason: Training on more than 8 GPUs is reviewed first.
    when: "args.gpus > 8"
    match: { tool: train_model }
`;
const CANDIDATE_GATES = `gates:
  - id: drift-review
    tools: [monitor_drift]
    risk: low
`;

let t: TempApp;
let candidateDir = '';
const recorded: { id: string; input: ToolContext }[] = [];

/** A seeded stream of calls: the same every run. */
function* traffic(n: number): Generator<ToolContext> {
  let seed = 28;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let i = 0; i < n; i++) {
    const r = rnd();
    const agent = r < 0.5 ? 'deployer' : 'trainer';
    const principal = { kind: 'agent' as const, id: agent, role: 'viewer' as const, agent };
    const pick = rnd();
    if (agent === 'deployer') {
      if (pick < 0.4) yield { kind: 'tool', principal, agent, tool: 'send_email', arguments: { to: rnd() < 0.5 ? `cfo${i}@competitor.com` : `team${i}@corp.example`, subject: 'numbers' } };
      else if (pick < 0.7) yield { kind: 'tool', principal, agent, tool: 'monitor_drift', arguments: { model: `m-${i % 7}` } };
      else yield { kind: 'tool', principal, agent, tool: 'deploy_serving', arguments: { model_id: `m-${i % 5}`, env: rnd() < 0.5 ? 'prod' : 'staging' } };
    } else {
      if (pick < 0.6) yield { kind: 'tool', principal, agent, tool: 'train_model', arguments: { gpus: Math.floor(rnd() * 16) + 1 } };
      else if (pick < 0.9) yield { kind: 'tool', principal, agent, tool: 'run_batch', arguments: { job: `j${i}` } };
      else yield { kind: 'tool', principal, agent, tool: 'export_raw_data', arguments: {} };
    }
  }
}

beforeAll(async () => {
  t = tempApp({ agents: AGENTS, policy: POLICY, env: { SWARM_FLAG_DECISION_LOG_ALL: 'true' } });
  for (const input of traffic(800)) {
    const r = await t.app.decisions.decide(input);
    recorded.push({ id: r.decisionId!, input });
  }
  candidateDir = join(t.dir, 'proposed');
  mkdirSync(candidateDir);
  writeFileSync(join(candidateDir, 'agents.yaml'), CANDIDATE_AGENTS);
  writeFileSync(join(candidateDir, 'permission_policies.yaml'), CANDIDATE_POLICY);
  writeFileSync(join(candidateDir, 'gates.yaml'), CANDIDATE_GATES);
  cpSync(join(t.dir, 'profiles'), join(candidateDir, 'profiles'), { recursive: true });
});
afterAll(() => t.cleanup());

describe('impact by replay', () => {
  it('equals deciding every recorded call under both configurations; masked arguments make a change uncertain', async () => {
    const flags = t.app.flags.values();
    const currentConfig = t.app.policyConfig();
    const current = replayConfiguration(currentConfig, flags);
    const candidateConfig = {
      agents: parseAgents(CANDIDATE_AGENTS),
      policy: parsePolicy(CANDIDATE_POLICY),
      gates: gatesWithProfiles(t.app.codeGates, t.app.profiles, { text: CANDIDATE_GATES, file: 'gates.yaml' }),
    };
    const candidate = replayConfiguration(candidateConfig, flags);
    const report = await impactOf(recordedCalls(t.app.database, 0), currentConfig, candidateConfig, flags);
    expect(report.replayed).toBe(recorded.length);

    // The same, decided directly on the calls as they were made (the e-mail addresses unmasked).
    const changedIds = new Set<string>();
    let maskedChanges = 0;
    for (const { id, input } of recorded) {
      const a = authorize(current.snapshot, input);
      const b = authorize(candidate.snapshot, input);
      if (a.decision !== b.decision || a.ruleSource !== b.ruleSource) {
        changedIds.add(id);
        if (input.tool === 'send_email') maskedChanges++;
      }
    }
    // Every change of a call recorded unmasked is seen exactly as the direct decision says.
    const mails = recorded.filter((r) => r.input.tool === 'send_email');
    const unmasked = recorded.filter((r) => r.input.tool !== 'send_email').map((r) => r.id);
    expect(report.examples.length).toBe(20);
    expect(report.changed - report.by_tool.filter((x) => x.tool === 'send_email').reduce((n, x) => n + x.count, 0)).toBe(unmasked.filter((id) => changedIds.has(id)).length);
    expect(report.by_direction.newly_denied).toBeGreaterThan(0);
    expect(report.by_direction.newly_asking).toBeGreaterThan(0);
    expect(report.by_tool.map((x) => x.tool)).toEqual(expect.arrayContaining(['train_model', 'run_batch', 'monitor_drift']));
    // The mails were recorded with the address masked, and a rule reads the address: the replay cannot see what it
    // decided on, so every mail is uncertain (the direct decision changed for the competitor mails).
    expect(maskedChanges).toBeGreaterThan(0);
    expect(report.uncertain).toBe(mails.length);
    for (const e of report.examples) expect(e.uncertain ? e.tool === 'send_email' : changedIds.has(e.decision_id!)).toBe(true);
  });

  it('replays the hooks that block or rewrite, as the engine ran them; not webhooks', async () => {
    const flags = t.app.flags.values();
    const currentConfig = t.app.policyConfig();
    const hooks = parseHooks(
      `hooks:
  - id: batch-freeze
    event: before_tool_call
    match: { tool: run_batch }
    block: Batch jobs are frozen this week.
  - id: no-big-training
    event: before_tool_call
    match: { tool: train_model }
    when: "args.gpus > 12"
    block: Ask the platform team for more than 12 GPUs.
  - id: audit-mail
    event: before_tool_call
    match: { tool: monitor_drift }
    webhook: { url: "http://127.0.0.1:9/never", secret_env: HOOK_SECRET }
`,
      'hooks.yaml',
      {},
      { secrets: 'optional' },
    );
    const report = await impactOf(recordedCalls(t.app.database, 0), currentConfig, { ...currentConfig, hooks }, flags);
    const batches = recorded.filter((r) => r.input.tool === 'run_batch').length;
    const big = recorded.filter((r) => r.input.tool === 'train_model' && (r.input.arguments.gpus as number) > 12).length;
    expect(report.by_tool).toEqual(expect.arrayContaining([{ tool: 'run_batch', count: batches }, { tool: 'train_model', count: big }]));
    expect(report.by_tool.find((x) => x.tool === 'monitor_drift')).toBeUndefined();
    expect(report.changed).toBe(batches + big);
    expect(report.by_direction.newly_denied).toBe(batches + big);
    expect(report.examples.every((e) => e.after.rule_source === 'hook:batch-freeze' || e.after.rule_source === 'hook:no-big-training')).toBe(true);
  });

  it('exits 0 when nothing changes, 5 when something does, 3 when the proposed configuration does not compile', async () => {
    const env = { ...process.env, SWARM_DB: t.dbPath, SWARM_CONFIG_DIR: t.dir, SWARM_POLICY_FILE: '', SWARM_PROFILE: '' };
    const same = await runSwarm(['policy', 'impact', t.dir, '--since', '1h'], env);
    expect(same).toMatchObject({ code: 0 });
    expect(same.stdout).toMatch(/Replayed 800 recorded tool calls .*Nothing changes/s);
    const changed = await runSwarm(['policy', 'impact', candidateDir, '--json'], env);
    expect(changed.code).toBe(5);
    const json = JSON.parse(changed.stdout) as { replayed: number; changed: number; examples: unknown[] };
    expect(json.replayed).toBe(800);
    expect(json.changed).toBeGreaterThan(0);
    writeFileSync(join(candidateDir, 'permission_policies.yaml'), 'rules:\n  - id: broken\n    decision: PERHAPS\n');
    const broken = await runSwarm(['policy', 'impact', candidateDir], env);
    expect(broken.code).toBe(3);
    expect(broken.stderr).toMatch(/permission_policies\.yaml:3:15: .*decision must be ALLOW, DENY or ASK/);
  });
});
