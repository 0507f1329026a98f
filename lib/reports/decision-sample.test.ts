/**
 * A profile's sampling of allowed decisions (decision_log.sample) where the profiles' settings are shown: the
 * transparency report (/transparency and its API) and the compliance report, whose decision counts it qualifies and
 * whose logging control it never demonstrates (a sample is not the log of every decision).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type SqliteApp } from '@/lib/app';
import { transparencyReport } from '@/lib/flags/transparency';
import { buildReport } from './generate';
import { assessEvidence } from './evidence';

const PROFILE = `title: Sampled
description: Keeps a tenth of the allowed calls.
frameworks: [Internal logging standard]
decision_log:
  sample: 0.1
  basis: A tenth is enough to review the allowed traffic.
controls:
  - id: "LOG-1"
    framework: Internal logging standard
    title: Allowed calls are reviewed from a sample.
    served_by: [setting:decision_log]
    evidence: [decisions_logged]
    how: A tenth of the allowed calls is kept in the trail, chosen by the decision id.
`;

let dir = '';
let app: SqliteApp;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'swarm-decision-sample-'));
  writeFileSync(join(dir, 'agents.yaml'), 'agents:\n  trainer:\n    tools: [train_model]\n');
  writeFileSync(join(dir, 'permission_policies.yaml'), 'rules: []\n');
  mkdirSync(join(dir, 'profiles', 'sampled'), { recursive: true });
  writeFileSync(join(dir, 'profiles', 'sampled', 'profile.yaml'), PROFILE);
  app = createApp({ dbPath: join(dir, 'test.db'), configDir: dir, env: {}, profile: 'sampled' });
  const principal = { kind: 'agent' as const, id: 'trainer', role: 'viewer' as const, agent: 'trainer' };
  for (let i = 0; i < 200; i++) await app.decisions.decide({ kind: 'tool', principal, agent: 'trainer', tool: 'train_model', arguments: { i } });
});
afterAll(() => {
  app.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the sampling of allowed decisions in what shows the profiles', () => {
  it('is in the transparency report, with its basis', async () => {
    const report = await transparencyReport(app, { limit: 10 });
    expect(report.profiles.active[0]?.decision_log).toEqual({ sample: 0.1, basis: 'A tenth is enough to review the allowed traffic.' });
  });

  it('is a setting of the compliance report, qualifies its decision counts, and never demonstrates logging', async () => {
    const now = Date.now() / 1000;
    const r = await buildReport(app, { period: { from: now - 3600, to: now + 60 }, format: 'pdf', generatedBy: { actor: 'alex', role: 'auditor' } });
    expect(r.data.decisionSample).toEqual({ rate: 0.1, profile: 'sampled', basis: 'A tenth is enough to review the allowed traffic.', profiles: ['sampled'] });
    expect(r.data.decisions.allowed).toBeGreaterThan(0);
    expect(r.data.decisions.allowed).toBeLessThan(200);
    const evidence = assessEvidence('decisions_logged', r.data);
    expect(evidence.text).toMatch(/allowed and asked decisions are a 10% sample \(decision_log_all is off; sampled\)/);
    expect(evidence).toMatchObject({ state: 'not_demonstrated', why: 'allowed decisions are a 10% sample, not all of them (decision_log_all is off)' });
    const served = r.rows.find((c) => c.control.id === 'LOG-1');
    expect(served?.status).toBe('not_demonstrated');

    const file = process.env.KEEP_PDF ?? join(dir, 'report.pdf');
    writeFileSync(file, r.bytes);
    const text = execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
    expect(text.replace(/\s+/g, ' ')).toMatch(/Decision log 10% of allowed and asked calls kept while decision_log_all is off \(sampled\): A tenth is enough/);
    expect(text).toMatch(/Decisions logged\s+Denials\s+Approval requests\s+Security events\s+allowed: a 10% sample\s/);
  });
});
