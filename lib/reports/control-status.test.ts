/**
 * Control status that is true (issue 24): a control is demonstrated only by its evidence for the period, never by the
 * configuration alone. Three periods on a real application (SQLite file, the bfsi profile): one before the trail's
 * first row, one whose trail was read by a person on only some days, one read every day; and the retries of a
 * rejected call counted apart from the rejection.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempApp, type TempApp } from '@/lib/test-support/temp-app';
import { buildReport, type GeneratedReport } from './generate';
import { assessEvidence, controlStatus } from './evidence';
import type { ReportPeriod } from './period';

const DAY = 86400;
const by = { actor: 'alex', role: 'auditor' };
let t: TempApp;
let out: string;

beforeEach(() => {
  t = tempApp({ profile: 'bfsi' });
  out = mkdtempSync(join(tmpdir(), 'swarm-status-'));
});
afterEach(() => {
  t.cleanup();
  rmSync(out, { recursive: true, force: true });
});

const today = () => Math.floor(Date.now() / 1000 / DAY) * DAY;

function pdfText(bytes: Buffer, args: string[] = []): string {
  const file = join(out, `r-${Math.random().toString(36).slice(2)}.pdf`);
  writeFileSync(file, bytes);
  return execFileSync('pdftotext', [...args, file, '-'], { encoding: 'utf8' });
}

/** A day of trail: a denial, a sign-in and, when `read`, a person's read of the trail (all at noon of the day). */
function writeDay(day: number, read: boolean | 'agent'): void {
  const at = day + 12 * 3600;
  t.app.recorder.appendDenial({ toolName: 'deploy_serving', agentName: 'data_cleaner', ruleSource: 'agent_allowlist', reason: 'not in its allowlist', userRole: 'viewer', principal: 'data_cleaner', timestamp: at });
  // appendEvent: the recorder's own write, which takes the time of the row (a past day here).
  t.app.recorder.appendEvent({ type: 'auth.login.succeeded', actor: 'alex', actorRole: 'auditor', outcome: 'succeeded', target: 'alex', timestamp: at + 1 });
  if (read) {
    const actor = read === 'agent' ? 'agent:data_cleaner' : 'alex';
    t.app.recorder.appendEvent({ type: 'audit.queried', actor, actorRole: read === 'agent' ? 'viewer' : 'auditor', outcome: 'succeeded', target: 'permission_denials', timestamp: at + 2, detail: { filter: {} } });
  }
}

async function report(period: ReportPeriod, format: 'pdf' | 'oscal' = 'pdf'): Promise<GeneratedReport> {
  return buildReport(t.app, { period, format, generatedBy: by });
}

const control = (r: GeneratedReport, id: string) => {
  const rows = r.rows.filter((c) => c.control.id === id);
  expect(rows).toHaveLength(1);
  return rows[0]!;
};

