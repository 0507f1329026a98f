/**
 * The audit report as a PDF: the cover (scope, period, who generated it, the integrity result and the contents),
 * the summary figures and chart, human oversight, policy and flag changes, security events, invariants and locked
 * flags, the control mapping with its evidence, and the appendix of the period's denials (capped).
 * Pure: the report's data in, the PDF's bytes out. No absolute server path is ever printed.
 */
import { typeLabel } from '@/lib/audit/event-labels';
import { familyInfo, ruleSourceFamily } from '@/lib/audit/denials/vocabulary';
import type { Capped, ReportData } from './data';
import type { ControlRow } from './evidence';
import { controlCounts, coverageNotes, int, percent, plural, sampledDecisions, STATUS_LABEL } from './evidence';
import { COLORS, CONTENT_WIDTH, MARGIN, PdfLayout, type Column } from './pdf-layout';
import { describePeriod, isoSeconds, periodEnd } from './period';

const minute = (t: number) => `${isoSeconds(t).slice(0, 16).replace('T', ' ')}`;
const share = (n: number, total: number) => (total > 0 ? `${((100 * n) / total).toFixed(n / total < 0.1 ? 1 : 0)}%` : '–');

export function durationText(seconds: number | null): string {
  if (seconds === null) return '–';
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min`;
  if (seconds < 48 * 3600) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86400).toFixed(1)} days`;
}

const SECTIONS: [string, string][] = [
  ['summary', '1  Summary'],
  ['oversight', '2  Human oversight'],
  ['changes', '3  Policy and flag changes'],
  ['security', '4  Security events'],
  ['access', '5  Access'],
  ['flags', '6  Invariants and locked flags'],
  ['controls', '7  Control mapping'],
  ['appendix', 'Appendix A  Denials of the period'],
];

export function renderReportPdf(d: ReportData, controls: readonly ControlRow[]): Buffer {
  const L = new PdfLayout({
    title: `Audit report ${periodEnd(d.period.from)} to ${periodEnd(d.period.to)}`,
    subject: `${d.system} audit report ${d.id}`,
    author: d.generatedBy.actor,
    keywords: ['audit', d.id, ...d.scope.profiles.map((p) => p.name)].join(', '),
    created: new Date(d.generatedAt * 1000),
  });
  const contentsAt = cover(L, d);
  summary(L, d);
  oversight(L, d);
  changes(L, d);
  security(L, d);
  access(L, d);
  flags(L, d);
  controlMapping(L, d, controls);
  appendix(L, d);
  contents(L, contentsAt);
  return L.finish({
    left: `${d.system}  ·  Audit report`,
    right: `Period ${periodEnd(d.period.from)} to ${periodEnd(d.period.to)} (UTC, end excluded)`,
    left2: `Generated ${minute(d.generatedAt)} UTC by ${d.generatedBy.actor}`,
    right2: `Report ${d.id}`,
    footer: `${d.system} audit report ${d.id}`,
  });
}

/** Under a capped list: which of how many it shows (nothing when it shows them all), and where the rest are. */
function firstOf(L: PdfLayout, list: Capped<unknown>, rest: string): void {
  if (list.total > list.rows.length) L.note(`The first ${int(list.rows.length)} of ${int(list.total)}${rest}`, 8);
}

// ---------------------------------------------------------------------------------------------------------------

