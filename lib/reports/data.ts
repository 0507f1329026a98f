/**
 * The findings of an audit report for one period [from, to): every figure is an SQL aggregate or a capped list over
 * the audit tables, never a load of the period's rows, so a report over millions of denials takes seconds and a
 * bounded amount of memory (bench/report.ts). The denial figures come from the same functions the denial explorer's
 * API answers with (lib/audit/denial-stats.ts), so the report and GET /api/v1/permissions/denials/summary agree.
 *
 * The API's windows include their end; a report's period excludes it (consecutive reports must not count a row
 * twice). The rows recorded exactly at `to` are therefore counted once by the explorer's functions and taken off here.
 */
import { createHash } from 'node:crypto';
import { basename, isAbsolute, relative } from 'node:path';
import type Database from 'better-sqlite3';
import type { SwarmApp } from '@/lib/app';
import { keyDirFor, readLocalVerifierKey, parseVerifierKey } from '@/lib/audit/checkpoints';
import { ruleSourceFamily } from '@/lib/audit/denial-vocabulary';
import type { Ranked } from '@/lib/audit/denial-stats';
import { verifyAudit, type Failure } from '@/lib/audit/verify';
import { AppError } from '@/lib/errors';
import { FLAGS_BY_NAME } from '@/lib/flags/catalog';
import type { LoadedProfile } from '@/lib/profiles/profile';
import { newDecisionId } from '@/lib/permissions/decision-id';
import type { ReportPeriod } from './period';

export const SYSTEM_NAME = 'Swarm Permissions';
/** Denials listed in the appendix; the rest are counted and exported with the CSV export. */
export const DEFAULT_APPENDIX_CAP = 500;
/** Rows of any other list (flag changes, two-person decisions, exports, refusals). */
export const DEFAULT_LIST_CAP = 200;
const TOP = 10;
const DAY = 86400;

export interface ReportOptions {
  period: ReportPeriod;
  /** restrict the control mapping to one active profile */
  profile?: string;
  generatedBy: { actor: string; role: string | null };
  /** the report's id (default: a new rpt_<UUIDv7>) */
  id?: string;
  now?: number;
  appendixCap?: number;
  listCap?: number;
}

export interface Capped<T> {
  rows: T[];
  total: number;
}

export interface ChainIntegrity {
  chain: string;
  rowsChecked: number;
  rowsInPeriod: number;
  headHash: string | null;
  lastId: number | null;
  checkpoints: number;
  checkpointsValid: number;
  /** the newest signed checkpoint of the chain, when there is one */
  newest?: { id: number; size: number; signedAt: number; rowsAfter: number };
}

export interface IntegrityResult {
  ok: boolean;
  verifiedAt: number;
  /** how long the verification of both chains took (it reads every row) */
  verifyMs: number;
  /** the public key the checkpoints were checked with (the installation's, kept beside the database) */
  key?: { keyId: string; fingerprint: string; verifierKey: string };
  chains: ChainIntegrity[];
  failures: Failure[];
  /** signed checkpoints created inside the period */
  checkpointsInPeriod: number;
}

export interface ControlScope {
  name: string;
  title: string;
  description: string;
  frameworks: readonly string[];
}

export interface FlagState {
  name: string;
  tier: string;
  value: boolean;
  layer: string;
  lockedBy: readonly string[];
  description: string;
  changesInPeriod: number;
  refusedInPeriod: number;
}

export interface TwoPersonDecision {
  id: string;
  gate: string;
  agent: string;
  tool: string;
  risk: string;
  status: string;
  requestedBy: string;
  requestedAt: number;
  decidedAt: number | null;
  decidedBy: string | null;
  approvers: string;
  required: number;
}

export interface ApproverFigures {
  name: string;
  role: string | null;
  approvals: number;
  rejections: number;
}

export interface FlagChangeRow {
  at: number;
  name: string;
  action: string;
  oldValue: boolean | null;
  newValue: boolean | null;
  by: string;
  reason: string;
}

export interface EventLine {
  at: number;
  type: string;
  actor: string;
  role: string | null;
  outcome: string;
  target: string | null;
  /** a short, path-free summary of the detail */
  note: string;
}

export interface RevisionLine {
  revision: string;
  firstSeenAt: number;
  /** SHA-256 of the revision's canonical content (the revision id is its first 128 bits) */
  sha256: string;
}

export interface AppendixRow {
  id: number;
  at: number;
  agent: string | null;
  tool: string;
  http: string | null;
  ruleSource: string;
  role: string | null;
  principal: string | null;
  reason: string | null;
}

