/**
 * A profile's sampling of allowed decisions (decision_log.sample): parsed and refused with file, line and column;
 * combined over the active profiles, the largest rate winning, every profile that asks remembered.
 */
import { describe, expect, it } from 'vitest';
import { ConfigFileError } from '@/lib/permissions/yaml-config';
import { combineProfiles, type ProfileSource } from './load';
import { parseProfile } from './profile';

const HEAD = 'title: T\ndescription: D\nframeworks: [F]\n';
const source = (name: string, body: string): ProfileSource => ({ name, folder: `config/profiles/${name}`, texts: { profile: HEAD + body } });
const log = (sample: number | string, basis = 'enough to review') => `decision_log:\n  sample: ${sample}\n  basis: ${basis}\n`;

function refusal(body: string): string {
  try {
    parseProfile('p', 'config/profiles/p', { profile: HEAD + body });
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigFileError);
    return (e as Error).message;
  }
  throw new Error('the profile was accepted');
}

describe('decision_log in a profile', () => {
  it('reads a rate above 0 and at most 1, with its basis', () => {
    expect(parseProfile('p', 'config/profiles/p', { profile: HEAD + log(0.1) }).decisionLog).toEqual({ sample: 0.1, basis: 'enough to review' });
    expect(parseProfile('p', 'config/profiles/p', { profile: HEAD + log(1) }).decisionLog).toEqual({ sample: 1, basis: 'enough to review' });
    expect(parseProfile('p', 'config/profiles/p', { profile: HEAD }).decisionLog).toBeUndefined();
  });

  it('refuses a rate of 0, above 1, not a number, or without a basis, naming the file, line and column', () => {
    expect(refusal(log(0))).toMatch(/config\/profiles\/p\/profile\.yaml:5:11: decision_log\.sample: sample is more than 0/);
    expect(refusal(log(1.5))).toMatch(/profile\.yaml:5:11: decision_log\.sample: sample is at most 1/);
    expect(refusal(log(-0.2))).toMatch(/profile\.yaml:5:11: decision_log\.sample: sample is more than 0/);
    expect(refusal(log('"10%"'))).toMatch(/profile\.yaml:5:11: decision_log\.sample: sample is a number/);
    expect(refusal('decision_log:\n  sample: 0.1\n')).toMatch(/profile\.yaml:5:3: decision_log\.basis: /);
    expect(refusal('decision_log:\n  sample: 0.1\n  basis: b\n  keep: all\n')).toMatch(/profile\.yaml:\d+:\d+: .*keep/);
  });

  it('refuses a rate beside a lock of decision_log_all on, which would never apply', () => {
    expect(refusal(`locks:\n  decision_log_all: true\n${log(0.1)}`)).toMatch(/profile\.yaml:7:3: decision_log: the profile locks decision_log_all on/);
    // locked off, a rate is what keeps any allowed decision at all
    expect(parseProfile('p', 'config/profiles/p', { profile: `${HEAD}locks:\n  decision_log_all: false\n${log(0.1)}` }).decisionLog?.sample).toBe(0.1);
  });

  it('may be named as the setting that serves a control, only when the profile sets it', () => {
    const control = 'controls:\n  - id: "1"\n    framework: X\n    title: t\n    served_by: [setting:decision_log]\n    evidence: [decisions_logged]\n    how: h\n';
    expect(parseProfile('p', 'config/profiles/p', { profile: HEAD + log(0.2) + control }).controls[0]?.servedBy).toEqual([{ kind: 'setting', ref: 'decision_log' }]);
    expect(refusal(control)).toMatch(/the profile has no "decision_log" setting/);
  });
});

describe('combining decision_log over the active profiles', () => {
  it('takes the largest rate, with its profile and basis, and remembers every profile that asks', () => {
    const active = combineProfiles([source('a', log(0.05, 'a basis')), source('b', ''), source('c', log(0.25, 'c basis')), source('d', log(0.1))], 'SWARM_PROFILE');
    expect(active.decisionLog).toEqual({ sample: 0.25, profile: 'c', basis: 'c basis', profiles: ['a', 'c', 'd'] });
  });

  it('is absent when no profile asks', () => {
    expect(combineProfiles([source('b', '')], 'SWARM_PROFILE').decisionLog).toBeUndefined();
    expect(combineProfiles([], 'none').decisionLog).toBeUndefined();
  });
});