function cover(L: PdfLayout, d: ReportData): { page: number; y: number } {
  L.font(26, 'bold');
  L.doc.text('Audit report', MARGIN.left, L.y + 4, { baseline: 'top' });
  L.y += 38;
  L.paragraph(`${d.system}: permission decisions, human oversight and the integrity of the audit trail.`, { size: 11, color: COLORS.muted, after: 14 });
  // What the trail cannot speak for comes first: a period before the trail, or rows no signed checkpoint covers.
  const notes = coverageNotes(d);
  if (notes.length > 0) L.callout(false, 'What this report cannot show for the period', notes);

  const scope =
    d.scope.profiles.length === 0
      ? 'The whole system; no compliance profile is active, so the report has no control mapping.'
      : d.scope.profiles.map((p) => `${p.name}: ${p.title}`).join('; ') + (d.scope.restrictedTo ? ` (restricted to this profile; active: ${d.scope.activeProfiles.join(', ')})` : '');
  L.keyValues([
    ['Scope', scope],
    ...(d.scope.profiles.length ? ([['Frameworks', d.scope.profiles.flatMap((p) => p.frameworks).join('\n')]] as [string, string][]) : []),
    ['Period', describePeriod(d.period)],
    ['Generated', `${minute(d.generatedAt)} UTC by ${d.generatedBy.actor}${d.generatedBy.role ? ` (${d.generatedBy.role})` : ''}`],
    ['Report id', d.id],
    ['Policy revision', `${d.scope.revisionInForce} in force when generated${d.changes.revisionAtStart ? `; ${d.changes.revisionAtStart} when the period began` : ''}`],
  ]);
  if (d.period.to > d.generatedAt) L.note('The period had not ended when the report was generated: its figures are as of the generation time.');

  L.heading('Integrity of the audit trail', 90);
  const i = d.integrity;
  const lines: string[] = i.chains.map((c) => {
    const cp = c.newest
      ? `verified up to signed checkpoint #${c.newest.id} (row ${int(c.newest.size)}, signed ${minute(c.newest.signedAt)} UTC)${c.newest.rowsAfter > 0 ? `; ${plural(c.newest.rowsAfter, 'later row')} chained, not yet signed` : ''}`
      : 'no signed checkpoint yet';
    return `${c.chain}: ${plural(c.rowsChecked, 'row')} checked (${int(c.rowsInPeriod)} in the period), ${c.checkpointsValid} of ${plural(c.checkpoints, 'checkpoint')} valid; ${cp}.`;
  });
  lines.push(
    i.key
      ? `Public key ${i.key.verifierKey.split('+').slice(0, 2).join('+')}, fingerprint ${i.key.fingerprint}.`
      : 'No public key beside the database: checkpoints could not be checked (run `swarm audit key`).',
  );
  for (const f of i.failures) lines.push(`FAILED ${f.table} at ${f.id}: ${f.problem}. ${f.message}`);
  lines.push(`Verified ${minute(i.verifiedAt)} UTC by recomputing both hash chains row by row; re-run it with \`npx swarm audit verify --public-key KEYFILE\`.`);
  L.callout(i.ok, i.ok ? 'Verified: every row matches its hash chain and every signed checkpoint' : 'Verification FAILED: the trail was changed, cut or cannot be checked', lines);

  L.heading('Contents', 150);
  const at = { page: L.page, y: L.y };
  L.y += SECTIONS.length * 16 + 8;
  return at;
}

function contents(L: PdfLayout, at: { page: number; y: number }): void {
  L.doc.setPage(at.page);
  let y = at.y;
  for (const [anchor, title] of SECTIONS) {
    const page = L.anchors.get(anchor);
    if (page === undefined) continue;
    L.font(10, 'normal', COLORS.text);
    L.doc.textWithLink(title, MARGIN.left, y, { baseline: 'top', pageNumber: page });
    L.font(10, 'normal', COLORS.muted);
    L.doc.text(`page ${page}`, MARGIN.left + CONTENT_WIDTH, y, { baseline: 'top', align: 'right' });
    L.rule(MARGIN.left, MARGIN.left + CONTENT_WIDTH, y + 13, '#e8ebef', 0.4);
    y += 16;
  }
  L.doc.setPage(L.doc.getNumberOfPages());
}

// ---------------------------------------------------------------------------------------------------------------

