/**
 * Compliance profiles: the three shipped ones load and pass their own policy tests, alone and combined; selection by
 * SWARM_PROFILE and config/swarm.yaml; locked flags behave like invariants; rules are attributed to their profile;
 * masking, two-person approval and retention take effect; switching profiles is a security event.
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type SqliteApp } from '@/lib/app';
import { runPolicyTests } from '@/lib/config/policy-tests';
import { changeFlag } from '@/lib/flags/change';
import { AppError } from '@/lib/errors';
import { ConfigFileError } from '@/lib/permissions/yaml-config';
import { runSwarm } from '@/lib/test-support/cli';
import { knownProfiles, selectedProfileNames } from './load';

const SHIPPED = ['bfsi', 'eu_ai_act_high_risk', 'healthcare'];

let dir: string | undefined;
const apps: SqliteApp[] = [];

/** A copy of config/ in a temp folder, and an application on it with these profiles. */
function app(profile: string | undefined, over: { env?: Record<string, string>; server?: boolean; dbName?: string } = {}): SqliteApp {
  if (!dir) {
    dir = mkdtempSync(join(tmpdir(), 'swarm-profiles-'));
    cpSync('config', join(dir, 'config'), { recursive: true });
  }
  const a = createApp({
    dbPath: join(dir, over.dbName ?? 'test.db'),
    configDir: join(dir, 'config'),
    env: over.env ?? {},
    profile,
    enforcePolicyTests: true,
    server: over.server,
  });
  apps.push(a);
  return a;
}