export interface ReportData {
  id: string;
  system: string;
  generatedAt: number;
  generatedBy: { actor: string; role: string | null };
  period: ReportPeriod;
  scope: {
    /** the active profiles the control mapping covers */
    profiles: ControlScope[];
    /** every active profile, whether or not the report is restricted */
    activeProfiles: readonly string[];
    restrictedTo?: string;
    revisionInForce: string;
    decisionLogAll: boolean;
  };
  integrity: IntegrityResult;
  decisions: { denied: number; allowed: number; asked: number; total: number };
  denials: {
    total: number;
    families: Ranked<string>[];
    topAgents: Ranked<string | null>[];
    topTools: Ranked<string>[];
    topRuleSources: Ranked<string>[];
    /** distinct agents, tools and rule sources denied in the period */
    distinct: { agents: number; tools: number; ruleSources: number };
    chart: { bucketSeconds: number; families: string[]; buckets: { start: number; total: number; counts: Record<string, number> }[] };
    /** rows whose arguments had values masked (only counted when a control asks for masking evidence) */
    masked?: number;
  };
  oversight: {
    requested: number;
    approved: number;
    rejected: number;
    expired: number;
    pending: number;
    /** approved requests whose call has run (status consumed): included in approved */
    ran: number;
    decidedByPeople: number;
    medianSecondsToDecision: number | null;
    byGate: { gate: string; requested: number; approved: number; rejected: number; expired: number; pending: number }[];
    approvers: ApproverFigures[];
    twoPerson: Capped<TwoPersonDecision>;
    /** approval attempts refused and recorded (a requester deciding their own call, a second vote by one person) */
    refusedAttempts: number;
  };
  changes: {
    /** the flag history of the period, refused attempts included (`refused` of `total`) */
    flagChanges: Capped<FlagChangeRow> & { refused: number };
    configEvents: Capped<EventLine>;
    revisions: Capped<RevisionLine>;
    /** the revision in force when the period began */
    revisionAtStart: string | null;
  };
  security: {
    total: number;
    byType: { type: string; outcome: string; count: number }[];
    signIns: number;
    signInUsers: number;
    failedSignIns: number;
    failedSignInTargets: Ranked<string>[];
    refused: Capped<EventLine>;
    exports: Capped<EventLine>;
    reads: number;
    reportsGenerated: number;
  };
  flags: { invariants: FlagState[]; locked: FlagState[] };
  retention?: { minDays: number; profile: string; basis: string; archives: number; archivedRows: number; oldestLiveRow: number | null };
  masking?: { keys: string[] };
  twoPersonRule?: { fromRisk: string; profiles: readonly string[] };
  controls: { profile: LoadedProfile }[];
  appendix: { rows: AppendixRow[]; total: number; cap: number; omitted: number };
}

/** rpt_ and a UUIDv7: time-ordered, like the decision ids. */
export function newReportId(now = Date.now()): string {
  return `rpt_${newDecisionId(now)}`;
}

/** A file path as a reader may see it: relative to the working directory, or its name alone. Never absolute. */
export function displayFile(path: string | null | undefined): string {
  if (!path) return '';
  if (!isAbsolute(path)) return path;
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : basename(path);
}