function summary(L: PdfLayout, d: ReportData): void {
  const sample = sampledDecisions(d);
  L.section('summary', '1  Summary', `Figures for ${describePeriod(d.period)}. Denials are counted exactly as the denial explorer and its API count them.`, { newPage: true });
  L.figures([
    {
      value: int(d.decisions.total),
      label: 'Decisions logged',
      note: d.scope.decisionLogAll
        ? `${int(d.decisions.allowed)} allowed, ${int(d.decisions.asked)} asked`
        : sample
          ? // one short line fits a figure's box; the counts are in the control evidence and the settings
            `allowed: a ${percent(sample.rate)} sample`
          : 'allowed decisions not logged',
    },
    { value: int(d.denials.total), label: 'Denials', note: `${plural(d.denials.distinct.agents, 'agent')}, ${plural(d.denials.distinct.tools, 'tool')}` },
    { value: int(d.oversight.requested), label: 'Approval requests', note: `${int(d.oversight.approved)} approved, ${int(d.oversight.rejected)} rejected` },
    { value: int(d.security.total - d.decisions.allowed - d.decisions.asked), label: 'Security events', note: `${int(d.security.refused.total)} refused, ${int(d.security.failedSignIns)} failed sign-ins` },
  ]);

  L.heading('Denials by source family');
  L.table(
    [['Family', 90], ['What it means', 260], ['Denials', 70, 'right'], ['Share', 55, 'right']],
    d.denials.families.map((f) => [{ text: f.value, bold: true }, familyInfo(f.value).meaning, f.count, share(f.count, d.denials.total)]),
  );

  hitlNote(L, d);

  chart(L, d);

  const half = (CONTENT_WIDTH - 16) / 2;
  const rankColumns = (title: string): Column[] => [[title, 150], ['Denials', 60, 'right'], ['Share', 45, 'right']];
  const agentRows = d.denials.topAgents.map((a) => [a.value ?? '(no agent: HTTP)', a.count, share(a.count, d.denials.total)]);
  const toolRows = d.denials.topTools.map((a) => [a.value === 'http' ? 'http (HTTP requests)' : a.value, a.count, share(a.count, d.denials.total)]);
  // Side by side, so both must fit on one page: a table that broke across a page left the other one behind.
  const sideBySide = Math.max(L.tableHeight(rankColumns('Agent'), agentRows, { width: half }), L.tableHeight(rankColumns('Tool'), toolRows, { width: half }));
  L.heading('Top agents, tools and rule sources', sideBySide);
  const startY = L.y;
  L.table(rankColumns('Agent'), agentRows, { width: half });
  const leftEnd = L.y;
  L.y = startY;
  L.table(rankColumns('Tool'), toolRows, { width: half, x: MARGIN.left + half + 16 });
  L.y = Math.max(leftEnd, L.y);
  L.table(
    [['Rule source', 260], ['Family', 100], ['Denials', 70, 'right'], ['Share', 55, 'right']],
    d.denials.topRuleSources.map((r) => [{ text: r.value, mono: true }, ruleSourceFamily(r.value), r.count, share(r.count, d.denials.total)]),
    { caption: 'Top rule sources' },
  );
  if (d.denials.distinct.ruleSources > d.denials.topRuleSources.length) {
    L.note(`The ten largest of ${int(d.denials.distinct.ruleSources)} rule sources; the denial explorer (/denials) lists all of them.`, 8);
  }
}

/**
 * The hitl denials told apart: "hitl 49" beside "2 rejected" reads as 49 rejections unless the report says that most
 * of them are the same call made again while it stayed rejected or waiting.
 */
export function hitlSentence(d: ReportData): string | null {
  const h = d.denials.hitl;
  if (h.total === 0) return null;
  const parts = [
    `${plural(h.decisions, 'denial')} ${h.decisions === 1 ? 'records' : 'record'} a person's rejection or an expired request`,
    h.repeats === 0
      ? 'none repeats a call already rejected or waiting'
      : `${plural(h.repeats, 'denial')} ${h.repeats === 1 ? 'is a repeat' : 'are repeats'} of a call already rejected or waiting (same agent, tool and arguments as a rejected, expired or pending request), counted apart from the ${plural(d.oversight.rejected, 'rejection')} of section 2`,
  ];
  if (h.other > 0) parts.push(`${int(h.other)} other (a gated call denied without a request of its own, such as an HTTP request)`);
  return `Of the ${plural(h.total, 'hitl denial')}: ${parts.join('; ')}.`;
}

function hitlNote(L: PdfLayout, d: ReportData): void {
  const sentence = hitlSentence(d);
  if (!sentence) return;
  L.note(sentence);
  const calls = d.denials.hitl.repeatedCalls;
  if (calls.length === 0) return;
  L.table(
    [['Call repeated', 150], ['Request', 130], ['Repeats', 55, 'right'], ['First and last (UTC)', 150]],
    calls.map((c) => [`${c.agent} · ${c.tool}`, { text: `${c.approval} (${c.status})`, mono: true }, c.repeats, `${minute(c.first)}\n${minute(c.last)}`]),
    { caption: 'Repeats of a call already rejected or waiting', fontSize: 7.5 },
  );
}