describe('a period before the trail', () => {
  it('demonstrates nothing: every control is not demonstrated (or not applicable) with its reason, and the cover says the period predates the trail', async () => {
    writeDay(today(), false);
    const period = { from: today() - 60 * DAY, to: today() - 30 * DAY };
    const r = await report(period);
    expect(r.data.coverage.daysWithRows).toEqual([]);
    expect(r.data.coverage.daysBeforeTrail).toHaveLength(30);
    expect(r.rows.length).toBe(t.app.profiles.profiles[0]!.controls.length);
    for (const c of r.rows) {
      expect(c.status, c.control.id).not.toBe('demonstrated');
      expect(c.reasons.length, c.control.id).toBeGreaterThan(0);
    }
    expect(control(r, '10.4.1')).toMatchObject({ status: 'not_demonstrated', reasons: [expect.stringContaining('predates the audit trail')] });

    const text = pdfText(r.bytes);
    const cover = text.split('\f')[0]!.replace(/\s+/g, ' ');
    expect(cover).toContain('This period predates the audit trail, whose first row was recorded at');
    const flat = text.replace(/\s+/g, ' ');
    expect(flat).toMatch(/10\.4\.1 PCI DSS v4\.0 Audit logs are reviewed at least once daily\..*?NOT DEMONSTRATED the period predates the audit trail/);
    expect(flat).toContain('0 demonstrated, 15 not demonstrated, 0 not applicable, of 15 controls.');
    expect(flat).not.toMatch(/\bsatisfied\b/);

    const oscal = JSON.parse((await report(period, 'oscal')).bytes.toString('utf8')) as {
      'assessment-results': { results: { remarks?: string; findings: { props: { name: string; value: string }[]; target: { status: { state: string; reason?: string; remarks?: string } } }[] }[] };
    };
    const result = oscal['assessment-results'].results[0]!;
    expect(result.remarks).toContain('predates the audit trail');
    expect(result.findings.every((f) => f.target.status.state === 'not-satisfied')).toBe(true);
    const f1041 = result.findings.find((f) => f.props.some((p) => p.name === 'control-id' && p.value === '10.4.1'))!;
    expect(f1041.target.status).toMatchObject({ state: 'not-satisfied', reason: 'fail', remarks: expect.stringContaining('Not demonstrated: the period predates the audit trail') });
    expect(f1041.props).toContainEqual(expect.objectContaining({ name: 'control-status', value: 'not-demonstrated' }));
  });

  it('counts the days before the first row as not reviewed when the period begins before the trail', async () => {
    const start = today() - 5 * DAY;
    for (let d = start; d < today(); d += DAY) writeDay(d, true);
    t.app.checkpointAudit();
    const r = await report({ from: start - 3 * DAY, to: today() });
    expect(r.data.coverage.daysBeforeTrail).toHaveLength(3);
    expect(control(r, '10.4.1')).toMatchObject({ status: 'not_demonstrated', reasons: [expect.stringContaining('no reviews recorded on 3 of 8 days')] });
    const cover = pdfText(r.bytes).split('\f')[0]!.replace(/\s+/g, ' ');
    expect(cover).toContain('The period begins before the audit trail');
    expect(cover).toContain('3 days of the period');
  });
});

describe('a period whose trail was read on some days', () => {
  it('does not demonstrate the daily review (10.4.1) and counts the days without a read by a person', async () => {
    const from = today() - 4 * DAY;
    writeDay(from, true);
    writeDay(from + DAY, false);
    writeDay(from + 2 * DAY, 'agent'); // an agent's read is no review by a person
    writeDay(from + 3 * DAY, true);
    t.app.checkpointAudit();
    const r = await report({ from, to: today() });
    const c = control(r, '10.4.1');
    expect(c.status).toBe('not_demonstrated');
    const day = (s: number) => new Date(s * 1000).toISOString().slice(0, 10);
    expect(c.reasons).toEqual([`no reviews recorded on 2 of 4 days (${day(from + DAY)}, ${day(from + 2 * DAY)})`]);
    expect(r.data.coverage.reviewedDays).toEqual([day(from), day(from + 3 * DAY)]);
    // The other evidence of the period is there: the controls it serves are demonstrated.
    expect(control(r, '10.2.1').status).toBe('demonstrated');
    const flat = pdfText(r.bytes).replace(/\s+/g, ' ');
    expect(flat).toContain('NOT DEMONSTRATED no reviews recorded on 2 of 4 days');
  });

  it('states days of rows that no signed checkpoint covers, and does not demonstrate the controls that rest on the checkpoints', async () => {
    const from = today() - 2 * DAY;
    writeDay(from, true);
    t.app.checkpointAudit();
    writeDay(from + DAY, true);
    const r = await report({ from, to: today() });
    const day = new Date((from + DAY) * 1000).toISOString().slice(0, 10);
    expect(r.data.coverage).toMatchObject({ unsignedDays: [day], waitingDays: [] });
    // The verifier says the same of the unsigned rows (its problems are stated too).
    expect(control(r, '10.3.2')).toMatchObject({
      status: 'not_demonstrated',
      reasons: expect.arrayContaining(['the audit chain did not verify', expect.stringContaining(`no signed checkpoint covers the rows of 1 of 2 days with rows (${day})`)]),
    });
    expect(pdfText(r.bytes).split('\f')[0]!.replace(/\s+/g, ' ')).toContain(`Gaps in the signed checkpoints: the rows of 1 day (${day})`);
  });
});

