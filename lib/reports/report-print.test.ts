/**
 * The audit report reads well in print (issue 24): dates and filters in ISO 8601, never epoch seconds; no server path;
 * the appendix keeps the newest denials and says how many it left out; identifiers wrap at their separators, never
 * inside a word; no page is left nearly empty by a page break. Read back with pdftotext, pages rendered with pdftoppm.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordAuditRead } from '@/lib/audit/reads';
import { tempApp, type TempApp } from '@/lib/test-support/temp-app';
import { buildReport, type GeneratedReport } from './generate';
import { wrapText } from './pdf-layout';
import { seedTrail, type SeededTrail } from './report.fixture';

let t: TempApp;
let seeded: SeededTrail;
let r: GeneratedReport;
let out: string;
let file: string;
let text: string;
let raw: string;
const CAP = 40;
/** the long identifiers written into the trail, each of which must wrap only at a separator */
const IDENTIFIERS = ['policy:bfsi/tuning-capacity-review', 'flag:auto_fairness_audit', 'policy:bfsi/no-pii-export', 'risk_model_reviewer_for_payments.eu-west-1'];

beforeAll(async () => {
  t = tempApp({ profile: 'bfsi' });
  out = mkdtempSync(join(tmpdir(), 'swarm-print-'));
  seeded = await seedTrail(t.app);
  // The newest rows of the period: a long principal, an absolute path in a refused configuration, an export filtered
  // by a window in epoch seconds (as the API records it).
  const last = seeded.period.to - 30;
  t.app.recorder.appendDenial({
    toolName: 'export_raw_data',
    agentName: 'risk_model_reviewer_for_payments.eu-west-1',
    ruleSource: 'policy:bfsi/no-pii-export',
    reason: 'Exports that contain personal data are never allowed (GDPR art. 5).',
    userRole: 'viewer',
    principal: 'agent:risk_model_reviewer_for_payments.eu-west-1',
    timestamp: last,
  });
  t.app.recorder.record({ kind: 'config', type: 'config.refused', actor: 'system', outcome: 'refused', target: join(t.dir, 'permission_policies.yaml'), detail: { error: `${join(t.dir, 'permission_policies.yaml')}:3:5 bad indentation` } });
  recordAuditRead(t.app, { principal: { kind: 'user', id: 'alex', role: 'auditor' }, what: 'permission_denials', filter: { from: seeded.period.from, to: seeded.period.from + 86400 }, export: 'ndjson' });
  t.app.checkpointAudit();
  r = await buildReport(t.app, { period: seeded.period, format: 'pdf', generatedBy: { actor: 'alex', role: 'auditor' }, appendixCap: CAP });
  file = join(out, 'report.pdf');
  writeFileSync(file, r.bytes);
  text = execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' });
  raw = execFileSync('pdftotext', ['-raw', '-nopgbrk', file, '-'], { encoding: 'utf8' });
});

afterAll(() => {
  t.cleanup();
  rmSync(out, { recursive: true, force: true });
});