/** A scale of four steps of 1, 2 or 5 times a power of ten that reaches `v`. */
function niceScale(v: number): { max: number; step: number } {
  const raw = Math.max(1, v) / 4;
  const p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw && Number.isInteger(s)) ?? Math.ceil(raw);
  return { max: step * 4, step };
}

function bucketLabel(start: number, width: number): string {
  const iso = isoSeconds(start);
  if (width >= 86400) return iso.slice(5, 10);
  return iso.slice(11, 16);
}

/** Denials over the period as stacked bars by family, drawn with vector shapes; the legend names each family. */
function chart(L: PdfLayout, d: ReportData): void {
  const c = d.denials.chart;
  const width = c.bucketSeconds >= 86400 ? (c.bucketSeconds === 86400 ? 'day' : c.bucketSeconds === 7 * 86400 ? 'week' : `${Math.round(c.bucketSeconds / 86400)} days`) : durationText(c.bucketSeconds);
  L.heading(`Denials per ${width}, by source family`, 210);
  const h = 150;
  const x0 = MARGIN.left + 40;
  const w = CONTENT_WIDTH - 40;
  const top = L.y + 4;
  const base = top + h;
  const { max, step } = niceScale(Math.max(...c.buckets.map((b) => b.total), 1));
  const doc = L.doc;
  // Grid and the count axis.
  for (let k = 0; k <= 4; k++) {
    const y = base - (h * k) / 4;
    L.rule(x0, x0 + w, y, k === 0 ? '#9aa4b2' : '#e8ebef', k === 0 ? 0.8 : 0.4);
    L.font(7, 'normal', COLORS.muted);
    doc.text(int(step * k), x0 - 6, y, { baseline: 'middle', align: 'right' });
  }
  const n = Math.max(1, c.buckets.length);
  const slot = w / n;
  const bar = Math.max(1, Math.min(slot * 0.72, 28));
  c.buckets.forEach((b, i) => {
    let y = base;
    const x = x0 + i * slot + (slot - bar) / 2;
    for (const fam of c.families) {
      const v = b.counts[fam] ?? 0;
      if (v <= 0) continue;
      const bh = (h * v) / max;
      doc.setFillColor(familyInfo(fam).fill);
      doc.rect(x, y - bh, bar, bh, 'F');
      y -= bh;
    }
  });
  // Time axis: about eight labels.
  const every = Math.max(1, Math.ceil(n / 8));
  L.font(7, 'normal', COLORS.muted);
  c.buckets.forEach((b, i) => {
    if (i % every !== 0) return;
    doc.text(bucketLabel(b.start, c.bucketSeconds), x0 + i * slot + slot / 2, base + 4, { baseline: 'top', align: 'center' });
  });
  L.y = base + 18;
  // Legend: swatch, name and count of each family (the chart's families, in its order).
  let lx = MARGIN.left + 40;
  for (const { value: fam, count } of d.denials.families) {
    const label = `${fam} ${int(count)}`;
    L.font(7.5, 'normal', COLORS.text);
    const tw = doc.getTextWidth(label);
    if (lx + tw + 22 > MARGIN.left + CONTENT_WIDTH) {
      lx = MARGIN.left + 40;
      L.y += 12;
    }
    doc.setFillColor(familyInfo(fam).fill);
    doc.rect(lx, L.y + 1, 8, 8, 'F');
    doc.text(label, lx + 11, L.y + 1, { baseline: 'top' });
    lx += tw + 24;
  }
  L.y += 16;
  L.note(`Times in UTC; the scale ends at ${int(max)} denials per ${width}.`, 7.5);
}

// ---------------------------------------------------------------------------------------------------------------