/** Absolute file paths inside a message (a refused configuration's error) reduced to their file names. */
export function withoutPaths(text: string): string {
  return text.replace(/(?:[A-Za-z]:)?(?:[\\/][^\s\\/:'"`,;()]+){2,}/g, (m) => (isAbsolute(m) ? displayFile(m) : m));
}

function fingerprintOf(verifierKey: string): { keyId: string; fingerprint: string; verifierKey: string } {
  const parsed = parseVerifierKey(verifierKey);
  const raw = Buffer.from(verifierKey.trim().split('+')[2] ?? '', 'base64').subarray(1);
  return { keyId: parsed.id.toString('hex'), fingerprint: `SHA256:${createHash('sha256').update(raw).digest('base64').replace(/=+$/, '')}`, verifierKey: verifierKey.trim() };
}

/** The gatherer: one read of each figure, all against one database connection. */
export function gatherReport(app: SwarmApp, options: ReportOptions): ReportData {
  const now = options.now ?? Date.now() / 1000;
  const { from, to } = options.period;
  const sqlite = app.db.$client;
  const listCap = options.listCap ?? DEFAULT_LIST_CAP;
  const appendixCap = options.appendixCap ?? DEFAULT_APPENDIX_CAP;

  const active = app.profiles.profiles;
  if (options.profile !== undefined && !active.some((p) => p.name === options.profile)) {
    const list = active.length > 0 ? `the active profiles are ${active.map((p) => p.name).join(', ')}` : 'no compliance profile is active';
    throw new AppError('BAD_REQUEST', `The profile "${options.profile}" is not active: ${list}.`);
  }
  const inScope = options.profile === undefined ? active : active.filter((p) => p.name === options.profile);
  const evidenceWanted = new Set(inScope.flatMap((p) => p.controls.flatMap((c) => c.evidence)));

  const resolution = app.flags.resolution();
  const integrity = gatherIntegrity(app, options.period);
  const denials = gatherDenials(app, sqlite, options.period, now, evidenceWanted.has('masking'));
  const events = eventCounts(sqlite, options.period);
  const count = (type: string, outcome?: string) => events.filter((e) => e.type === type && (outcome === undefined || e.outcome === outcome)).reduce((n, e) => n + e.count, 0);

  const allowed = count('decision.allowed');
  const asked = count('decision.asked');

  return {
    id: options.id ?? newReportId(now * 1000),
    system: SYSTEM_NAME,
    generatedAt: now,
    generatedBy: options.generatedBy,
    period: options.period,
    scope: {
      profiles: inScope.map((p) => ({ name: p.name, title: p.title, description: p.description, frameworks: p.frameworks })),
      activeProfiles: active.map((p) => p.name),
      restrictedTo: options.profile,
      revisionInForce: app.currentRevision(),
      decisionLogAll: resolution.values.get('decision_log_all') === true,
    },
    integrity,
    decisions: { denied: denials.total, allowed, asked, total: denials.total + allowed + asked },
    denials,
    oversight: gatherOversight(sqlite, options.period, now, listCap, events),
    changes: gatherChanges(sqlite, options.period, listCap),
    security: gatherSecurity(sqlite, options.period, listCap, events),
    flags: gatherFlags(sqlite, options.period, resolution.flags),
    retention: app.profiles.retention && { ...app.profiles.retention, ...archiveFigures(sqlite) },
    masking: app.profiles.maskKeys.size > 0 ? { keys: [...app.profiles.maskKeys].sort() } : undefined,
    twoPersonRule: app.profiles.twoPerson && { fromRisk: app.profiles.twoPerson.fromRisk, profiles: app.profiles.twoPerson.profiles },
    controls: inScope.map((profile) => ({ profile })),
    appendix: gatherAppendix(sqlite, options.period, appendixCap, denials.total),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Integrity
// ---------------------------------------------------------------------------------------------------------------

function gatherIntegrity(app: SwarmApp, p: ReportPeriod): IntegrityResult {
  const sqlite = app.db.$client;
  const keyText = readLocalVerifierKey(keyDirFor(app.options.dbPath, app.env));
  // The whole chain is verified (a break before the period would make the period's rows unprovable), streaming.
  const t0 = performance.now();
  const report = verifyAudit(sqlite, keyText, { from: p.from, to: p.to });
  const verifyMs = performance.now() - t0;
  const newest = sqlite.prepare<[string], { id: number; size: number; createdAt: number }>(
    'SELECT id, size, created_at AS createdAt FROM audit_checkpoints WHERE chain = ? ORDER BY id DESC LIMIT 1',
  );
  const inPeriodRows = sqlite.prepare<[number, number], { n: number }>('SELECT count(*) AS n FROM audit_checkpoints WHERE created_at >= ? AND created_at < ?');
  let key: IntegrityResult['key'];
  try {
    key = keyText ? fingerprintOf(keyText) : undefined;
  } catch {
    key = undefined;
  }
  return {
    ok: report.ok,
    verifiedAt: Date.now() / 1000,
    verifyMs,
    key,
    failures: report.failures.map((f) => ({ ...f, message: withoutPaths(f.message) })),
    checkpointsInPeriod: inPeriodRows.get(p.from, p.to)?.n ?? 0,
    chains: report.chains.map((c) => {
      const cp = newest.get(c.chain);
      // verify's range includes its end; the rows at exactly `to` are few, and this figure is only informational.
      return {
        chain: c.chain,
        rowsChecked: c.rowsChecked,
        rowsInPeriod: c.inRange.rows,
        headHash: c.headHash,
        lastId: c.lastId,
        checkpoints: c.checkpoints,
        checkpointsValid: c.checkpointsValid,
        newest: cp ? { id: cp.id, size: cp.size, signedAt: cp.createdAt, rowsAfter: Math.max(0, (c.lastId ?? 0) - cp.size) } : undefined,
      };
    }),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Denials
// ---------------------------------------------------------------------------------------------------------------

function rank<T>(counts: Map<T, number>, n: number): Ranked<T>[] {
  return [...counts.entries()]
    .filter(([, c]) => c > 0)
    .map(([value, count]) => ({ value, count }))
    .sort((a, b) => b.count - a.count || String(a.value).localeCompare(String(b.value)))
    .slice(0, n);
}

function gatherDenials(app: SwarmApp, sqlite: Database.Database, p: ReportPeriod, now: number, countMasked: boolean): ReportData['denials'] {
  // Every agent, tool and rule source of [from, to] (the explorer's function), less the rows at exactly `to`.
  const all = app.denials.summary({ from: p.from, to: p.to }, { now, top: Number.POSITIVE_INFINITY });
  const atEnd = sqlite
    .prepare<[number], { agent: string | null; tool: string; rule: string; n: number }>(
      'SELECT agent_name AS agent, tool_name AS tool, rule_source AS rule, count(*) AS n FROM permission_denials WHERE timestamp = ? GROUP BY 1, 2, 3',
    )
    .all(p.to);
  const agents = new Map(all.topAgents.map((r) => [r.value, r.count]));
  const tools = new Map(all.topTools.map((r) => [r.value, r.count]));
  const rules = new Map(all.topRuleSources.map((r) => [r.value, r.count]));
  const families = new Map(all.families.map((r) => [r.value, r.count]));
  let total = all.total;
  for (const r of atEnd) {
    total -= r.n;
    agents.set(r.agent, (agents.get(r.agent) ?? 0) - r.n);
    tools.set(r.tool, (tools.get(r.tool) ?? 0) - r.n);
    rules.set(r.rule, (rules.get(r.rule) ?? 0) - r.n);
    const f = ruleSourceFamily(r.rule);
    families.set(f, (families.get(f) ?? 0) - r.n);
  }
  const histogram = app.denials.histogram({ from: p.from, to: p.to }, { now });
  let bucketSeconds = histogram.bucketSeconds;
  let buckets = histogram.buckets.filter((b) => b.start < p.to).map((b) => ({ start: b.start, total: b.total, counts: { ...b.counts } }));
  if (bucketSeconds < DAY && p.to - p.from >= 2 * DAY) {
    // A report reads by day: the explorer's sub-day buckets all divide a day (counted from the epoch), so they fold
    // into whole UTC days exactly.
    const days = new Map<number, { start: number; total: number; counts: Record<string, number> }>();
    for (const b of buckets) {
      const start = Math.floor(b.start / DAY) * DAY;
      const day = days.get(start) ?? { start, total: 0, counts: {} };
      day.total += b.total;
      for (const [f, n] of Object.entries(b.counts)) day.counts[f] = (day.counts[f] ?? 0) + n;
      days.set(start, day);
    }
    buckets = [...days.values()].sort((a, b) => a.start - b.start);
    bucketSeconds = DAY;
  }
  // The last bucket may hold the rows at exactly `to` too: take them off as above.
  const last = buckets[buckets.length - 1];
  if (last && p.to < last.start + bucketSeconds) {
    for (const r of atEnd) {
      const f = ruleSourceFamily(r.rule);
      last.total -= r.n;
      last.counts[f] = (last.counts[f] ?? 0) - r.n;
    }
  }
  const masked = countMasked
    ? (sqlite.prepare<[number, number], { n: number }>('SELECT count(*) AS n FROM permission_denials WHERE timestamp >= ? AND timestamp < ? AND masked_paths IS NOT NULL').get(p.from, p.to)?.n ?? 0)
    : undefined;
  const familyList = rank(families, Number.POSITIVE_INFINITY);
  return {
    total,
    families: familyList,
    topAgents: rank(agents, TOP),
    topTools: rank(tools, TOP),
    topRuleSources: rank(rules, TOP),
    distinct: { agents: rank(agents, Number.POSITIVE_INFINITY).length, tools: rank(tools, Number.POSITIVE_INFINITY).length, ruleSources: rank(rules, Number.POSITIVE_INFINITY).length },
    chart: { bucketSeconds, families: familyList.map((f) => f.value), buckets },
    masked,
  };
}

function gatherAppendix(sqlite: Database.Database, p: ReportPeriod, cap: number, total: number): ReportData['appendix'] {
  const rows = sqlite
    .prepare<[number, number, number], { id: number; at: number; agent: string | null; tool: string; method: string | null; path: string | null; rule: string; role: string | null; principal: string | null; reason: string | null }>(
      `SELECT id, timestamp AS at, agent_name AS agent, tool_name AS tool, http_method AS method, http_path AS path, rule_source AS rule,
              user_role AS role, principal, reason
       FROM permission_denials WHERE timestamp >= ? AND timestamp < ? ORDER BY timestamp, id LIMIT ?`,
    )
    .all(p.from, p.to, cap)
    .map((r) => ({
      id: r.id,
      at: r.at,
      agent: r.agent,
      tool: r.tool,
      http: r.method ? `${r.method} ${r.path ?? ''}`.trim() : null,
      ruleSource: r.rule,
      role: r.role,
      principal: r.principal,
      reason: r.reason,
    }));
  return { rows, total, cap, omitted: Math.max(0, total - rows.length) };
}

// ---------------------------------------------------------------------------------------------------------------
// Security events
// ---------------------------------------------------------------------------------------------------------------

interface TypeCount {
  type: string;
  outcome: string;
  count: number;
}

/**
 * Counts of the period's security events by type and outcome. The types are few (a few dozen) while allowed decisions
 * may be millions of rows, so each type is counted on the (type, timestamp) index: the distinct types by skipping
 * through the index, then one range count per type (decisions are always `succeeded`, the others group by outcome).
 */
function eventCounts(sqlite: Database.Database, p: ReportPeriod): TypeCount[] {
  const next = sqlite.prepare<[string], { type: string | null }>('SELECT min(type) AS type FROM security_events WHERE type > ?');
  const countOf = sqlite.prepare<[string, number, number], { n: number }>('SELECT count(*) AS n FROM security_events WHERE type = ? AND timestamp >= ? AND timestamp < ?');
  const byOutcome = sqlite.prepare<[string, number, number], { outcome: string; n: number }>(
    'SELECT outcome, count(*) AS n FROM security_events WHERE type = ? AND timestamp >= ? AND timestamp < ? GROUP BY outcome',
  );
  const out: TypeCount[] = [];
  let type = next.get('')?.type ?? null;
  while (type !== null) {
    if (type.startsWith('decision.')) {
      const n = countOf.get(type, p.from, p.to)?.n ?? 0;
      if (n > 0) out.push({ type, outcome: 'succeeded', count: n });
    } else {
      for (const r of byOutcome.all(type, p.from, p.to)) out.push({ type, outcome: r.outcome, count: r.n });
    }
    type = next.get(type)?.type ?? null;
  }
  return out.sort((a, b) => b.count - a.count || a.type.localeCompare(b.type));
}

interface EventRowLite {
  at: number;
  type: string;
  actor: string;
  role: string | null;
  outcome: string;
  target: string | null;
  detail: string | null;
}

function noteOf(e: EventRowLite): string {
  let d: Record<string, unknown> = {};
  try {
    d = e.detail ? (JSON.parse(e.detail) as Record<string, unknown>) : {};
  } catch {
    d = {};
  }
  const s = (v: unknown) => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));
  switch (e.type) {
    case 'flag.refused':
      return `asked ${d.requested === null ? 'reset' : d.requested ? 'on' : 'off'}: ${s(d.reason)}. Refused: ${s(d.refusal)}`;
    case 'config.refused':
      return `refused: ${s(d.error)}`;
    case 'config.loaded':
      return d.revision ? `revision ${s(d.revision)}` : '';
    case 'profile.switched':
      return `from ${(Array.isArray(d.from) && d.from.length ? d.from.join(', ') : '(none)')} to ${(Array.isArray(d.to) && d.to.length ? d.to.join(', ') : '(none)')}`;
    case 'audit.exported': {
      const filter = d.filter && typeof d.filter === 'object' ? Object.entries(d.filter as Record<string, unknown>).map(([k, v]) => `${k}=${s(v)}`).join(' ') : '';
      return `${s(d.format) || 'export'}${filter ? `, filter ${filter}` : ', everything'}`;
    }
    default:
      return s(d.reason ?? d.refusal ?? d.error ?? '');
  }
}

function eventLine(e: EventRowLite): EventLine {
  const configTarget = e.type.startsWith('config.');
  return {
    at: e.at,
    type: e.type,
    actor: e.actor,
    role: e.role,
    outcome: e.outcome,
    target: configTarget ? displayFile(e.target) : e.target,
    note: withoutPaths(noteOf(e)),
  };
}

function eventList(sqlite: Database.Database, where: string, params: unknown[], cap: number): EventLine[] {
  return sqlite
    .prepare<unknown[], EventRowLite>(
      `SELECT timestamp AS at, type, actor, actor_role AS role, outcome, target, detail_json AS detail FROM security_events WHERE ${where} ORDER BY timestamp, id LIMIT ?`,
    )
    .all(...params, cap)
    .map(eventLine);
}

function gatherSecurity(sqlite: Database.Database, p: ReportPeriod, cap: number, events: TypeCount[]): ReportData['security'] {
  const sum = (pred: (e: TypeCount) => boolean) => events.filter(pred).reduce((n, e) => n + e.count, 0);
  const refusedTotal = sum((e) => e.outcome === 'refused' && !e.type.startsWith('decision.'));
  const exportsTotal = sum((e) => e.type === 'audit.exported');
  const refusedTypes = [...new Set(events.filter((e) => e.outcome === 'refused' && !e.type.startsWith('decision.')).map((e) => e.type))];
  const refused = refusedTypes.length
    ? eventList(sqlite, `type IN (${refusedTypes.map(() => '?').join(', ')}) AND timestamp >= ? AND timestamp < ? AND outcome = 'refused'`, [...refusedTypes, p.from, p.to], cap)
    : [];
  const exports = exportsTotal ? eventList(sqlite, `type = 'audit.exported' AND timestamp >= ? AND timestamp < ?`, [p.from, p.to], cap) : [];
  const failedTargets = sqlite
    .prepare<[number, number], { target: string | null; n: number }>(
      `SELECT coalesce(target, actor) AS target, count(*) AS n FROM security_events WHERE type = 'auth.login.failed' AND timestamp >= ? AND timestamp < ?
       GROUP BY 1 ORDER BY n DESC, 1 LIMIT ${TOP}`,
    )
    .all(p.from, p.to)
    .map((r) => ({ value: r.target ?? '(unknown)', count: r.n }));
  const signInUsers =
    sqlite.prepare<[number, number], { n: number }>(`SELECT count(DISTINCT actor) AS n FROM security_events WHERE type = 'auth.login.succeeded' AND timestamp >= ? AND timestamp < ?`).get(p.from, p.to)?.n ??
    0;
  return {
    total: sum(() => true),
    byType: events.filter((e) => !e.type.startsWith('decision.')),
    signIns: sum((e) => e.type === 'auth.login.succeeded'),
    signInUsers,
    failedSignIns: sum((e) => e.type === 'auth.login.failed'),
    failedSignInTargets: failedTargets,
    refused: { rows: refused, total: refusedTotal },
    exports: { rows: exports, total: exportsTotal },
    reads: sum((e) => e.type === 'audit.queried'),
    reportsGenerated: sum((e) => e.type === 'audit.report_generated'),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Human oversight
// ---------------------------------------------------------------------------------------------------------------

function gatherOversight(sqlite: Database.Database, p: ReportPeriod, now: number, cap: number, events: TypeCount[]): ReportData['oversight'] {
  // A request past its expiry that the sweeper has not marked yet reads as expired (as the approval store reads it).
  const byGate = sqlite
    .prepare<[number, number, number], { gate: string; state: string; n: number }>(
      `SELECT gate, CASE WHEN status = 'pending' AND expires_at <= ? THEN 'expired' ELSE status END AS state, count(*) AS n
       FROM approvals WHERE requested_at >= ? AND requested_at < ? GROUP BY 1, 2`,
    )
    .all(now, p.from, p.to);
  const gates = new Map<string, { gate: string; requested: number; approved: number; rejected: number; expired: number; pending: number }>();
  let ran = 0;
  for (const r of byGate) {
    const g = gates.get(r.gate) ?? { gate: r.gate, requested: 0, approved: 0, rejected: 0, expired: 0, pending: 0 };
    g.requested += r.n;
    if (r.state === 'approved' || r.state === 'consumed') g.approved += r.n;
    else if (r.state === 'rejected') g.rejected += r.n;
    else if (r.state === 'expired') g.expired += r.n;
    else g.pending += r.n;
    if (r.state === 'consumed') ran += r.n;
    gates.set(r.gate, g);
  }
  const list = [...gates.values()].sort((a, b) => b.requested - a.requested || a.gate.localeCompare(b.gate));
  const total = (k: 'requested' | 'approved' | 'rejected' | 'expired' | 'pending') => list.reduce((n, g) => n + g[k], 0);

  // Median time from request to a person's decision, by an ORDER BY ... OFFSET on the decided requests.
  const decided = `FROM approvals WHERE requested_at >= ? AND requested_at < ? AND decided_at IS NOT NULL AND status IN ('approved', 'consumed', 'rejected')`;
  const n = sqlite.prepare<[number, number], { n: number }>(`SELECT count(*) AS n ${decided}`).get(p.from, p.to)?.n ?? 0;
  let median: number | null = null;
  if (n > 0) {
    const mid = sqlite
      .prepare<[number, number, number], { d: number }>(`SELECT decided_at - requested_at AS d ${decided} ORDER BY d LIMIT 2 OFFSET ?`)
      .all(p.from, p.to, Math.floor((n - 1) / 2))
      .map((r) => r.d);
    median = n % 2 === 1 ? (mid[0] ?? null) : ((mid[0] ?? 0) + (mid[1] ?? mid[0] ?? 0)) / 2;
  }

  const approvers = new Map<string, ApproverFigures>();
  for (const r of sqlite
    .prepare<[number, number], { name: string; role: string; n: number }>(
      `SELECT v.approver AS name, v.approver_role AS role, count(*) AS n FROM approval_votes v JOIN approvals a ON a.id = v.approval_id
       WHERE a.requested_at >= ? AND a.requested_at < ? GROUP BY 1, 2`,
    )
    .all(p.from, p.to)) {
    const a = approvers.get(r.name) ?? { name: r.name, role: r.role, approvals: 0, rejections: 0 };
    a.approvals += r.n;
    approvers.set(r.name, a);
  }
  for (const r of sqlite
    .prepare<[number, number], { name: string; role: string | null; n: number }>(
      `SELECT a.decided_by AS name, u.role AS role, count(*) AS n FROM approvals a LEFT JOIN users u ON u.username = a.decided_by
       WHERE a.status = 'rejected' AND a.decided_by IS NOT NULL AND a.requested_at >= ? AND a.requested_at < ? GROUP BY 1, 2`,
    )
    .all(p.from, p.to)) {
    const a = approvers.get(r.name) ?? { name: r.name, role: r.role, approvals: 0, rejections: 0 };
    a.rejections += r.n;
    approvers.set(r.name, a);
  }

  const twoWhere = `FROM approvals a WHERE a.approvals_required >= 2 AND a.status IN ('approved', 'consumed', 'rejected') AND a.requested_at >= ? AND a.requested_at < ?`;
  const twoTotal = sqlite.prepare<[number, number], { n: number }>(`SELECT count(*) AS n ${twoWhere}`).get(p.from, p.to)?.n ?? 0;
  const twoRows = sqlite
    .prepare<[number, number, number], TwoPersonDecision>(
      `SELECT a.id, a.gate, a.agent_name AS agent, a.tool_name AS tool, a.risk, a.status, a.requested_by AS requestedBy, a.requested_at AS requestedAt,
              a.decided_at AS decidedAt, a.decided_by AS decidedBy, a.approvals_required AS required,
              coalesce((SELECT group_concat(approver || ' (' || approver_role || ')', ', ') FROM (SELECT approver, approver_role FROM approval_votes v WHERE v.approval_id = a.id ORDER BY v.at)), '') AS approvers
       ${twoWhere} ORDER BY a.requested_at, a.id LIMIT ?`,
    )
    .all(p.from, p.to, cap);

  return {
    requested: total('requested'),
    approved: total('approved'),
    rejected: total('rejected'),
    expired: total('expired'),
    pending: total('pending'),
    ran,
    decidedByPeople: n,
    medianSecondsToDecision: median,
    byGate: list,
    approvers: [...approvers.values()].sort((a, b) => b.approvals + b.rejections - (a.approvals + a.rejections) || a.name.localeCompare(b.name)),
    twoPerson: { rows: twoRows, total: twoTotal },
    refusedAttempts: events.filter((e) => e.type.startsWith('approval.') && e.outcome === 'refused').reduce((s, e) => s + e.count, 0),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Policy and flag changes
// ---------------------------------------------------------------------------------------------------------------

function gatherChanges(sqlite: Database.Database, p: ReportPeriod, cap: number): ReportData['changes'] {
  const flagCounts = sqlite
    .prepare<[number, number], { n: number; refused: number | null }>(
      `SELECT count(*) AS n, sum(action = 'refused') AS refused FROM flag_changes WHERE changed_at >= ? AND changed_at < ?`,
    )
    .get(p.from, p.to);
  const flagRows = sqlite
    .prepare<[number, number, number], { at: number; name: string; action: string; oldValue: number | null; newValue: number | null; by: string; reason: string }>(
      `SELECT changed_at AS at, name, action, old_value AS oldValue, new_value AS newValue, changed_by AS by, reason
       FROM flag_changes WHERE changed_at >= ? AND changed_at < ? ORDER BY changed_at, id LIMIT ?`,
    )
    .all(p.from, p.to, cap)
    .map((r) => ({ ...r, oldValue: r.oldValue === null ? null : r.oldValue === 1, newValue: r.newValue === null ? null : r.newValue === 1 }));
  const configWhere = `type IN ('config.loaded', 'config.refused', 'profile.switched') AND timestamp >= ? AND timestamp < ?`;
  const configTotal = sqlite.prepare<[number, number], { n: number }>(`SELECT count(*) AS n FROM security_events WHERE ${configWhere}`).get(p.from, p.to)?.n ?? 0;
  const configEvents = eventList(sqlite, configWhere, [p.from, p.to], cap);
  const revTotal = sqlite.prepare<[number, number], { n: number }>('SELECT count(*) AS n FROM policy_revisions WHERE first_seen_at >= ? AND first_seen_at < ?').get(p.from, p.to)?.n ?? 0;
  const revisions: RevisionLine[] = [];
  // One revision's content at a time: the texts of the configuration files can be large.
  for (const r of sqlite
    .prepare<[number, number, number], { revision: string; at: number; content: string }>(
      'SELECT revision, first_seen_at AS at, content_json AS content FROM policy_revisions WHERE first_seen_at >= ? AND first_seen_at < ? ORDER BY first_seen_at, revision LIMIT ?',
    )
    .iterate(p.from, p.to, cap)) {
    revisions.push({ revision: r.revision, firstSeenAt: r.at, sha256: createHash('sha256').update(r.content).digest('hex') });
  }
  const atStart =
    sqlite.prepare<[number], { revision: string }>('SELECT revision FROM policy_revisions WHERE first_seen_at < ? ORDER BY first_seen_at DESC LIMIT 1').get(p.from)?.revision ?? null;
  return {
    flagChanges: { rows: flagRows, total: flagCounts?.n ?? 0, refused: flagCounts?.refused ?? 0 },
    configEvents: { rows: configEvents, total: configTotal },
    revisions: { rows: revisions, total: revTotal },
    revisionAtStart: atStart,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Flags, retention
// ---------------------------------------------------------------------------------------------------------------

function gatherFlags(sqlite: Database.Database, p: ReportPeriod, flags: ReadonlyMap<string, import('@/lib/flags/resolve').ResolvedFlag>): ReportData['flags'] {
  // The flag history keeps refused attempts beside the changes (action 'refused').
  const counts = sqlite
    .prepare<[number, number], { name: string; refused: number; n: number }>(
      `SELECT name, action = 'refused' AS refused, count(*) AS n FROM flag_changes WHERE changed_at >= ? AND changed_at < ? GROUP BY 1, 2`,
    )
    .all(p.from, p.to);
  const changes = new Map(counts.filter((r) => !r.refused).map((r) => [r.name, r.n]));
  const refused = new Map(counts.filter((r) => r.refused).map((r) => [r.name, r.n]));
  const state = (f: import('@/lib/flags/resolve').ResolvedFlag): FlagState => ({
    name: f.name,
    tier: f.tier,
    value: f.value,
    layer: f.layer,
    lockedBy: f.lockedBy ?? [],
    description: FLAGS_BY_NAME.get(f.name)?.description ?? '',
    changesInPeriod: changes.get(f.name) ?? 0,
    refusedInPeriod: refused.get(f.name) ?? 0,
  });
  const all = [...flags.values()].sort((a, b) => a.name.localeCompare(b.name));
  return {
    invariants: all.filter((f) => f.tier === 'invariant').map(state),
    locked: all.filter((f) => f.tier !== 'invariant' && (f.lockedBy?.length ?? 0) > 0).map(state),
  };
}

function archiveFigures(sqlite: Database.Database): { archives: number; archivedRows: number; oldestLiveRow: number | null } {
  const a = sqlite.prepare<[], { n: number; rows: number | null }>('SELECT count(*) AS n, sum(rows) AS rows FROM audit_archives').get();
  const oldest = sqlite.prepare<[], { t: number | null }>('SELECT min(timestamp) AS t FROM permission_denials').get();
  return { archives: a?.n ?? 0, archivedRows: a?.rows ?? 0, oldestLiveRow: oldest?.t ?? null };
}
