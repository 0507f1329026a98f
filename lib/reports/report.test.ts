/**
 * The audit report end to end on a real application (SQLite file in a temp dir, the bfsi profile active): the PDF is
 * read back with pdftotext and its sections and figures checked against the stores; its pages render with pdftoppm;
 * the OSCAL document has the assessment-results shape; the period's end is excluded; the generation is recorded.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempApp, type TempApp } from '@/lib/test-support/temp-app';
import { buildReport, generateReport, type GeneratedReport } from './generate';
import { oscalToken, uuidV5 } from './oscal';
import { reportOptionsSchema, reportQuerySchema } from './period';
import { pdfText } from './pdf-layout';
import { seedTrail, type SeededTrail } from './report.fixture';

let t: TempApp;
let seeded: SeededTrail;
let pdf: GeneratedReport;
let text: string;
let out: string;
let mainPdf: string;

const by = { actor: 'alex', role: 'auditor' };
/** pdftotext's text of a PDF, with runs of spaces folded (a table cell may be followed by padding). */
function pdfToText(bytes: Buffer, args: string[] = []): string {
  const file = join(out, `r-${Math.random().toString(36).slice(2)}.pdf`);
  writeFileSync(file, bytes);
  return execFileSync('pdftotext', [...args, file, '-'], { encoding: 'utf8' });
}

beforeAll(async () => {
  t = tempApp({ profile: 'bfsi' });
  out = mkdtempSync(join(tmpdir(), 'swarm-report-'));
  seeded = await seedTrail(t.app);
  pdf = await generateReport(t.app, { period: seeded.period, format: 'pdf', generatedBy: by });
  mainPdf = join(out, 'report.pdf');
  writeFileSync(mainPdf, pdf.bytes);
  text = execFileSync('pdftotext', [mainPdf, '-'], { encoding: 'utf8' });
});

afterAll(() => {
  t.cleanup();
  rmSync(out, { recursive: true, force: true });
});