function oversight(L: PdfLayout, d: ReportData): void {
  const o = d.oversight;
  L.section('oversight', '2  Human oversight', 'Gated calls that waited for a person in the period (by the time they were asked), and what became of them.');
  L.figures([
    { value: int(o.requested), label: 'Requests' },
    { value: int(o.approved), label: 'Approved', note: `${int(o.ran)} of them ran` },
    { value: int(o.rejected), label: 'Rejected' },
    { value: int(o.expired), label: 'Expired', note: 'no person decided in time' },
    { value: int(o.pending), label: 'Still pending' },
    { value: durationText(o.medianSecondsToDecision), label: 'Median time to decision', note: `over ${plural(o.decidedByPeople, 'decision')} by people` },
    { value: int(o.approvers.length), label: 'Approvers', note: 'distinct people who decided' },
    { value: int(o.twoPerson.total), label: 'Two-person decisions' },
  ]);

  const repeats = d.denials.hitl.repeats;
  if (repeats > 0) {
    L.note(
      `The agents made ${plural(repeats, 'further call')} that repeated a call already rejected or waiting; each was denied (hitl) and recorded, and none is a new request or a new rejection: section 1 lists them.`,
    );
  }

  L.heading('Requests by gate');
  L.table(
    [['Gate', 140], ['Requests', 60, 'right'], ['Approved', 60, 'right'], ['Rejected', 60, 'right'], ['Expired', 60, 'right'], ['Pending', 60, 'right']],
    o.byGate.map((g) => [{ text: g.gate, mono: true }, g.requested, g.approved, g.rejected, g.expired, g.pending]),
  );

  L.heading('Approvers');
  L.table(
    [['Person', 160], ['Role', 90], ['Approvals given', 90, 'right'], ['Rejections', 80, 'right']],
    o.approvers.map((a) => [a.name, a.role ?? '–', a.approvals, a.rejections]),
  );

  L.heading('Every two-person decision');
  if (d.twoPersonRule) {
    L.note(`While ${d.twoPersonRule.profiles.join(', ')} is active, every gate of ${d.twoPersonRule.fromRisk} risk or higher needs two distinct approvers; the requester can never decide their own call.`);
  }
  L.table(
    [['Asked (UTC)', 78], ['Request', 100], ['Call', 120], ['Outcome', 62], ['Approvers, in order', 140]],
    o.twoPerson.rows.map((r) => [
      minute(r.requestedAt),
      { text: `${r.id}\n${r.gate}, ${r.risk} risk`, mono: false },
      `${r.agent} · ${r.tool}\nasked by ${r.requestedBy}`,
      { text: r.status === 'consumed' ? 'approved, ran' : r.status, bold: true },
      r.status === 'rejected' ? `${r.approvers ? `${r.approvers}; ` : ''}rejected by ${r.decidedBy ?? '–'}` : r.approvers || '–',
    ]),
    { caption: 'Two-person decisions' },
  );
  firstOf(L, o.twoPerson, '; GET /api/v1/approvals?status=decided lists all of them.');

  L.heading('Self-approval and repeated approvals', 30);
  L.paragraph(
    `${plural(o.refusedAttempts, 'refused approval attempt')} recorded in the period. The approval store refuses a decision by the principal who requested the call (separation of duties) and a second approval by the same person, whatever the race between them.`,
  );
}

// ---------------------------------------------------------------------------------------------------------------

