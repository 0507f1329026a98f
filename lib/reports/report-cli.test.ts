/**
 * `swarm audit report` end to end: the CLI's own entry (run in process) against a real SQLite file with the bfsi
 * profile, its files read back, its usage errors, and the generation recorded as a security event.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSwarm, type CliResult } from '@/lib/test-support/cli';
import { createApp, type SqliteApp } from '@/lib/app';
import { seedTrail } from './report.fixture';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let dir: string;
let app: SqliteApp;
let env: NodeJS.ProcessEnv;
let period = { from: 0, to: 0 };
const day = (s: number) => new Date(s * 1000).toISOString().slice(0, 10);

function swarm(...args: string[]): Promise<CliResult> {
  return runSwarm(args, env);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'swarm-report-cli-'));
  cpSync(join(ROOT, 'config'), join(dir, 'config'), { recursive: true });
  env = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith('SWARM_') || key.startsWith('ML_TEAM_')) delete env[key];
  Object.assign(env, { SWARM_DB: join(dir, 'cli.db'), SWARM_CONFIG_DIR: join(dir, 'config'), SWARM_PROFILE: 'bfsi' });
  app = createApp({ dbPath: join(dir, 'cli.db'), configDir: join(dir, 'config'), env: { SWARM_PROFILE: 'bfsi' }, watchConfig: false });
  period = (await seedTrail(app)).period;
});

afterAll(() => {
  app.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('swarm audit report', () => {
  it('writes the PDF of the period, says what it holds, and records the generation', async () => {
    const file = join(dir, 'report.pdf');
    const r = await swarm('audit', 'report', '--from', day(period.from), '--to', day(period.to), '-o', file);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(readFileSync(file).subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(existsSync(`${file}.partial`)).toBe(false);
    const id = /report (rpt_[0-9a-f-]{36})/.exec(r.stdout)?.[1];
    expect(id).toBeDefined();
    const denials = app.db.$client.prepare<[number, number], { n: number }>('SELECT count(*) AS n FROM permission_denials WHERE timestamp >= ? AND timestamp < ?').get(period.from, period.to)!.n;
    expect(r.stdout).toContain(`${denials} denials`);
    expect(r.stdout).toContain('integrity verified; controls of bfsi');
    // The control status is said, as in the PDF: never "satisfied" from the configuration alone.
    expect(r.stdout).toMatch(/controls of bfsi: \d+ demonstrated, \d+ not demonstrated, \d+ not applicable\./);
    const e = (await app.securityEvents.ofType('audit.report_generated', 1))[0]!;
    expect(e.target).toBe(id);
    expect(e.actor).toMatch(/^cli:/);
  });

  it('writes OSCAL assessment results with --format oscal, restricted to a profile with --profile', async () => {
    const file = join(dir, 'report.oscal.json');
    const r = await swarm('audit', 'report', '--from', day(period.from), '--to', day(period.to), '--format', 'oscal', '--profile', 'bfsi', '-o', file);
    expect(r.code).toBe(0);
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { 'assessment-results': { metadata: { props: { name: string; value: string }[] }; results: { findings: unknown[] }[] } };
    expect(doc['assessment-results'].metadata.props).toContainEqual(expect.objectContaining({ name: 'compliance-profile', value: 'bfsi' }));
    expect(doc['assessment-results'].results[0]!.findings.length).toBe(app.profiles.profiles[0]!.controls.length);
  });

  it('refuses bad input like the other commands: usage errors exit 2, an inactive profile exits 1', async () => {
    const noTo = await swarm('audit', 'report', '--from', '2026-01-01', '-o', join(dir, 'x.pdf'));
    expect(noTo.code).toBe(2);
    expect(noTo.stderr).toContain('--to: to is required');
    const backwards = await swarm('audit', 'report', '--from', '2026-02-01', '--to', '2026-01-01', '-o', join(dir, 'x.pdf'));
    expect(backwards.code).toBe(2);
    expect(backwards.stderr).toContain('--to: to must be after from');
    const format = await swarm('audit', 'report', '--from', '2026-01-01', '--to', '2026-02-01', '--format', 'docx', '-o', join(dir, 'x.pdf'));
    expect(format.code).toBe(2);
    expect(format.stderr).toContain('--format: format is pdf or oscal');
    const noOut = await swarm('audit', 'report', '--from', '2026-01-01', '--to', '2026-02-01');
    expect(noOut.code).toBe(2);
    expect(noOut.stderr).toContain('-o is required');
    const inactive = await swarm('audit', 'report', '--from', '2026-01-01', '--to', '2026-02-01', '--profile', 'healthcare', '-o', join(dir, 'x.pdf'));
    expect(inactive.code).toBe(1);
    expect(inactive.stderr).toContain('"healthcare" is not active');
    expect(existsSync(join(dir, 'x.pdf'))).toBe(false);
  });
});