describe('the PDF', () => {
  it('is an A4 PDF whose every page carries the system name, the period, the generation time, the report id and "page N of M"', () => {
    expect(pdf.bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const info = execFileSync('pdfinfo', [mainPdf], { encoding: 'utf8' });
    expect(info).toMatch(/Page size:\s+595\.28 x 841\.89 pts \(A4\)/);
    const pages = Number(/Pages:\s+(\d+)/.exec(info)?.[1]);
    expect(pages).toBeGreaterThan(5);
    const perPage = text.split('\f').filter((p) => p.trim() !== '');
    expect(perPage).toHaveLength(pages);
    const day = (s: number) => new Date(s * 1000).toISOString().slice(0, 10);
    perPage.forEach((page, i) => {
      expect(page).toContain('Swarm Permissions');
      expect(page).toContain(`Period ${day(seeded.period.from)} to ${day(seeded.period.to)}`);
      expect(page).toContain(`Report ${pdf.id}`);
      expect(page).toMatch(/Generated \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC by alex/);
      expect(page).toContain(`page ${i + 1} of ${pages}`);
    });
    expect(pdf.id).toMatch(/^rpt_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('has every section, in order, and the contents name their pages', () => {
    const sections = ['1 Summary', '2 Human oversight', '3 Policy and flag changes', '4 Security events', '5 Access', '6 Invariants and locked flags', '7 Control mapping', 'Appendix A Denials of the period'];
    const flat = text.replace(/[ \t]+/g, ' ');
    let at = flat.indexOf('Contents');
    expect(at).toBeGreaterThan(0);
    for (const s of sections) expect(flat).toMatch(new RegExp(`${s.replace(/ /g, '\\s+')}\\s+page \\d+`));
    // After the contents, the sections themselves appear in this order.
    at = flat.indexOf('Appendix A', at) + 1;
    let last = at;
    for (const s of sections) {
      const i = flat.indexOf(s, last);
      expect(i, s).toBeGreaterThanOrEqual(last);
      last = i;
    }
  });

  it('states the scope, who generated it and the integrity result with the checkpoint and the key fingerprint', () => {
    expect(text).toContain('bfsi: Banks and insurers (BFSI)');
    expect(text).toMatch(/Generated\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC by alex \(auditor\)/);
    expect(text).toContain('Verified: every row matches its hash chain and every signed checkpoint');
    const cp = t.app.db.$client.prepare<[], { id: number; size: number }>("SELECT id, size FROM audit_checkpoints WHERE chain = 'permission_denials' ORDER BY id DESC LIMIT 1").get()!;
    expect(text.replace(/\s+/g, ' ')).toContain(`verified up to signed checkpoint #${cp.id} (row ${cp.size}`);
    expect(text).toMatch(/fingerprint\s+SHA256:[A-Za-z0-9+/]{43}/);
    expect(pdf.data.integrity.ok).toBe(true);
  });

  it('prints the denial figures the stores count for [from, to): the rows at exactly `to` are left out', async () => {
    const { from, to } = seeded.period;
    const inPeriod = t.app.db.$client.prepare<[number, number], { n: number }>('SELECT count(*) AS n FROM permission_denials WHERE timestamp >= ? AND timestamp < ?').get(from, to)!.n;
    expect(pdf.data.denials.total).toBe(inPeriod);
    expect(pdf.data.denials.total).toBe((await t.app.denials.summary({ from, to })).total - seeded.outside.atEnd);
    const flat = text.replace(/\s+/g, ' ');
    expect(flat).toContain(`All ${inPeriod} denials of the period`);
    expect(flat).toContain(`${inPeriod} denials recorded`);
    for (const [agent, n] of seeded.byAgent) {
      const stored = t.app.db.$client.prepare<[string, number, number], { n: number }>('SELECT count(*) AS n FROM permission_denials WHERE agent_name = ? AND timestamp >= ? AND timestamp < ?').get(agent, from, to)!.n;
      expect(stored).toBeGreaterThanOrEqual(n);
      expect(flat).toMatch(new RegExp(`${agent} ${stored} \\d`));
    }
    // The chart's bars add up to the total.
    expect(pdf.data.denials.chart.buckets.reduce((s, b) => s + b.total, 0)).toBe(inPeriod);
    expect(pdf.data.denials.chart.bucketSeconds).toBe(86400);
  });

  it('reports human oversight: requests, outcomes, approvers and every two-person decision', () => {
    const o = pdf.data.oversight;
    expect({ requested: o.requested, approved: o.approved, rejected: o.rejected, expired: o.expired }).toEqual({ requested: 4, approved: 2, rejected: 1, expired: 1 });
    expect(o.twoPerson.total).toBe(2);
    expect(o.approvers.map((a) => [a.name, a.approvals, a.rejections])).toEqual([
      ['olivia', 2, 0],
      ['oscar', 1, 1],
    ]);
    const flat = text.replace(/\s+/g, ' ');
    expect(flat).toContain('Every two-person decision');
    expect(flat).toContain('olivia (operator), oscar (operator)');
    expect(flat).toContain('rejected by oscar');
    expect(flat).toContain('Median time to decision');
    expect(o.medianSecondsToDecision).not.toBeNull();
    expect(flat).toContain(`over ${o.decidedByPeople} decisions by people`);
  });

  it('lists the flag change with who and why, the refused attempt, and each policy revision with its SHA-256', () => {
    const flat = text.replace(/\s+/g, ' ');
    expect(flat).toMatch(/email_notifications (on|off) -> (on|off) root Quarterly fairness review starts\./);
    expect(flat).toMatch(/decision_log_all REFUSED: asked off, stays on root too noisy/);
    expect(flat).toContain('Flag change refused');
    expect(pdf.data.changes.flagChanges).toMatchObject({ total: 2, refused: 1 });
    const revisions = t.app.db.$client.prepare<[], { revision: string }>('SELECT revision FROM policy_revisions').all();
    expect(revisions.length).toBeGreaterThan(0);
    for (const r of revisions) expect(flat).toContain(r.revision);
    const dense = text.replace(/\s+/g, '');
    for (const r of pdf.data.changes.revisions.rows) {
      expect(r.revision).toBe(`rev_${r.sha256.slice(0, 32)}`);
      expect(dense).toContain(r.sha256);
    }
  });

  it('shows the security events: failed sign-ins by name, exports of the trail', () => {
    const flat = text.replace(/\s+/g, ' ');
    expect(flat).toContain('Failed sign-ins by user name');
    expect(flat).toMatch(/mallory 1/);
    expect(flat).toContain('Exports of the audit trail');
    expect(flat).toMatch(/alex \(auditor\) permission_denials csv/);
  });

  it('shows the invariants and the flag the profile locks, with their state', () => {
    const flat = text.replace(/\s+/g, ' ');
    expect(flat).toMatch(/audit_trail_security_events on invariant/);
    expect(flat).toMatch(/decision_log_all on locked by bfsi/);
  });

  it('prints the control mapping of the profile with evidence computed for the period', () => {
    const flat = text.replace(/\s+/g, ' ');
    const profile = t.app.profiles.profiles[0]!;
    for (const c of profile.controls) expect(flat, c.id).toContain(c.title.slice(0, 30));
    expect(flat).toContain(`${pdf.data.denials.total} denials recorded`);
    expect(flat).toMatch(/chain verified: [\d,]+ rows intact/);
    expect(flat).toContain('retention 365 days enforced by archive');
    expect(flat).not.toContain('NEEDS ATTENTION');
  });

  it('lists the denials of the period in the appendix, capped, saying how many were left out and how to export all', async () => {
    const capped = await buildReport(t.app, { period: seeded.period, format: 'pdf', generatedBy: by, appendixCap: 10 });
    const flat = pdfToText(capped.bytes).replace(/\s+/g, ' ');
    const total = capped.data.denials.total;
    expect(flat).toContain(`The newest 10 of ${total} denials, newest first; ${total - 10} older denials are left out of this report (export them as below).`);
    expect(flat).toContain('format=csv');
    expect(flat).toContain('format=ndjson');
    expect(capped.data.appendix.rows).toHaveLength(10);
    expect(capped.data.appendix.rows.every((r) => r.at >= seeded.period.from && r.at < seeded.period.to)).toBe(true);
    // The newest rows of the period are kept, newest first (the oldest 500 used to be kept and the newest dropped).
    const newest = t.app.db.$client.prepare<[number, number], { id: number }>('SELECT id FROM permission_denials WHERE timestamp >= ? AND timestamp < ? ORDER BY timestamp DESC, id DESC LIMIT 10').all(seeded.period.from, seeded.period.to);
    expect(capped.data.appendix.rows.map((r) => r.id)).toEqual(newest.map((r) => r.id));
  });

  it('never prints an absolute server path', () => {
    expect(text).not.toContain(t.dir);
    expect(text).not.toContain(process.cwd());
  });

  it('renders every page to an image (pdftoppm), for a person to look at', () => {
    const prefix = join(out, 'page');
    execFileSync('pdftoppm', ['-png', '-r', '40', mainPdf, prefix]);
    const pngs = readdirSync(out).filter((f) => f.startsWith('page') && f.endsWith('.png'));
    expect(pngs.length).toBe(text.split('\f').filter((p) => p.trim() !== '').length);
  });

  it('records every generation as a security event with the report id, the period and the format', async () => {
    const e = (await t.app.securityEvents.ofType('audit.report_generated', 1))[0]!;
    expect(e).toMatchObject({ actor: 'alex', actorRole: 'auditor', outcome: 'succeeded', target: expect.stringMatching(/^rpt_/) });
    const d = JSON.parse(e.detailJson ?? '{}') as Record<string, unknown>;
    expect(d).toMatchObject({ format: 'pdf', profile: null, integrity: 'verified' });
    expect(d.from).toBe(new Date(seeded.period.from * 1000).toISOString().replace('.000Z', 'Z'));
  });
});

describe('the OSCAL assessment results', () => {
  it('has the OSCAL 1.1 shape: metadata, import-ap, one result with observations and a finding per control', async () => {
    const r = await generateReport(t.app, { period: seeded.period, format: 'oscal', generatedBy: by });
    const doc = JSON.parse(r.bytes.toString('utf8')) as { 'assessment-results': Record<string, any> };
    const ar = doc['assessment-results'];
    const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[45][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    expect(ar.uuid).toMatch(UUID);
    expect(ar.metadata).toMatchObject({ 'oscal-version': '1.1.2', version: r.id });
    expect(Date.parse(ar.metadata['last-modified'])).not.toBeNaN();
    expect(ar['import-ap'].href).toMatch(/^#/);
    expect(ar['back-matter'].resources.map((x: { uuid: string }) => `#${x.uuid}`)).toContain(ar['import-ap'].href);
    expect(ar.results).toHaveLength(1);
    const result = ar.results[0];
    expect(result.start).toBe(new Date(seeded.period.from * 1000).toISOString());
    expect(result.end).toBe(new Date(seeded.period.to * 1000).toISOString());
    const controls = t.app.profiles.profiles[0]!.controls;
    expect(result.findings).toHaveLength(controls.length);
    const observations = new Set(result.observations.map((o: { uuid: string }) => o.uuid));
    const TOKEN = /^(\p{L}|_)(\p{L}|\p{N}|[.\-_])*$/u;
    for (const f of result.findings) {
      expect(f.uuid).toMatch(UUID);
      expect(f.target.type).toBe('objective-id');
      expect(f.target['target-id']).toMatch(TOKEN);
      expect(['satisfied', 'not-satisfied']).toContain(f.target.status.state);
      for (const o of f['related-observations']) expect(observations.has(o['observation-uuid'])).toBe(true);
    }
    expect(result['reviewed-controls']['control-selections'][0]['include-controls']).toHaveLength(controls.length);
    for (const o of result.observations) {
      expect(o.uuid).toMatch(UUID);
      expect(o.methods.every((m: string) => ['EXAMINE', 'INTERVIEW', 'TEST', 'UNKNOWN'].includes(m))).toBe(true);
      expect(Date.parse(o.collected)).not.toBeNaN();
    }
    const denials = result.observations.find((o: { props: { name: string; value: string }[] }) => o.props.some((p) => p.name === 'evidence-kind' && p.value === 'denials'));
    expect(denials.description).toContain(`${r.data.denials.total} denials recorded`);
  });

  it('makes OSCAL tokens of control ids and derives stable version-5 UUIDs', () => {
    expect(oscalToken('bfsi', 'PCI DSS v4.0', '10.2.1')).toBe('bfsi_pci-dss-v4.0_10.2.1');
    expect(oscalToken('eu_ai_act_high_risk', 'EU AI Act', 'Art. 14(5)')).toBe('eu_ai_act_high_risk_eu-ai-act_art.-14-5');
    expect(uuidV5('x')).toBe(uuidV5('x'));
    expect(uuidV5('x')).not.toBe(uuidV5('y'));
  });
});

describe('inputs', () => {
  it('takes dates as midnight UTC, date-times with an offset, and refuses a period that does not move forward', () => {
    expect(reportQuerySchema.parse({ from: '2026-01-01', to: '2026-02-01' })).toEqual({ from: Date.UTC(2026, 0, 1) / 1000, to: Date.UTC(2026, 1, 1) / 1000 });
    expect(reportQuerySchema.parse({ from: '2026-01-01T12:00:00+02:00', to: '2026-01-02', profile: '' }).from).toBe(Date.UTC(2026, 0, 1, 10) / 1000);
    const bad = reportQuerySchema.safeParse({ from: '2026-02-01', to: '2026-01-01' });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]).toMatchObject({ path: ['to'], message: expect.stringContaining('after from') });
    const missing = reportQuerySchema.safeParse({});
    expect(missing.error?.issues.map((i) => i.message)).toEqual([expect.stringContaining('from is required'), expect.stringContaining('to is required')]);
    expect(reportQuerySchema.safeParse({ from: 'yesterday', to: '2026-01-01' }).success).toBe(false);
    expect(reportQuerySchema.safeParse({ from: '2026-01-01', to: '2026-13-01' }).success).toBe(false);
    expect(reportOptionsSchema.safeParse({ from: '2026-01-01', to: '2026-01-02', format: 'docx' }).success).toBe(false);
  });

  it('refuses a profile that is not active, naming the active ones', async () => {
    await expect(buildReport(t.app, { period: seeded.period, format: 'pdf', generatedBy: by, profile: 'healthcare' })).rejects.toThrow(/"healthcare" is not active: the active profiles are bfsi/);
  });

  it('writes text the standard PDF fonts can show', () => {
    expect(pdfText('a – b ≤ c → d 中')).toBe('a – b <= c -> d ?');
  });
});