function changes(L: PdfLayout, d: ReportData): void {
  const c = d.changes;
  L.section('changes', '3  Policy and flag changes', 'Who changed what and why, refused attempts included (they are listed with the other refusals in section 4 too).');
  L.heading('Changes to the rules');
  L.note(
    d.scope.changeControl
      ? `Change control is enforced (${d.scope.changeControl}): the rules in force changed only through these activations of approved proposals, each with the impact replayed on the recorded calls before it was approved.`
      : 'No active profile enforces change control: the files on disk were the rules, and activations are listed only where a profile enforced it.',
  );
  L.table(
    [['Activated (UTC)', 75], ['Change', 70], ['Proposed by, why', 130], ['Approvers', 80], ['Impact when proposed', 130]],
    c.ruleChanges.rows.map((a) => [
      minute(a.at),
      { text: `${a.kind}${a.proposal ? `\n${a.proposal}` : ''}`, bold: a.kind === 'emergency rollback' },
      a.kind === 'seed' ? 'the files on disk at the first start under change control' : `${a.proposedBy ?? a.activatedBy}: ${a.message ?? ''}`,
      a.kind === 'emergency rollback' ? `none (break-glass by ${a.activatedBy})` : a.approvers.join(', ') || '–',
      a.impact
        ? `${a.impact.changed} of ${a.impact.replayed} replayed calls decided otherwise (newly denied ${a.impact.newlyDenied}, allowed ${a.impact.newlyAllowed}, asking ${a.impact.newlyAsking}); ${a.impact.uncertain} uncertain`
        : '–',
    ]),
    { caption: 'Changes to the rules' },
  );
  firstOf(L, c.ruleChanges, ' activations; swarm policy history lists all of them.');
  L.heading('Flag changes');
  L.table(
    [['When (UTC)', 80], ['Flag', 110], ['Change', 90], ['By', 70], ['Why', 150]],
    c.flagChanges.rows.map((r) => [
      minute(r.at),
      { text: r.name, mono: true },
      r.action === 'refused'
        ? { text: `REFUSED: asked ${r.newValue === null ? 'reset' : r.newValue ? 'on' : 'off'}, stays ${r.oldValue === null ? '–' : r.oldValue ? 'on' : 'off'}`, bold: true }
        : r.action === 'unset'
          ? `override removed (was ${r.oldValue === null ? '–' : r.oldValue ? 'on' : 'off'})`
          : `${r.oldValue === null ? '–' : r.oldValue ? 'on' : 'off'} -> ${r.newValue ? 'on' : 'off'}`,
      r.by,
      r.reason,
    ]),
    { caption: 'Flag changes' },
  );
  firstOf(L, c.flagChanges, ' changes; GET /api/v1/flags/history lists all of them.');

  L.heading('Configuration loads, drift, profile switches and MCP tool definitions');
  L.table(
    [['When (UTC)', 80], ['Event', 110], ['By', 60], ['File, profile or MCP tool', 110], ['Detail', 140]],
    c.configEvents.rows.map((e) => [minute(e.at), typeLabel(e.type), e.actor, e.target ?? '–', e.note]),
    { caption: 'Configuration events', maxLines: 4 },
  );
  firstOf(L, c.configEvents, '.');

  L.heading('Policy revisions first in force in the period');
  L.note(
    'A revision is the content hash of the configuration files, the active profiles and the flag values; its id is the first 128 bits of the SHA-256 below. `swarm audit explain` re-runs a decision under the revision it was made under.',
  );
  L.table(
    [['First in force (UTC)', 80], ['Revision', 172], ['SHA-256 of its content', 233]],
    c.revisions.rows.map((r) => [minute(r.firstSeenAt), { text: r.revision, mono: true }, { text: r.sha256, mono: true }]),
    { caption: 'Policy revisions', fontSize: 7.5 },
  );
  firstOf(L, c.revisions, ' revisions.');
}

// ---------------------------------------------------------------------------------------------------------------

function security(L: PdfLayout, d: ReportData): void {
  const s = d.security;
  L.section('security', '4  Security events', 'Every security event of the period other than allowed decisions: sign-ins, refused changes, reads and exports of the audit trail.');
  L.figures([
    { value: int(s.signIns), label: 'Sign-ins', note: `${plural(s.signInUsers, 'person', 'people')}` },
    { value: int(s.failedSignIns), label: 'Failed sign-ins' },
    { value: int(s.refused.total), label: 'Refused changes' },
    { value: int(s.exports.total), label: 'Exports of the trail', note: `${int(s.reads)} reads, ${int(s.reportsGenerated)} reports` },
  ]);
  L.heading('Events by type');
  L.table(
    [['Event', 150], ['Type', 150], ['Outcome', 80], ['Count', 70, 'right']],
    s.byType.map((e) => [typeLabel(e.type), { text: e.type, mono: true }, e.outcome, e.count]),
    { caption: 'Events by type' },
  );
  L.heading('Failed sign-ins by user name');
  L.table(
    [['User name tried', 250], ['Failed sign-ins', 100, 'right']],
    s.failedSignInTargets.map((t) => [t.value, t.count]),
  );
  L.heading('Refused changes');
  L.table(
    [['When (UTC)', 78], ['Event', 92], ['By', 80], ['Target', 90], ['What was refused', 160]],
    s.refused.rows.map((e) => [minute(e.at), typeLabel(e.type), `${e.actor}${e.role ? ` (${e.role})` : ''}`, e.target ?? '–', e.note || '–']),
    { caption: 'Refused changes', maxLines: 5 },
  );
  firstOf(L, s.refused, '; /audit?outcome=refused lists all of them.');
  L.heading('Exports of the audit trail');
  L.table(
    [['When (UTC)', 80], ['By', 110], ['Table', 110], ['Format and filter', 200]],
    s.exports.rows.map((e) => [minute(e.at), `${e.actor}${e.role ? ` (${e.role})` : ''}`, e.target ?? '–', e.note]),
    { caption: 'Exports' },
  );
  firstOf(L, s.exports, '; /audit?type=audit.exported lists all of them.');
}