afterEach(() => {
  for (const a of apps.splice(0)) a.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const admin = { kind: 'user' as const, id: 'ada', role: 'admin' as const };

describe('the shipped profiles', () => {
  it('are the three of the specification, each with controls, and each passes its own policy tests alone', () => {
    expect(knownProfiles('config/profiles')).toEqual(SHIPPED);
    for (const name of SHIPPED) {
      const a = app(name, { dbName: `${name}.db` });
      const p = a.profiles.profiles[0]!;
      expect(p.name).toBe(name);
      expect(p.controls.length).toBeGreaterThanOrEqual(5);
      expect(a.profiles.locks.get('decision_log_all')).toEqual({ value: true, profiles: [name] });
      const results = runPolicyTests(a.policyConfig(), a.policyTests());
      expect(results.filter((r) => r.case.position.includes(`profiles/${name}/`)).length).toBeGreaterThanOrEqual(4);
      expect(results.filter((r) => !r.passed).map((r) => r.case.name)).toEqual([]);
    }
  });

  it('combine: bfsi with the EU AI Act profile takes the longer retention and both rule sets', () => {
    const a = app('bfsi,eu_ai_act_high_risk');
    expect(a.profiles.names).toEqual(['bfsi', 'eu_ai_act_high_risk']);
    expect(a.profiles.retention).toMatchObject({ minDays: 365, profile: 'bfsi' });
    expect(a.policy.rules.map((r) => r.id)).toEqual(expect.arrayContaining(['bfsi/no-pii-export', 'eu_ai_act_high_risk/no-realtime-public-biometric-id']));
    expect(a.profiles.locks.get('decision_log_all')?.profiles).toEqual(['bfsi', 'eu_ai_act_high_risk']);
    expect(runPolicyTests(a.policyConfig(), a.policyTests()).every((r) => r.passed)).toBe(true);
  });
});

describe('selecting profiles', () => {
  it('takes SWARM_PROFILE first, then profile: in swarm.yaml, else none', () => {
    const d = mkdtempSync(join(tmpdir(), 'swarm-select-'));
    try {
      expect(selectedProfileNames({}, d)).toEqual({ names: [], selectedBy: 'none' });
      writeFileSync(join(d, 'swarm.yaml'), 'profile: [healthcare, eu_ai_act_high_risk]\n');
      expect(selectedProfileNames({}, d)).toEqual({ names: ['healthcare', 'eu_ai_act_high_risk'], selectedBy: 'swarm.yaml' });
      expect(selectedProfileNames({ SWARM_PROFILE: ' bfsi , bfsi ' }, d)).toEqual({ names: ['bfsi'], selectedBy: 'SWARM_PROFILE' });
      writeFileSync(join(d, 'swarm.yaml'), 'profile: bfsi\nprofiles: oops\n');
      expect(() => selectedProfileNames({}, d)).toThrow(/swarm\.yaml:2:1: .*profiles/);
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });

  it('stops the start on an unknown profile, naming the known ones', () => {
    expect(() => app('bfsi,pci')).toThrow('Unknown compliance profile "pci". Known profiles: bfsi, eu_ai_act_high_risk, healthcare.');
  });

  it('refuses a malformed profile with its file, line and column', () => {
    app(undefined).close();
    writeFileSync(join(dir!, 'config', 'profiles', 'healthcare', 'profile.yaml'), 'title: x\ndescription: y\nframeworks: [z]\nlocks:\n  no_such_flag: true\n');
    let error: unknown;
    try {
      app('healthcare');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigFileError);
    expect(String((error as Error).message)).toMatch(/profiles\/healthcare\/profile\.yaml:5:\d+: locks\.no_such_flag: "no_such_flag" names no flag/);
  });

  it('refuses an operator gate that would take over a profile gate', () => {
    app(undefined).close();
    writeFileSync(join(dir!, 'config', 'gates.yaml'), 'gates:\n  - id: biometric-identification\n    tools: [identify_person]\n');
    expect(() => app('eu_ai_act_high_risk')).toThrow(/gates\.yaml:2:5: .*declared by a compliance profile/);
  });
});

describe('an active profile', () => {
  it('attributes its rules policy:<profile>/<id>', () => {
    const a = app('bfsi');
    const r = a.engine.check({ kind: 'tool', principal: { kind: 'agent', id: 'trainer', role: 'viewer', agent: 'trainer' }, agent: 'trainer', tool: 'tune_hyperparameters', arguments: { model_id: 'm-1', trials: 900 } });
    expect(r).toMatchObject({ decision: 'DENY', ruleSource: 'policy:bfsi/tuning-capacity-review' });
  });

  it('locks a flag: the environment and a runtime change are refused and recorded, the value holds', async () => {
    const a = app('healthcare', { env: { SWARM_FLAG_DECISION_LOG_ALL: 'false' } });
    const flag = a.flags.get('decision_log_all');
    expect(flag).toMatchObject({ value: true, layer: 'profile', lockedBy: ['healthcare'] });
    expect(a.flags.resolution().problems).toContainEqual(expect.objectContaining({ kind: 'locked_refused', flag: 'decision_log_all', variable: 'SWARM_FLAG_DECISION_LOG_ALL' }));
    await expect(changeFlag(a, { name: 'decision_log_all', value: false, reason: 'too many rows' }, admin)).rejects.toThrow(/locked on by the compliance profile healthcare/);
    expect((await a.securityEvents.ofType('flag.refused', 1))[0]).toMatchObject({ actor: 'ada', target: 'decision_log_all', outcome: 'refused' });
    expect(await a.flags.history({ name: 'decision_log_all' })).toMatchObject([{ action: 'refused', oldValue: true, newValue: false, changedBy: 'ada' }]);
    expect(a.flags.get('decision_log_all').value).toBe(true);
  });

  it('logs allowed decisions (decision_log_all locked on) and masks the keys it names', async () => {
    const a = app('healthcare');
    const principal = { kind: 'agent' as const, id: 'compliance_agent', role: 'viewer' as const, agent: 'compliance_agent' };
    const allowed = a.engine.decide({ kind: 'tool', principal, agent: 'compliance_agent', tool: 'generate_report', arguments: { period: 'Q3', patient_name: 'Jane Roe' } });
    expect(allowed.decision).toBe('ALLOW');
    const logged = (await a.securityEvents.ofType('decision.allowed', 1))[0]!;
    expect(logged.decisionId).toBe(allowed.decisionId);
    expect(logged.detailJson).not.toContain('Jane Roe');
    expect(JSON.parse(logged.detailJson!)).toMatchObject({ arguments: { period: 'Q3', patient_name: '[MASKED]' }, masked_paths: ['patient_name'] });
    const denied = a.engine.decide({ kind: 'tool', principal, agent: 'compliance_agent', tool: 'export_raw_data', arguments: { dataset_id: 'd', destination: 's3://x', contains_phi: true, deidentified: false, mrn: 'MRN-12345' } });
    expect(denied).toMatchObject({ decision: 'DENY', ruleSource: 'policy:healthcare/phi-export-needs-deidentification' });
    const row = (await a.denials.query({ limit: 1 })).rows[0]!;
    expect(row.argumentsJson).not.toContain('MRN-12345');
    expect(row.maskedPaths).toBe('["mrn"]');
  });

  it('asks two people for every gate at or above its two-person risk, and leaves the others at one', () => {
    app(undefined).close();
    const folder = join(dir!, 'config', 'profiles', 'four_eyes');
    cpSync(join(dir!, 'config', 'profiles', 'bfsi'), folder, { recursive: true });
    writeFileSync(
      join(folder, 'profile.yaml'),
      'title: Four eyes\ndescription: Two people for high-risk gates.\nframeworks: [internal policy]\napprovals:\n  two_person_from_risk: high\n  basis: segregation of duties\n',
    );
    writeFileSync(join(folder, 'tests.yaml'), 'tests: []\n');
    const a = app('four_eyes');
    const deploy = a.gates.gates.find((g) => g.id === 'deploy')!;
    expect(deploy.approvers.count).toBe(2);
    expect(deploy.origin).toMatch(/\+ two people \(profile four_eyes\)$/);
    expect(a.gates.gates.find((g) => g.id === 'external-mail')!.approvers.count).toBe(1);
  });

  it('locks a user name after failed sign-ins as bfsi says (PCI DSS 8.3.4: 10 attempts, 30 minutes); combined, the strictest of each', () => {
    const bfsi = app('bfsi', { dbName: 'bfsi-lock.db' });
    expect(bfsi.profiles.lockout).toEqual({ afterFailures: 10, lockSeconds: 1800, profiles: ['bfsi'] });
    expect(bfsi.profiles.profiles[0]!.controls.find((c) => c.id === '8.3.4')?.servedBy).toEqual([{ kind: 'setting', ref: 'sign_in' }]);
    expect(app('healthcare', { dbName: 'hc.db' }).profiles.lockout).toBeUndefined();
    const folder = join(dir!, 'config', 'profiles', 'strict_lock');
    cpSync(join(dir!, 'config', 'profiles', 'bfsi'), folder, { recursive: true });
    writeFileSync(
      join(folder, 'profile.yaml'),
      'title: Strict lock\ndescription: Five attempts, ten minutes.\nframeworks: [internal policy]\nsign_in:\n  lock_after_failures: 5\n  lock_minutes: 10\n  basis: internal\n',
    );
    writeFileSync(join(folder, 'tests.yaml'), 'tests: []\n');
    writeFileSync(join(folder, 'policy.yaml'), 'rules: []\n');
    // five attempts from one, thirty minutes from the other
    expect(app('bfsi,strict_lock', { dbName: 'both.db' }).profiles.lockout).toEqual({ afterFailures: 5, lockSeconds: 1800, profiles: ['bfsi', 'strict_lock'] });
  });

  it('keeps rows in the live trail for its retention: an archive cut-off inside it is refused', () => {
    const a = app('eu_ai_act_high_risk');
    const now = Date.parse('2026-11-23T00:00:00Z') / 1000;
    expect(a.archivableBefore(now - 200 * 86_400, now)).toBe(now - 200 * 86_400);
    expect(() => a.archivableBefore(now - 30 * 86_400, now)).toThrow(AppError);
    expect(() => a.archivableBefore(now - 30 * 86_400, now)).toThrow(/eu_ai_act_high_risk keeps audit rows 183 days .*before 2026-05-24/);
  });

  it('records a switch of profiles at server start, and nothing when they stay the same', async () => {
    const first = app('bfsi', { server: true });
    first.close();
    const second = app('bfsi,eu_ai_act_high_risk', { server: true });
    second.close();
    const third = app('bfsi,eu_ai_act_high_risk', { server: true });
    const switches = await third.securityEvents.ofType('profile.switched');
    expect(switches.map((e) => JSON.parse(e.detailJson!) as { from: string[]; to: string[] })).toEqual([
      expect.objectContaining({ from: ['bfsi'], to: ['bfsi', 'eu_ai_act_high_risk'] }),
      expect.objectContaining({ from: [], to: ['bfsi'] }),
    ]);
  });

  it('is part of the policy revision, so explain replays a decision with the profile rules of its time', async () => {
    const a = app('bfsi');
    const r = a.engine.decide({ kind: 'tool', principal: { kind: 'agent', id: 'trainer', role: 'viewer', agent: 'trainer' }, agent: 'trainer', tool: 'tune_hyperparameters', arguments: { model_id: 'm-1', trials: 900 } });
    const content = (await a.revisions.get(a.currentRevision()))!;
    expect(content.profiles?.map((p) => p.name)).toEqual(['bfsi']);
    expect(r.ruleSource).toBe('policy:bfsi/tuning-capacity-review');
  });
});

describe('swarm policy test with profiles', () => {
  // The CLI's own entry in process (lib/test-support/cli.ts): its exit status and what it printed.
  const cli = async (env: Record<string, string>) => {
    const r = await runSwarm(['policy', 'test'], { ...process.env, SWARM_POLICY_FILE: '', ...env });
    return { status: r.code, stdout: r.stdout, stderr: r.stderr };
  };

  it('runs the tests of every active profile with the configuration, and exits 0', async () => {
    const r = await cli({ SWARM_PROFILE: 'bfsi,healthcare,eu_ai_act_high_risk' });
    expect(r.stdout).toContain('PASS  an identification waits for people  (ASK hitl:biometric-identification)');
    expect(r.stdout).toMatch(/\d+ passed, 0 failed \(\d+ tests in config\/policy_tests\.yaml, config\/profiles\/bfsi\/tests\.yaml, config\/profiles\/healthcare\/tests\.yaml, config\/profiles\/eu_ai_act_high_risk\/tests\.yaml\)/);
    expect(r.status).toBe(0);
  });

  it('names the known profiles when one is unknown, and exits non-zero', async () => {
    const r = await cli({ SWARM_PROFILE: 'pci' });
    expect(r.stderr).toContain('Unknown compliance profile "pci". Known profiles: bfsi, eu_ai_act_high_risk, healthcare.');
    expect(r.status).not.toBe(0);
  });
});