describe('the printed report', () => {
  it('writes dates and filters in ISO 8601, never epoch seconds', () => {
    expect(text).not.toMatch(/\b1[5-9]\d{8}(\.\d+)?\b/);
    const iso = (s: number) => new Date(s * 1000).toISOString().replace('.000Z', 'Z');
    const flat = text.replace(/\s+/g, ' ');
    // The export's filter as recorded (epoch seconds) is printed as instants.
    expect(flat).toContain(`ndjson, filter from=${iso(seeded.period.from)} to=${iso(seeded.period.from + 86400)}`);
    // The appendix names the period's ends for the exports, not their epoch seconds.
    expect(flat).toContain(`${iso(seeded.period.from)} to ${iso(seeded.period.to)}, the end excluded`);
  });

  it('prints no server path: not the temp folder, not the working directory, no absolute path at all', () => {
    expect(text).not.toContain(t.dir);
    expect(text).not.toContain(process.cwd());
    expect(text).not.toContain('/work');
    expect(text).not.toMatch(/(^|[\s("'])\/(?:work|tmp|home|root|var|usr|etc|opt|srv|data)\//m);
    // The refused configuration is still named, by its file name.
    expect(text.replace(/\s+/g, ' ')).toMatch(/permission_policies\.yaml:3:5 bad indentation/);
  });

  it('keeps the newest denials in the appendix, newest first, and says how many it left out and how to get them all', () => {
    const a = r.data.appendix;
    expect(a.rows).toHaveLength(CAP);
    expect(a.omitted).toBe(a.total - CAP);
    expect(a.rows[0]!.agent).toBe('risk_model_reviewer_for_payments.eu-west-1');
    const flat = text.replace(/\s+/g, ' ');
    expect(flat).toContain(`The newest ${CAP} of ${a.total} denials, newest first; ${a.total - CAP} older denials are left out of this report`);
    expect(flat).toContain('Export CSV');
    expect(flat).toContain('format=ndjson');
    const appendix = flat.slice(flat.lastIndexOf('Appendix A Denials of the period'));
    // The newest row is printed (its time), and the oldest of the period is not.
    const when = (s: number) => new Date(s * 1000).toISOString().slice(0, 19).replace('T', ' ');
    expect(appendix).toContain(when(seeded.period.to - 30));
    expect(appendix).not.toContain(when(seeded.period.from + 60));
  });

  it('wraps identifiers only after a separator (. _ - : /), never inside a word', () => {
    // Every occurrence allowing a line break anywhere must also be found allowing one only after a separator.
    const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    for (const id of IDENTIFIERS) {
      const chars = [...id];
      const loose = new RegExp(chars.map(escape).join('\\s*'), 'g');
      const strict = new RegExp(chars.map((c, i) => escape(c) + (i < chars.length - 1 ? (/[._\-:/]/.test(c) ? '\\s*' : '') : '')).join(''), 'g');
      const all = raw.match(loose) ?? [];
      expect(all.length, id).toBeGreaterThan(0);
      expect((raw.match(strict) ?? []).length, `${id} is broken inside a word: ${all.filter((m) => !strict.test(m)).join(' | ')}`).toBe(all.length);
      strict.lastIndex = 0;
    }
  });

  it('leaves no page nearly empty: on every page but the last the content reaches at least 60% down', () => {
    // Every page renders, for a person to look at (PNGs under REPORT_PAGES_DIR when it is set).
    const dir = process.env.REPORT_PAGES_DIR ?? join(out, 'pages');
    mkdirSync(dir, { recursive: true });
    execFileSync('pdftoppm', ['-png', '-r', '50', file, join(dir, 'page')]);
    // How far down each page its content reaches (pdftotext -bbox: every word's box), the running footer aside; a
    // chart's axis labels count, so a page of figures and a chart is as full as a page of text.
    const bbox = execFileSync('pdftotext', ['-bbox', file, '-'], { encoding: 'utf8' });
    const reach = bbox
      .split('<page ')
      .slice(1)
      .map((page) => {
        const height = Number(/height="([\d.]+)"/.exec(page)![1]);
        const bottoms = [...page.matchAll(/<word [^>]*yMax="([\d.]+)"/g)].map((m) => Number(m[1])).filter((y) => y < height - 50);
        return Math.max(...bottoms) / height;
      });
    expect(reach.length).toBeGreaterThan(5);
    reach.slice(0, -1).forEach((f, i) => expect(f, `page ${i + 1} ends ${Math.round(f * 100)}% down: ${reach.map((x) => x.toFixed(2)).join(' ')}`).toBeGreaterThanOrEqual(0.6));
  });
});

describe('wrapText', () => {
  const measure = (s: string) => s.length;
  it('breaks between words, and a word too long for a line only after a separator', () => {
    expect(wrapText('denied by policy:bfsi/tuning-capacity-review today', 20, measure)).toEqual(['denied by policy:', 'bfsi/tuning-', 'capacity-review', 'today']);
    expect(wrapText('rpt_0199a2b4-7c3d-7e5f-9a8b-1c2d3e4f5a6b', 16, measure)).toEqual(['rpt_0199a2b4-', '7c3d-7e5f-9a8b-', '1c2d3e4f5a6b']);
  });
  it('cuts a part with no separator only when it is wider than a whole line (a hash)', () => {
    expect(wrapText('sha 0123456789abcdef0123', 10, measure)).toEqual(['sha', '0123456789', 'abcdef0123']);
    expect(wrapText('', 10, measure)).toEqual(['']);
  });
});