// ---------------------------------------------------------------------------------------------------------------

function access(L: PdfLayout, d: ReportData): void {
  const a = d.access;
  const policy = a.tokenPolicy;
  L.section(
    'access',
    '5  Access',
    'Who held which role in the period, every break-glass sign-in, and the API tokens still not revoked that are older than the profile allows or past their expiry (as of the report\'s generation).',
  );
  L.figures([
    { value: int(a.roleHolders.length), label: 'People with a role', note: `${int(a.roleHolders.reduce((n, h) => n + h.changes.filter((c) => c.from !== null).length, 0))} role changes` },
    { value: int(a.breakGlass.total), label: 'Break-glass sign-ins' },
    { value: int(a.staleTokens.total), label: 'Tokens past rotation', note: policy?.maxDays ? `over ${policy.maxDays} days or expired` : 'expired, not revoked' },
  ]);
  L.heading('Role holders');
  L.table(
    [['Person', 110], ['Role at the end', 80], ['Roles held', 110], ['Changes in the period', 170]],
    a.roleHolders.map((h) => [
      `${h.username}${h.disabled ? ' (disabled)' : ''}${h.via === 'sso' ? ' (SSO)' : ''}`,
      h.role,
      h.rolesHeld.join(', '),
      h.changes.length === 0 ? '–' : h.changes.map((c) => `${minute(c.at)} ${c.from ? `${c.from} to ${c.to}` : `created ${c.to}`} by ${c.by}`).join('; '),
    ]),
    { caption: 'Role holders', maxLines: 4 },
  );
  L.heading('Break-glass sign-ins');
  L.table(
    [['When (UTC)', 90], ['Who', 120], ['Target', 110], ['Detail', 150]],
    a.breakGlass.rows.map((e) => [minute(e.at), e.actor, e.target ?? '–', e.note || '–']),
    { caption: 'Break-glass sign-ins' },
  );
  firstOf(L, a.breakGlass, '; /audit?type=auth.break_glass lists all of them.');
  L.heading('Tokens past their rotation period');
  L.table(
    [['Token', 40, 'right'], ['Name', 110], ['Owner', 100], ['Created (UTC)', 80], ['Why', 140]],
    a.staleTokens.rows.map((t) => [
      t.id,
      t.name,
      t.owner,
      minute(t.createdAt),
      t.reason === 'past_expiry' ? `expired ${t.expiresAt === null ? '' : minute(t.expiresAt)}, not revoked (${t.state})` : `${int(t.ageDays)} days old, over ${policy?.maxDays ?? '?'} (${t.state})`,
    ]),
    { caption: 'Tokens past their rotation period' },
  );
  firstOf(L, a.staleTokens, '; swarm tokens list shows every token.');
}

// ---------------------------------------------------------------------------------------------------------------

function flags(L: PdfLayout, d: ReportData): void {
  L.section('flags', '6  Invariants and locked flags', 'Their state when the report was generated. An invariant can never be turned off; a locked flag behaves like one while its profile is active.');
  const rows = (list: ReportData['flags']['invariants']) =>
    list.map((f) => [
      { text: f.name, bold: true },
      { text: f.value ? 'on' : 'OFF', bold: true, color: f.value ? COLORS.ok : COLORS.danger },
      f.lockedBy.length ? `locked by ${f.lockedBy.join(', ')}` : f.tier === 'invariant' ? 'invariant' : f.layer,
      `${int(f.changesInPeriod)} / ${int(f.refusedInPeriod)}`,
      f.description,
    ]);
  const columns: Column[] = [['Flag', 150], ['State', 34], ['Held by', 70], ['Changes / refused in period', 58, 'right'], ['What it guarantees', 176]];
  L.heading('Invariants');
  L.table(columns, rows(d.flags.invariants), { caption: 'Invariants' });
  L.heading('Flags locked by the active profiles');
  L.table(columns, rows(d.flags.locked), { caption: 'Locked flags' });
  const settings: [string, string][] = [];
  if (d.retention) settings.push(['Retention', `${int(d.retention.minDays)} days minimum in the live trail (${d.retention.profile}): ${d.retention.basis}`]);
  if (d.masking) settings.push(['Masked keys', d.masking.keys.join(', ')]);
  if (d.decisionSample) {
    settings.push(['Decision log', `${percent(d.decisionSample.rate)} of allowed and asked calls kept while decision_log_all is off (${d.decisionSample.profiles.join(', ')}): ${d.decisionSample.basis}`]);
  }
  if (d.twoPersonRule) settings.push(['Two people', `from ${d.twoPersonRule.fromRisk} risk (${d.twoPersonRule.profiles.join(', ')})`]);
  if (settings.length) {
    L.heading('Settings of the active profiles', 40);
    L.keyValues(settings, { size: 8.5, labelWidth: 90 });
  }
}