describe('one statement of what the signed checkpoints cover (issue 41)', () => {
  /** Today's rows as a server writes them: one signed by a checkpoint, then the newest, written after it. */
  function todayWithNewestWaiting(): void {
    const now = Date.now() / 1000;
    t.app.recorder.appendDenial({ toolName: 'deploy_serving', agentName: 'data_cleaner', ruleSource: 'agent_allowlist', reason: 'signed', userRole: 'viewer', principal: 'data_cleaner', timestamp: now - 5 });
    t.app.recorder.appendEvent({ type: 'audit.queried', actor: 'alex', actorRole: 'auditor', outcome: 'succeeded', target: 'permission_denials', timestamp: now - 4, detail: { filter: {} } });
    t.app.checkpointAudit();
    t.app.recorder.appendDenial({ toolName: 'deploy_serving', agentName: 'data_cleaner', ruleSource: 'agent_allowlist', reason: 'newest', userRole: 'viewer', principal: 'data_cleaner', timestamp: now - 1 });
  }

  it('counts a day whose newest rows wait for the next checkpoint as covered: the cover, the box and the controls agree', async () => {
    const yesterday = today() - DAY;
    writeDay(yesterday, true);
    todayWithNewestWaiting();
    const day = new Date(today() * 1000).toISOString().slice(0, 10);
    for (const period of [{ from: yesterday, to: today() + DAY }, { from: today(), to: today() + DAY }]) {
      const r = await report(period);
      expect(r.data.integrity.ok).toBe(true);
      expect(r.data.coverage).toMatchObject({ unsignedDays: [], waitingDays: [day] });
      const signed = control(r, '10.3.2').evidence.find((e) => e.kind === 'signed_checkpoints')!;
      expect(signed).toMatchObject({ state: 'demonstrated', text: expect.stringContaining(`the newest rows of ${day} wait for the next checkpoint`) });
      const flat = pdfText(r.bytes).replace(/\s+/g, ' ');
      expect(flat).not.toContain('Gaps in the signed checkpoints');
      expect(flat).not.toContain('no checkpoints in the period');
      expect(flat).toMatch(/verified up to signed checkpoint #\d+ \(row \d+, signed [^)]+\); 1 later row chained, not yet signed/);
    }
  });
});

describe('a period read every day', () => {
  it('demonstrates the daily review and the controls whose evidence is all there; OSCAL says satisfied for them only', async () => {
    const from = today() - 3 * DAY;
    for (let d = from; d < today(); d += DAY) writeDay(d, true);
    t.app.checkpointAudit();
    const r = await report({ from, to: today() });
    expect(r.data.coverage.unsignedDays).toEqual([]);
    expect(control(r, '10.4.1')).toMatchObject({ status: 'demonstrated', reasons: [] });
    expect(control(r, '10.3.2').status).toBe('demonstrated');
    // No request was made in the period: the approval evidence does not apply. The policy revisions do, and this
    // application's first revision was recorded today, after the period: so Art. 17 is not demonstrated.
    expect(control(r, 'Art. 17').evidence.find((e) => e.kind === 'approvals')).toMatchObject({ state: 'not_applicable', why: expect.stringContaining('no approval request') });
    expect(control(r, 'Art. 17')).toMatchObject({ status: 'not_demonstrated', reasons: ['no policy revision is recorded for the period'] });
    expect(r.data.coverage.daysBeforeTrail).toEqual([]);
    const flat = pdfText(r.bytes).replace(/\s+/g, ' ');
    expect(flat).toMatch(/10\.4\.1 PCI DSS v4\.0 Audit logs are reviewed at least once daily\..*?demonstrated The evidence it names is in the trail for the period\./);
    expect(flat).not.toContain('What this report cannot show for the period');

    const oscal = JSON.parse((await report({ from, to: today() }, 'oscal')).bytes.toString('utf8')) as {
      'assessment-results': { results: { findings: { props: { name: string; value: string }[]; target: { status: { state: string } } }[] }[] };
    };
    for (const f of oscal['assessment-results'].results[0]!.findings) {
      const status = f.props.find((p) => p.name === 'control-status')!.value;
      expect(f.target.status.state).toBe(status === 'demonstrated' ? 'satisfied' : 'not-satisfied');
    }
  });
});

describe('the status of a control', () => {
  it('is not demonstrated when what serves it is not in force, whatever the evidence; not applicable only when nothing applied', () => {
    const shown = { kind: 'denials' as const, text: '', state: 'demonstrated' as const };
    const na = { kind: 'approvals' as const, text: '', state: 'not_applicable' as const, why: 'no approval request in the period' };
    expect(controlStatus([shown], ['not in force: gate deploy is NOT in force'])).toEqual({ status: 'not_demonstrated', reasons: ['not in force: gate deploy is NOT in force'] });
    expect(controlStatus([na], [])).toEqual({ status: 'not_applicable', reasons: ['no approval request in the period'] });
    expect(controlStatus([shown, na], [])).toEqual({ status: 'demonstrated', reasons: [] });
  });

  it('never demonstrates logging with decision_log_all off', async () => {
    const from = today() - DAY;
    writeDay(from, true);
    const r = await report({ from, to: today() });
    expect(assessEvidence('decisions_logged', { ...r.data, scope: { ...r.data.scope, decisionLogAll: false } })).toMatchObject({ state: 'not_demonstrated', why: expect.stringContaining('decision_log_all is off') });
  });
});

describe('retries of a rejected call', () => {
  it('counts the denials that repeat a rejected call apart from the rejection, in the data and the PDF', async () => {
    const agent = { kind: 'agent' as const, id: 'deployer', role: 'viewer' as const, agent: 'deployer' };
    const call = (env: string) => t.app.engine.decide({ kind: 'tool', principal: agent, agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: 'm-7', env } });
    const asked = call('prod');
    expect(asked.decision).toBe('ASK');
    await t.app.approvals.reject(asked.approvalId!, { id: 'olivia', role: 'operator' }, 'Outside the deploy window.');
    for (let i = 0; i < 4; i++) expect(call('prod').decision).toBe('DENY');
    // Another call of the same agent and tool (other arguments) waits: it is not a repeat of the rejected one.
    expect(call('staging').decision).toBe('ASK');
    const r = await report({ from: today(), to: today() + DAY });
    expect(r.data.oversight.rejected).toBe(1);
    expect(r.data.denials.hitl).toMatchObject({ total: 5, decisions: 1, repeats: 4, other: 0 });
    expect(r.data.denials.hitl.repeatedCalls).toEqual([expect.objectContaining({ agent: 'deployer', tool: 'deploy_serving', approval: asked.approvalId, status: 'rejected', repeats: 4 })]);
    const flat = pdfText(r.bytes).replace(/\s+/g, ' ');
    expect(flat).toContain("Of the 5 hitl denials: 1 denial records a person's rejection or an expired request; 4 denials are repeats of a call already rejected or waiting");
    expect(flat).toContain('The agents made 4 further calls that repeated a call already rejected or waiting');
  });

  it('recognises a repeat by the approval its denial names, whatever the masking did to its arguments', async () => {
    const agent = { kind: 'agent' as const, id: 'deployer', role: 'viewer' as const, agent: 'deployer' };
    // Arguments the trail keeps masked (a card number, an e-mail address): the denial rows and the request's copy differ.
    const args = { model_id: 'm-9', env: 'prod', owner: 'risk-team@partner-insurer.example', note: 'card 4111 1111 1111 1111' };
    const call = () => t.app.engine.decide({ kind: 'tool', principal: agent, agent: 'deployer', tool: 'deploy_serving', arguments: args });
    const asked = call();
    expect(asked.decision).toBe('ASK');
    await t.app.approvals.reject(asked.approvalId!, { id: 'olivia', role: 'operator' }, 'Not to partners.');
    for (let i = 0; i < 3; i++) {
      const again = call();
      expect(again).toMatchObject({ decision: 'DENY', reason: `Rejected by an operator (approval ${asked.approvalId}): Not to partners.` });
    }
    const r = await report({ from: today(), to: today() + DAY });
    expect(r.data.denials.hitl).toMatchObject({ decisions: 1, repeats: 3, other: 0 });
    expect(r.data.denials.hitl.repeatedCalls).toEqual([expect.objectContaining({ approval: asked.approvalId, status: 'rejected', repeats: 3 })]);
  });
});