// ---------------------------------------------------------------------------------------------------------------

function controlMapping(L: PdfLayout, d: ReportData, rows: readonly ControlRow[]): void {
  L.section(
    'controls',
    '7  Control mapping',
    d.controls.length === 0
      ? 'No compliance profile is active, so there is no control mapping. Select one with SWARM_PROFILE (for example bfsi).'
      : 'Each control of the active profiles with its status for the period: demonstrated (the evidence it names exists in the trail for the period and what serves it is in force now), not demonstrated (what is missing is said), or not applicable (nothing in the period for it to act on). Configuration alone never demonstrates a control.',
  );
  for (const { profile } of d.controls) {
    const mine = rows.filter((r) => r.profile === profile.name);
    L.heading(`${profile.title} (${profile.name})`, 80);
    L.note(`${controlCounts(mine)}, of ${plural(mine.length, 'control')}. ${profile.description}`);
    L.table(
      [['Control', 58], ['Requirement and how it is served', 150], ['Status for the period', 100], ['Served by (in force now)', 82], ['Evidence for the period', 120]],
      mine.map((r) => [
        { text: r.control.framework, lead: r.control.id },
        { text: r.control.how, lead: r.control.title },
        {
          text: r.reasons.length ? r.reasons.map((x) => `${x}.`).join('\n') : 'The evidence it names is in the trail for the period.',
          lead: r.status === 'not_demonstrated' ? 'NOT DEMONSTRATED' : STATUS_LABEL[r.status],
          color: r.status === 'not_demonstrated' ? COLORS.danger : r.status === 'demonstrated' ? COLORS.ok : COLORS.text,
        },
        { text: r.servedBy.map((x) => x.text).join('\n'), color: r.inForce ? COLORS.text : COLORS.danger },
        r.evidence.map((e) => `${e.text}.`).join('\n'),
      ]),
      { caption: `Control mapping, ${profile.name}`, fontSize: 7.5 },
    );
  }
}

// ---------------------------------------------------------------------------------------------------------------

function appendix(L: PdfLayout, d: ReportData): void {
  const a = d.appendix;
  const ends = `${isoSeconds(d.period.from)} to ${isoSeconds(d.period.to)}`;
  L.section(
    'appendix',
    'Appendix A  Denials of the period',
    a.omitted > 0
      ? `The newest ${int(a.rows.length)} of ${int(a.total)} denials, newest first; ${int(a.omitted)} older ${a.omitted === 1 ? 'denial is' : 'denials are'} left out of this report (export them as below).`
      : `All ${plural(a.total, 'denial')} of the period, newest first.`,
  );
  L.note(
    `Every denial of the period (${ends}, the end excluded) is in the exports: the denial explorer (/denials, a custom range with these ends, then "Export CSV" or "Export JSON lines"), or GET /api/v1/permissions/denials?format=csv (or format=ndjson) with from and to set to these ends (auditor role; the API's to includes its end). Each export is recorded in the trail.`,
  );
  L.table(
    [['When (UTC)', 80], ['Agent or principal', 78], ['Tool or request', 88], ['Rule source', 92], ['Reason', 147]],
    a.rows.map((r) => [
      isoSeconds(r.at).slice(0, 19).replace('T', ' '),
      `${r.agent ?? r.principal ?? '–'}${r.role ? `\n${r.role}` : ''}`,
      r.http ?? r.tool,
      { text: r.ruleSource, mono: true },
      r.reason ?? '',
    ]),
    { caption: 'Denials', fontSize: 7, maxLines: 3 },
  );
}
