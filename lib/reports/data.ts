/**
 * The findings of an audit report for one period [from, to): every figure is an SQL aggregate or a capped list over
 * the audit tables, never a load of the period's rows, so a report over millions of denials takes seconds and a
 * bounded amount of memory (bench/report.ts). The SQL is written once for SQLite and PostgreSQL and read through a
 * ReportReader (reader.ts, one for both over the dialect port): the same trail gives the same report on either.
 *
 * The denial figures are read as the denial explorer reads them (lib/audit/denials/stats.ts): whole days from the
 * daily counts, the rest from the audit table, exact either way, so the report and
 * GET /api/v1/permissions/denials/summary agree. A report's period excludes its end (consecutive reports must not
 * count a row twice), where the explorer's windows include theirs.
 */
import { createHash } from 'node:crypto';
import { parseVerifierKey } from '@/lib/audit/trail/checkpoints';
import { ruleSourceFamily } from '@/lib/audit/denials/vocabulary';
import { bucketOrigin, chooseBucketSeconds, SummaryFold, topOf, type DenialGroup } from '@/lib/audit/denials/stats';
import type { Failure } from '@/lib/audit/trail/verify';
import type { ImpactSummary } from '@/lib/change-control/store';
import { AppError } from '@/lib/errors';
import { FLAGS_BY_NAME } from '@/lib/flags/catalog';
import type { ResolvedFlag } from '@/lib/flags/resolve';
import { newDecisionId } from '@/lib/permissions/decision-id';
import { displayFile, withoutPaths } from './paths';
import { isoSeconds, type ReportPeriod } from './period';
import { unindexed, type ReportReader, type SqlParam } from './reader';

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

/** What a report says: the findings of gatherReport. */
export type ReportData = Awaited<ReturnType<typeof gatherReport>>;

/** rpt_ and a UUIDv7: time-ordered, like the decision ids. */
export function newReportId(now = Date.now()): string {
  return `rpt_${newDecisionId(now)}`;
}

/** The key's id and fingerprint (undefined: no key, or one that does not parse). */
function fingerprintOf(verifierKey: string | undefined) {
  if (!verifierKey) return undefined;
  try {
    const parsed = parseVerifierKey(verifierKey);
    const raw = Buffer.from(verifierKey.trim().split('+')[2] ?? '', 'base64').subarray(1);
    return { keyId: parsed.id.toString('hex'), fingerprint: `SHA256:${createHash('sha256').update(raw).digest('base64').replace(/=+$/, '')}`, verifierKey: verifierKey.trim() };
  } catch {
    return undefined;
  }
}

/** How many rows `from` (a FROM and its WHERE, bound to `params`) holds. */
async function countOf(r: ReportReader, from: string, params: SqlParam[] = []): Promise<number> {
  return (await r.get<{ n: number }>(`SELECT count(*) AS n FROM ${from}`, params))?.n ?? 0;
}

/**
 * The first `cap` rows of a list in `order` and how many it holds: `from` is its FROM and WHERE, bound to `params`;
 * `total` where the caller has counted them already. Nothing is listed when there is nothing to list.
 */
async function cappedList<T>(r: ReportReader, columns: string, from: string, order: string, params: SqlParam[], cap: number, total?: number): Promise<Capped<T>> {
  const n = total ?? (await countOf(r, from, params));
  return { rows: n > 0 ? await r.all<T>(`SELECT ${columns} FROM ${from} ORDER BY ${order} LIMIT ?`, [...params, cap]) : [], total: n };
}

/** `f` of each item, one after the other: one statement at a time, and one large value in memory at a time. */
async function inTurn<T, U>(items: readonly T[], f: (item: T) => Promise<U>): Promise<U[]> {
  const out: U[] = [];
  for (const item of items) out.push(await f(item));
  return out;
}

/**
 * The gatherer: one read of each figure, through the reader of whichever database holds the trail (reader.ts). Each
 * figure is one statement, so it is consistent in itself; figures read a moment apart may differ by the rows written
 * in between, as they did when they were read one after the other on one connection.
 */
export async function gatherReport(reader: ReportReader, options: ReportOptions) {
  const now = options.now ?? Date.now() / 1000;
  const listCap = options.listCap ?? DEFAULT_LIST_CAP;
  const appendixCap = options.appendixCap ?? DEFAULT_APPENDIX_CAP;
  const { profiles } = reader.facts;

  const active = profiles.profiles;
  if (options.profile !== undefined && !active.some((p) => p.name === options.profile)) {
    const list = active.length > 0 ? `the active profiles are ${active.map((p) => p.name).join(', ')}` : 'no compliance profile is active';
    throw new AppError('BAD_REQUEST', `The profile "${options.profile}" is not active: ${list}.`);
  }
  const inScope = options.profile === undefined ? active : active.filter((p) => p.name === options.profile);
  const evidenceWanted = new Set(inScope.flatMap((p) => p.controls.flatMap((c) => c.evidence)));

  const resolution = reader.facts.flags();
  // The verification of the chains (the longest step: worker threads on SQLite, its own reads on PostgreSQL) runs while
  // the figures are read, and is awaited last. A failure of either is the report's failure, never an unhandled one.
  const integrityRead = gatherIntegrity(reader, options.period);
  integrityRead.catch(() => undefined);
  const countsFailure = await checkDailyCounts(reader, options.period);
  const denials = await gatherDenials(reader, options.period, evidenceWanted.has('masking'), countsFailure === undefined);
  const events = await eventCounts(reader, options.period);
  const allowed = sumOf(events, (e) => e.type === 'decision.allowed');
  const asked = sumOf(events, (e) => e.type === 'decision.asked');
  const oversight = await gatherOversight(reader, options.period, now, listCap, events);
  const changes = await gatherChanges(reader, options.period, listCap);
  const security = await gatherSecurity(reader, options.period, listCap, events);
  const access = await gatherAccess(reader, options.period, now, listCap, profiles.tokens);
  const flags = await gatherFlags(reader, options.period, resolution.flags);
  const retention = profiles.retention && { ...profiles.retention, ...(await archiveFigures(reader)) };
  const appendix = await gatherAppendix(reader, options.period, appendixCap, denials.total);
  const hitl = await gatherHitl(reader, options.period, denials.families.find((f) => f.value === 'hitl')?.count ?? 0);
  const coverage = await gatherCoverage(reader, options.period, now);
  const verified = await integrityRead;
  const integrity = countsFailure ? { ...verified, ok: false, failures: [...verified.failures, countsFailure] } : verified;

  return {
    id: options.id ?? newReportId(now * 1000),
    system: SYSTEM_NAME,
    generatedAt: now,
    generatedBy: options.generatedBy,
    period: options.period,
    scope: {
      /** the active profiles the control mapping covers */
      profiles: inScope.map((p) => ({ name: p.name, title: p.title, description: p.description, frameworks: p.frameworks })),
      /** every active profile, whether or not the report is restricted */
      activeProfiles: active.map((p) => p.name),
      restrictedTo: options.profile,
      revisionInForce: reader.facts.revision(),
      decisionLogAll: resolution.values.get('decision_log_all') === true,
      /** change control enforced by the active profiles, in words (undefined: not enforced) */
      changeControl: profiles.changeControl && `${profiles.changeControl.approvers} approvers (${profiles.changeControl.roles.join(' or ')}) other than the proposer, by ${profiles.changeControl.profiles.join(', ')}`,
    },
    integrity,
    decisions: { denied: denials.total, allowed, asked, total: denials.total + allowed + asked },
    denials: { ...denials, hitl },
    coverage,
    oversight,
    changes,
    security,
    /** who held which role, break-glass sign-ins, tokens past their rotation period (issue 27) */
    access,
    flags,
    retention,
    masking: profiles.maskKeys.size > 0 ? { keys: [...profiles.maskKeys].sort() } : undefined,
    twoPersonRule: profiles.twoPerson && { fromRisk: profiles.twoPerson.fromRisk, profiles: profiles.twoPerson.profiles },
    /**
     * the fraction of allowed and asked decisions the trail keeps while decision_log_all is off (the profiles'
     * decision_log.sample): with decision_log_all off, the period's allowed and asked counts are of this sample
     */
    decisionSample: profiles.decisionLog && { rate: profiles.decisionLog.sample, profile: profiles.decisionLog.profile, basis: profiles.decisionLog.basis, profiles: profiles.decisionLog.profiles },
    controls: inScope.map((profile) => ({ profile })),
    /** the newest `cap` denials of the period, newest first */
    appendix,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Integrity
// ---------------------------------------------------------------------------------------------------------------

async function gatherIntegrity(r: ReportReader, p: ReportPeriod) {
  const keyText = r.facts.verifierKey();
  // The whole chain is verified (a break before the period would make the period's rows unprovable), streaming.
  const t0 = performance.now();
  const report = await r.verify(keyText, { from: p.from, to: p.to });
  const verifyMs = performance.now() - t0;
  const inPeriod = await countOf(r, 'audit_checkpoints WHERE created_at >= ? AND created_at < ?', [p.from, p.to]);
  const chains = await inTurn(report.chains, async (c) => {
    const cp = await r.get<{ id: number; size: number; createdAt: number }>(
      'SELECT id, size, created_at AS "createdAt" FROM audit_checkpoints WHERE chain = ? ORDER BY id DESC LIMIT 1',
      [c.chain],
    );
    return {
      chain: c.chain,
      rowsChecked: c.rowsChecked,
      // verify's range includes its end; the rows at exactly `to` are few, and this figure is only informational.
      rowsInPeriod: c.inRange.rows,
      headHash: c.headHash,
      lastId: c.lastId,
      checkpoints: c.checkpoints,
      checkpointsValid: c.checkpointsValid,
      /** the newest signed checkpoint of the chain, when there is one */
      newest: cp ? { id: cp.id, size: cp.size, signedAt: cp.createdAt, rowsAfter: Math.max(0, (c.lastId ?? 0) - cp.size) } : undefined,
    };
  });
  return {
    ok: report.ok,
    verifiedAt: Date.now() / 1000,
    /** how long the verification of both chains took (it reads every row) */
    verifyMs,
    /** the public key the checkpoints were checked with (the installation's, kept beside the database) */
    key: fingerprintOf(keyText),
    failures: report.failures.map((f): Failure => ({ ...f, message: withoutPaths(f.message) })),
    /** signed checkpoints created inside the period */
    checkpointsInPeriod: inPeriod,
    chains,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Denials
// ---------------------------------------------------------------------------------------------------------------

/** Every denial up to it is in the daily counts, none after (lib/audit/denials/rollup.ts); 0 where none are kept. */
const HIGH_WATER = '(SELECT coalesce(max(high_water), 0) FROM permission_denial_rollup_state WHERE id = 1)';

/** Where the denials of a period are read: whole UTC days from the daily counts, the rest from the audit table. */
interface DenialPlan {
  /** the whole days [first, last] read from the daily counts */
  days?: { first: number; last: number };
  /** the parts read from the audit table */
  rows: { where: string; params: SqlParam[] }[];
}

/**
 * As the denial explorer reads (lib/audit/denials/stats.ts): the daily counts for the whole days of [from, to), the
 * audit table for the partial days at its edges and for the rows after the counts' high-water mark. The mark is read
 * inside the statement that uses it, so the counts and the rows after it are one snapshot. A period's end is
 * excluded, so its last whole day is the one that ends at or before `to`.
 */
function denialPlan(r: ReportReader, p: ReportPeriod, useDays: boolean): DenialPlan {
  const firstDay = Math.ceil(p.from / DAY);
  const lastDay = Math.floor(p.to / DAY) - 1;
  const between = (a: number, b: number) => ({ where: 'timestamp >= ? AND timestamp < ?', params: [a, b] });
  if (!useDays || firstDay > lastDay) return { rows: [between(p.from, p.to)] };
  const rows = [];
  if (p.from < firstDay * DAY) rows.push(between(p.from, firstDay * DAY));
  if ((lastDay + 1) * DAY < p.to) rows.push(between((lastDay + 1) * DAY, p.to));
  // Rows not yet counted: by id (a short range), the whole days' bounds as plain filters.
  const t = unindexed(r, 'timestamp');
  rows.push({ where: `id > ${HIGH_WATER} AND ${t} >= ? AND ${t} < ?`, params: [firstDay * DAY, (lastDay + 1) * DAY] });
  return { days: { first: firstDay, last: lastDay }, rows };
}

/**
 * One statement over the plan's parts, summed by `columns`: `fromDays` over the daily counts (bound to the first and
 * last day), `fromRows` over each part of the audit table (bound to `rowParams`, then the part's own bounds).
 */
function planStatement(plan: DenialPlan, columns: string, fromDays: string, fromRows: (where: string) => string, rowParams: SqlParam[] = []) {
  const parts: string[] = [];
  const params: SqlParam[] = [];
  if (plan.days) {
    parts.push(fromDays);
    params.push(plan.days.first, plan.days.last);
  }
  for (const part of plan.rows) {
    parts.push(fromRows(part.where));
    params.push(...rowParams, ...part.params);
  }
  return { sql: `SELECT ${columns}, sum(n) AS n FROM (${parts.join(' UNION ALL ')}) AS parts GROUP BY ${columns}`, params };
}

/**
 * The daily counts are a cache of the chained rows, without a chain of their own: before the report counts from them,
 * each whole day of the period that the live trail still holds is counted again from its rows (those up to the
 * counts' high-water mark), by everything the counts are kept by (rule, agent, tool, role), and compared: the day's
 * total alone would let the same number of denials be given to another agent or tool. A day that differs is a
 * failure of the report's integrity, and the figures are then counted from the rows alone. Days before the oldest
 * live row (archived) cannot be counted again.
 */
export async function checkDailyCounts(r: ReportReader, p: ReportPeriod): Promise<Failure | undefined> {
  await r.refreshDailyCounts();
  const { archives, oldestLiveRow } = await archiveFigures(r);
  if (oldestLiveRow === null) return undefined;
  // With an archive, the day of the oldest live row may be partly archived: only the days after it are whole.
  const liveFirstDay = Math.floor(oldestLiveRow / DAY) + (archives > 0 ? 1 : 0);
  const firstDay = Math.max(Math.ceil(p.from / DAY), liveFirstDay);
  const lastDay = Math.floor(p.to / DAY) - 1;
  if (firstDay > lastDay) return undefined;
  type Group = { day: number; rule: string; agent: string; tool: string; role: string; n: number };
  const tally = (groups: Group[]) => {
    const byGroup = new Map<string, Group>();
    for (const g of groups) {
      const group = { ...g, day: Number(g.day), n: Number(g.n) };
      const key = JSON.stringify([group.day, group.rule, group.agent, group.tool, group.role]);
      byGroup.set(key, { ...group, n: (byGroup.get(key)?.n ?? 0) + group.n });
    }
    return byGroup;
  };
  const counted = tally(
    await r.all<Group>(
      'SELECT day, rule_source AS rule, agent_name AS agent, tool_name AS tool, user_role AS role, sum(n) AS n FROM permission_denial_daily_counts WHERE day >= ? AND day <= ? GROUP BY day, rule_source, agent_name, tool_name, user_role',
      [firstDay, lastDay],
    ),
  );
  // Grouped as the rollup groups them (lib/audit/denials/rollup.ts: no agent or role is '').
  const rows = tally(
    await r.all<Group>(
      `SELECT floor(timestamp / ${DAY}) AS day, rule_source AS rule, coalesce(agent_name, '') AS agent, tool_name AS tool, coalesce(user_role, '') AS role, count(*) AS n
       FROM permission_denials WHERE timestamp >= ? AND timestamp < ? AND id <= ${HIGH_WATER} GROUP BY 1, 2, 3, 4, 5`,
      [firstDay * DAY, (lastDay + 1) * DAY],
    ),
  );
  const dayTotal = (groups: Map<string, Group>, day: number) => [...groups.values()].filter((g) => g.day === day).reduce((n, g) => n + g.n, 0);
  for (let day = firstDay; day <= lastDay; day++) {
    const date = ymd(day);
    const failure = (message: string): Failure => ({ table: 'permission_denial_daily_counts', id: day, problem: 'changed', message: `${message}: the counts were changed outside the product, so this report counts every figure from the rows` });
    const c = dayTotal(counted, day);
    const n = dayTotal(rows, day);
    if (c !== n) return failure(`the daily counts of ${date} say ${c} denials, the chained rows ${n}`);
    for (const key of new Set([...counted.keys(), ...rows.keys()])) {
      const g = counted.get(key) ?? rows.get(key)!;
      if (g.day !== day || (counted.get(key)?.n ?? 0) === (rows.get(key)?.n ?? 0)) continue;
      const who = `${g.agent || 'no agent'} calling ${g.tool} (${g.rule}${g.role ? `, ${g.role}` : ''})`;
      return failure(`the daily counts of ${date} give ${counted.get(key)?.n ?? 0} of its ${c} denials to ${who}, the chained rows ${rows.get(key)?.n ?? 0}`);
    }
  }
  return undefined;
}

async function gatherDenials(r: ReportReader, p: ReportPeriod, countMasked: boolean, countsTrusted = true) {
  await r.refreshDailyCounts();
  const u = (column: string) => unindexed(r, column);

  // Agents, tools and rule sources: one GROUP BY over the three (a few hundred combinations), folded here.
  const summary = planStatement(
    denialPlan(r, p, countsTrusted),
    'agent, tool, rule',
    `SELECT nullif(agent_name, '') AS agent, tool_name AS tool, rule_source AS rule, sum(n) AS n FROM permission_denial_daily_counts
     WHERE day >= ? AND day <= ? GROUP BY agent_name, tool_name, rule_source`,
    // +column: group with a sorter over the part's rows, not by walking a whole index in column order.
    (where) => `SELECT agent_name AS agent, tool_name AS tool, rule_source AS rule, count(*) AS n FROM permission_denials WHERE ${where}
                GROUP BY ${u('agent_name')}, ${u('tool_name')}, ${u('rule_source')}`,
  );
  const fold = new SummaryFold();
  for (const g of await r.all<DenialGroup>(summary.sql, summary.params)) fold.add(g);

  // The chart, in the explorer's bucket widths, except that a report reads by day: sub-day buckets (which all divide
  // a day, counted from the epoch) become whole UTC days once the period spans two days or more.
  const width = chooseBucketSeconds(Math.max(p.to - p.from, 60));
  const byDay = width < DAY && p.to - p.from >= 2 * DAY;
  const bucketSeconds = byDay ? DAY : width;
  const origin = byDay ? 0 : bucketOrigin(width);
  // Counted in days (every bucket of a day or more is whole days), or in the sub-day buckets themselves.
  const unit = Math.min(bucketSeconds, DAY);
  const first = Math.floor((p.from - origin) / bucketSeconds);
  const buckets: { start: number; total: number; counts: Record<string, number> }[] = [];
  for (let i = first; origin + i * bucketSeconds < p.to; i++) buckets.push({ start: origin + i * bucketSeconds, total: 0, counts: {} });
  const chart = planStatement(
    denialPlan(r, p, countsTrusted && unit === DAY),
    'u, rule',
    'SELECT day AS u, rule_source AS rule, sum(n) AS n FROM permission_denial_daily_counts WHERE day >= ? AND day <= ? GROUP BY day, rule_source',
    (where) => `SELECT floor(timestamp / ?) AS u, rule_source AS rule, count(*) AS n FROM permission_denials WHERE ${where} GROUP BY 1, ${u('rule_source')}`,
    [unit],
  );
  for (const g of await r.all<{ u: number; rule: string; n: number }>(chart.sql, chart.params)) {
    const bucket = buckets[Math.floor((g.u * unit - origin) / bucketSeconds) - first];
    if (!bucket) continue;
    const f = ruleSourceFamily(g.rule);
    bucket.total += g.n;
    bucket.counts[f] = (bucket.counts[f] ?? 0) + g.n;
  }

  const masked = countMasked
    ? await countOf(r, 'permission_denials WHERE timestamp >= ? AND timestamp < ? AND masked_paths IS NOT NULL', [p.from, p.to])
    : undefined;
  const { total, families, topAgents, topTools, topRuleSources } = fold.summary(TOP);
  return {
    total,
    families,
    topAgents,
    topTools,
    topRuleSources,
    /** distinct agents, tools and rule sources denied in the period */
    distinct: fold.distinct(),
    chart: { bucketSeconds, families: families.map((f) => f.value), buckets },
    /** rows whose arguments had values masked (only counted when a control asks for masking evidence) */
    masked,
  };
}

/**
 * The newest `cap` denials of the period, newest first: a reader of the report looks for what happened last, and the
 * rest are one export away (the appendix says how many it left out and how to get them).
 */
async function gatherAppendix(r: ReportReader, p: ReportPeriod, cap: number, total: number) {
  const rows = (
    await r.all<Omit<AppendixRow, 'http'> & { method: string | null; path: string | null }>(
      `SELECT id, timestamp AS at, agent_name AS agent, tool_name AS tool, http_method AS method, http_path AS path, rule_source AS "ruleSource",
              user_role AS role, principal, reason
       FROM permission_denials WHERE timestamp >= ? AND timestamp < ? ORDER BY timestamp DESC, id DESC LIMIT ?`,
      [p.from, p.to, cap],
    )
  ).map(({ method, path, ...row }) => ({ ...row, http: method ? `${method} ${path ?? ''}`.trim() : null }));
  return { rows, total, cap, omitted: Math.max(0, total - rows.length) };
}

// ---------------------------------------------------------------------------------------------------------------
// Repeats of a call already rejected or waiting
// ---------------------------------------------------------------------------------------------------------------

/** The most distinct repeated calls looked at (each is one small lookup of its requests). */
const HITL_GROUPS = 500;
const HITL = `(rule_source = 'hitl' OR rule_source LIKE 'hitl:%') AND timestamp >= ? AND timestamp < ?`;
/**
 * The denial that records a request's rejection or expiry (lib/audit/approval-events.ts approvalDenial) has no trace
 * (no rule was evaluated: a person decided) and carries the decision id of the call that asked, when it had one; the
 * engine's denials always keep their trace.
 */
const DECISION_RECORD = `(trace_json IS NULL OR coalesce(decision_id IN (SELECT decision_id FROM approvals WHERE decision_id IS NOT NULL), false))`;

/** The approval a hitl denial of a repeated call names in its reason ("Rejected by an operator (approval apr_…): …"). */
const APPROVAL_NAMED = /\(approval (apr_[A-Za-z0-9_-]{8,64})\)/;

/**
 * The hitl denials of the period, told apart: the row that records a person's rejection (or an expiry) of a request,
 * and the denials of the same call made again after it was rejected or expired. "hitl 49" beside "2 rejected" is then
 * "2 decisions, 47 repeats".
 *
 * A repeat is recognised by the approval it refers to: the engine's denial of a rejected or expired call names that
 * request in its reason (lib/permissions/sources/hitl.ts), never guessed from the call's arguments (stored masked).
 * Grouped in SQL by agent, tool and reason, so a runaway agent's million retries are one group; each group's request
 * is one lookup by id. Without hitl denials, nothing is read.
 */
async function gatherHitl(r: ReportReader, p: ReportPeriod, total: number) {
  const decisions = total === 0 ? 0 : await countOf(r, `permission_denials WHERE ${HITL} AND ${DECISION_RECORD}`, [p.from, p.to]);
  const groups = total === 0 ? [] : await r.all<{ agent: string | null; tool: string; reason: string; n: number; first: number; last: number }>(
    `SELECT agent_name AS agent, tool_name AS tool, reason, count(*) AS n, min(timestamp) AS "first", max(timestamp) AS "last"
     FROM permission_denials WHERE ${HITL} AND NOT ${DECISION_RECORD}
     GROUP BY agent_name, tool_name, reason ORDER BY count(*) DESC, min(timestamp) LIMIT ?`,
    [p.from, p.to, HITL_GROUPS],
  );
  const byApproval = new Map<string, { agent: string; tool: string; approval: string; status: string; repeats: number; first: number; last: number }>();
  for (const g of groups) {
    const id = APPROVAL_NAMED.exec(g.reason)?.[1];
    if (g.agent === null || id === undefined) continue;
    const request = await r.get<{ id: string; status: string; agent: string; tool: string }>(
      `SELECT id, CASE WHEN status = 'pending' AND expires_at <= ? THEN 'expired' ELSE status END AS status, agent_name AS agent, tool_name AS tool FROM approvals WHERE id = ?`,
      [g.last, id],
    );
    // Only a request of this very call, decided against it, makes a repeat.
    if (!request || request.agent !== g.agent || request.tool !== g.tool || !['rejected', 'expired'].includes(request.status)) continue;
    const seen = byApproval.get(id);
    if (seen) {
      seen.repeats += Number(g.n);
      seen.first = Math.min(seen.first, g.first);
      seen.last = Math.max(seen.last, g.last);
    } else byApproval.set(id, { agent: g.agent, tool: g.tool, approval: id, status: request.status, repeats: Number(g.n), first: g.first, last: g.last });
  }
  const repeatedCalls = [...byApproval.values()].sort((a, b) => b.repeats - a.repeats || a.first - b.first);
  const repeats = repeatedCalls.reduce((n, c) => n + c.repeats, 0);
  return {
    total,
    /** denials that record the decision on a request itself (the rejection or expiry) */
    decisions,
    /** denials of a call already rejected, expired or waiting */
    repeats,
    /** the other hitl denials (an HTTP request that a gate would ask for, a call whose request was never made) */
    other: Math.max(0, total - decisions - repeats),
    /** the most repeated calls */
    repeatedCalls: repeatedCalls.slice(0, TOP),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Coverage: the days of the period the trail can speak for
// ---------------------------------------------------------------------------------------------------------------

const ymd = (day: number) => new Date(day * DAY * 1000).toISOString().slice(0, 10);

/**
 * How much of the period the audit trail can speak for: a period before the trail's first row holds nothing that could
 * demonstrate a control, and a day of rows that no signed checkpoint covers is not yet provable. Stated on the cover.
 *
 * What the trail holds for each UTC day of the period (up to the generation time): whether it had begun, whether a
 * person read or exported it (the daily review of PCI DSS 10.4.1), and whether a signed checkpoint covers its rows.
 * Each figure is one grouped statement over the period's rows (at most one row per day back).
 */
async function gatherCoverage(r: ReportReader, p: ReportPeriod, now: number) {
  const firsts = await r.get<{ d: number | null; s: number | null }>('SELECT (SELECT min(timestamp) FROM permission_denials) AS d, (SELECT min(timestamp) FROM security_events) AS s');
  const known = [firsts?.d, firsts?.s].filter((t): t is number => t !== null && t !== undefined).map(Number);
  const firstRowAt = known.length ? Math.min(...known) : null;
  const archived = (await countOf(r, 'audit_archives')) > 0;

  const end = Math.min(p.to, now);
  const days: number[] = [];
  for (let d = Math.floor(p.from / DAY); d * DAY < end; d++) days.push(d);
  // Without an archive, nothing was recorded before the first live row; with one, the trail began earlier.
  const before = (d: number) => !archived && (firstRowAt === null || (d + 1) * DAY <= firstRowAt);

  const reviewed = new Set(
    (
      await r.all<{ d: number }>(
        `SELECT floor(timestamp / ${DAY}) AS d FROM security_events WHERE type IN ('audit.queried', 'audit.exported') AND timestamp >= ? AND timestamp < ? AND actor NOT LIKE 'agent:%' GROUP BY 1`,
        [p.from, p.to],
      )
    ).map((row) => Number(row.d)),
  );
  const checkpoints = new Map(
    (await r.all<{ chain: string; size: number | null }>('SELECT chain, max(size) AS size FROM audit_checkpoints GROUP BY chain')).map((c) => [c.chain, c.size === null ? null : Number(c.size)]),
  );
  // Which days hold rows: one probe of the timestamp index per day and chain (a GROUP BY over the period would read
  // every row: 0.6 s over a million). Which of them are unsigned: only the rows after the newest checkpoint, a short
  // range of ids, are grouped by day.
  // The one statement of what the signed checkpoints cover, that the cover, the integrity box, the controls and OSCAL
  // all read: a day is unsigned when it holds rows and none of a chain's rows of it is under a checkpoint; a day whose
  // newest rows follow the newest checkpoint (the last seconds before the report, as a server signs every 10 s) is
  // covered, its newest rows waiting for the next checkpoint.
  const withRows = new Set<number>();
  const unsigned = new Set<number>();
  const waiting = new Set<number>();
  for (const chain of ['permission_denials', 'security_events'] as const) {
    const chainDays = new Set<number>();
    for (const day of days) {
      const from = Math.max(p.from, day * DAY);
      const to = Math.min(p.to, (day + 1) * DAY);
      if (await r.get(`SELECT 1 AS one FROM ${chain} WHERE timestamp >= ? AND timestamp < ? LIMIT 1`, [from, to])) chainDays.add(day);
    }
    for (const day of chainDays) withRows.add(day);
    const size = checkpoints.get(chain) ?? null;
    if (size === null) {
      for (const day of chainDays) unsigned.add(day);
      continue;
    }
    const t = unindexed(r, 'timestamp');
    for (const row of await r.all<{ d: number }>(`SELECT floor(timestamp / ${DAY}) AS d FROM ${chain} WHERE id > ? AND ${t} >= ? AND ${t} < ? GROUP BY 1`, [size, p.from, p.to])) {
      const day = Number(row.d);
      const from = Math.max(p.from, day * DAY);
      const to = Math.min(p.to, (day + 1) * DAY);
      // Some of the day's rows are under the checkpoint: only its newest wait for the next one.
      // (through the timestamp index: the day's first row found is almost always an older, signed one)
      const signed = await r.get(`SELECT 1 AS one FROM ${chain} WHERE timestamp >= ? AND timestamp < ? AND id <= ? LIMIT 1`, [from, to, size]);
      (signed ? waiting : unsigned).add(day);
    }
  }
  for (const day of unsigned) waiting.delete(day);
  const sorted = (set: Set<number>) => [...set].sort((a, b) => a - b).map(ymd);
  return {
    /** the oldest live row of either chain (seconds), null when the trail holds none */
    firstRowAt,
    /** rows were archived: the trail began before firstRowAt, at a time the live tables no longer show */
    archived,
    /** the UTC days of the period that had begun when the report was generated (YYYY-MM-DD), oldest first */
    days: days.map(ymd),
    /** of those, the days wholly before the trail's first row (nothing could be recorded on them) */
    daysBeforeTrail: days.filter(before).map(ymd),
    /** the days on which a person (not an agent) read or exported the trail (audit.queried, audit.exported) */
    reviewedDays: sorted(reviewed),
    /** the days that hold rows */
    daysWithRows: sorted(withRows),
    /** days holding rows of which no signed checkpoint covers any of a chain's (a gap in the checkpoints) */
    unsignedDays: sorted(unsigned),
    /** days whose rows are under a signed checkpoint but for the newest, which wait for the next one (not a gap) */
    waitingDays: sorted(waiting),
    /** signed checkpoints of each chain, the newest's size (rows covered) */
    signedUpTo: ['permission_denials', 'security_events'].map((chain) => ({ chain, size: checkpoints.get(chain) ?? null })),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Security events
// ---------------------------------------------------------------------------------------------------------------

/** The count of one type and outcome of security event. */
type TypeCount = { type: string; outcome: string; count: number };

/** The events of the counts `pick` picks, added up. */
const sumOf = (events: readonly TypeCount[], pick: (e: TypeCount) => boolean) => events.filter(pick).reduce((n, e) => n + e.count, 0);

/**
 * Counts of the period's security events by type and outcome. The types are few (a few dozen) while allowed decisions
 * may be millions of rows, so each type is counted on the (type, timestamp) index: the distinct types by skipping
 * through the index, then one range count per type (decisions are always `succeeded`, the others group by outcome).
 */
async function eventCounts(r: ReportReader, p: ReportPeriod): Promise<TypeCount[]> {
  const next = async (after: string) => (await r.get<{ type: string | null }>('SELECT min(type) AS type FROM security_events WHERE type > ?', [after]))?.type ?? null;
  const out: TypeCount[] = [];
  let type = await next('');
  while (type !== null) {
    if (type.startsWith('decision.')) {
      const n = await countOf(r, 'security_events WHERE type = ? AND timestamp >= ? AND timestamp < ?', [type, p.from, p.to]);
      if (n > 0) out.push({ type, outcome: 'succeeded', count: n });
    } else {
      for (const row of await r.all<{ outcome: string; n: number }>(
        'SELECT outcome, count(*) AS n FROM security_events WHERE type = ? AND timestamp >= ? AND timestamp < ? GROUP BY outcome',
        [type, p.from, p.to],
      )) {
        out.push({ type, outcome: row.outcome, count: row.n });
      }
    }
    type = await next(type);
  }
  return out.sort((a, b) => b.count - a.count || a.type.localeCompare(b.type) || a.outcome.localeCompare(b.outcome));
}

/** A security event as read for a list, before its detail becomes a note. */
type EventRow = { at: number; type: string; actor: string; role: string | null; outcome: string; target: string | null; detail: string | null };

/** An event's detail_json as an object ({} when there is none, or it is not JSON). */
function detailOf(e: { detail: string | null }): Record<string, unknown> {
  try {
    return e.detail ? (JSON.parse(e.detail) as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Seconds of a filter as a reader reads them: instants in ISO 8601, `since` as the span back (never epoch seconds). */
export function filterValue(key: string, value: unknown): string {
  if (typeof value === 'number' && Number.isFinite(value)) {
    if (key === 'since') return value % 86400 === 0 ? `P${value / 86400}D` : value % 3600 === 0 ? `PT${value / 3600}H` : `PT${value}S`;
    if (value >= 1e8) return isoSeconds(value);
  }
  if (typeof value === 'string' && /^\d{9,}(\.\d+)?$/.test(value) && /^(from|to|until|before|after)$/.test(key)) return isoSeconds(Number(value));
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The first 12 digits of a SHA-256 (an MCP tool's definition), as the console shows it. */
const short = (v: unknown): string => (typeof v === 'string' ? `${v.slice(0, 12)}…` : '–');
/** How many lines of a definition changed (an MCP pin's event keeps them). */
const changes = (v: unknown): string => (Array.isArray(v) && v.length > 0 ? `; ${v.length} changed line${v.length === 1 ? '' : 's'}` : '');

function noteOf(e: EventRow): string {
  const d = detailOf(e);
  const s = (v: unknown) => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));
  switch (e.type) {
    case 'flag.refused':
      return `asked ${d.requested === null ? 'reset' : d.requested ? 'on' : 'off'}: ${s(d.reason)}. Refused: ${s(d.refusal)}`;
    case 'config.refused':
      return `refused: ${s(d.error)}`;
    case 'approval.refused':
      // the refusal in the words the person was answered with (separation of duties, already decided, expired)
      return s(d.message) || s(d.refusal);
    case 'config.loaded':
      return d.revision ? `revision ${s(d.revision)}` : '';
    case 'config.drift':
      return Array.isArray(d.profiles)
        ? `profiles ${d.profiles.join(', ')} differ from the active revision ${s(d.active_revision)}`
        : `differs from the active revision ${s(d.active_revision)}; not loaded`;
    case 'policy.unverified':
      return `not loaded: ${s(d.problem)}`;
    case 'mcp.tool.changed':
      return `definition ${short(d.sha256)} differs from the one reviewed (${short(d.pinned_sha256)}): not listed, calls refused until accepted${changes(d.diff)}`;
    case 'mcp.tool.held':
      return `new tool, definition ${short(d.sha256)}: held for review (profile ${Array.isArray(d.profiles) ? d.profiles.join(', ') : ''})`;
    case 'mcp.tool.accepted':
      return `definition ${short(d.sha256)} accepted${d.previous_sha256 ? ` in place of ${short(d.previous_sha256)}` : ''} (${s(d.accepted_via)}): ${s(d.reason)}`;
    case 'mcp.tool.pinned':
      return `definition ${short(d.sha256)} pinned at first sight`;
    case 'profile.switched':
      return `from ${(Array.isArray(d.from) && d.from.length ? d.from.join(', ') : '(none)')} to ${(Array.isArray(d.to) && d.to.length ? d.to.join(', ') : '(none)')}`;
    case 'audit.exported': {
      const filter = d.filter && typeof d.filter === 'object' ? Object.entries(d.filter as Record<string, unknown>).map(([k, v]) => `${k}=${filterValue(k, v)}`).join(' ') : '';
      return `${s(d.format) || 'export'}${filter ? `, filter ${filter}` : ', everything'}`;
    }
    default:
      return s(d.reason ?? d.refusal ?? d.error ?? '');
  }
}

function eventLine(e: EventRow) {
  const { detail, ...line } = e;
  return {
    ...line,
    target: e.type.startsWith('config.') ? displayFile(e.target) : e.target,
    /** a short, path-free summary of the detail */
    note: withoutPaths(noteOf(e)),
  };
}

/** The first `cap` security events of `where` (oldest first) and how many there are (`total`, where it is known). */
async function eventList(r: ReportReader, where: string, params: SqlParam[], cap: number, total?: number): Promise<Capped<ReturnType<typeof eventLine>>> {
  const columns = 'timestamp AS at, type, actor, actor_role AS role, outcome, target, detail_json AS detail';
  const list = await cappedList<EventRow>(r, columns, `security_events WHERE ${where}`, 'timestamp, id', params, cap, total);
  return { rows: list.rows.map(eventLine), total: list.total };
}

async function gatherSecurity(r: ReportReader, p: ReportPeriod, cap: number, events: TypeCount[]) {
  const sum = (pick: (e: TypeCount) => boolean) => sumOf(events, pick);
  const refusal = (e: TypeCount) => e.outcome === 'refused' && !e.type.startsWith('decision.');
  const refusedTypes = [...new Set(events.filter(refusal).map((e) => e.type))];
  const refused = refusedTypes.length
    ? await eventList(r, `type IN (${refusedTypes.map(() => '?').join(', ')}) AND timestamp >= ? AND timestamp < ? AND outcome = 'refused'`, [...refusedTypes, p.from, p.to], cap, sum(refusal))
    : { rows: [], total: 0 };
  const exports = await eventList(r, `type = 'audit.exported' AND timestamp >= ? AND timestamp < ?`, [p.from, p.to], cap, sum((e) => e.type === 'audit.exported'));
  // The most tried targets: every target tried as often as the tenth, ranked here (ties by name, as every list of
  // the report, whatever the database's collation).
  const failed = `SELECT coalesce(target, actor) AS target, count(*) AS n FROM security_events WHERE type = 'auth.login.failed' AND timestamp >= ? AND timestamp < ? GROUP BY 1`;
  const tenth = (await r.get<{ n: number }>(`SELECT n FROM (${failed}) AS f ORDER BY n DESC LIMIT 1 OFFSET ${TOP - 1}`, [p.from, p.to]))?.n ?? 1;
  const tried = await r.all<{ target: string | null; n: number }>(`${failed} HAVING count(*) >= ?`, [p.from, p.to, tenth]);
  const failedTargets = topOf(new Map(tried.map((t) => [t.target ?? '(unknown)', t.n])), TOP);
  const signedIn = await r.get<{ n: number }>(`SELECT count(DISTINCT actor) AS n FROM security_events WHERE type = 'auth.login.succeeded' AND timestamp >= ? AND timestamp < ?`, [p.from, p.to]);
  return {
    total: sum(() => true),
    byType: events.filter((e) => !e.type.startsWith('decision.')),
    signIns: sum((e) => e.type === 'auth.login.succeeded'),
    signInUsers: signedIn?.n ?? 0,
    failedSignIns: sum((e) => e.type === 'auth.login.failed'),
    failedSignInTargets: failedTargets,
    refused,
    exports,
    reads: sum((e) => e.type === 'audit.queried'),
    reportsGenerated: sum((e) => e.type === 'audit.report_generated'),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Access
// ---------------------------------------------------------------------------------------------------------------

const ROLE_ORDER = ['admin', 'operator', 'auditor', 'viewer'];

/**
 * Who held which role in the period: every account made before its end, its role then (today's role with the role
 * changes after the period undone, newest first) and the changes within it (user.created and user.role_changed
 * events, which the sign-in through SSO records too); the break-glass sign-ins (auth.break_glass); and the tokens
 * still not revoked that are older than the profile's longest life or past their expiry, as of the report's time.
 */
async function gatherAccess(r: ReportReader, p: ReportPeriod, now: number, cap: number, policy: { maxDays?: number; inactiveDays?: number } | undefined) {
  const users = await r.all<{ username: string; role: string; disabled: unknown; createdAt: number }>(
    'SELECT username, role, disabled, created_at AS "createdAt" FROM users WHERE created_at < ? ORDER BY username',
    [p.to],
  );
  const events = await r.all<{ at: number; type: string; actor: string; target: string | null; detail: string | null }>(
    `SELECT timestamp AS at, type, actor, target, detail_json AS detail FROM security_events
     WHERE type IN ('user.created', 'user.role_changed') AND timestamp >= ? ORDER BY timestamp DESC, id DESC LIMIT 20000`,
    [p.from],
  );
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  // A person and the roles they held in the period: the role at its end, and each change within it.
  const roleHolders = users.map((u) => {
    let role = u.role;
    const changes: { at: number; from: string | null; to: string; by: string }[] = [];
    let via = 'local';
    for (const e of events) {
      if (e.target !== u.username) continue;
      const d = detailOf(e);
      if (e.type === 'user.created' && str(d.via)) via = str(d.via)!;
      if (e.at >= p.to) {
        // after the period: undo it to find the role the period ended with
        if (e.type === 'user.role_changed' && str(d.from)) role = str(d.from)!;
        continue;
      }
      if (e.type === 'user.role_changed') changes.push({ at: e.at, from: str(d.from), to: str(d.to) ?? role, by: e.actor });
      else changes.push({ at: e.at, from: null, to: str(d.role) ?? role, by: e.actor });
    }
    changes.reverse();
    const held = new Set([role, ...changes.flatMap((c) => (c.from ? [c.from, c.to] : [c.to]))]);
    return {
      username: u.username,
      /** the role at the period's end (today's role, with the changes after the period undone) */
      role,
      /** every role held at some moment of the period, highest first */
      rolesHeld: [...held].sort((a, b) => ROLE_ORDER.indexOf(a) - ROLE_ORDER.indexOf(b)),
      /** the changes within the period, oldest first */
      changes,
      /** how the account came: `sso` for one made at a single sign-on (JIT), else a local account */
      via,
      disabled: u.disabled === true || u.disabled === 1,
    };
  });

  const maxAge = policy?.maxDays === undefined ? null : now - policy.maxDays * DAY;
  const staleWhere = `t.revoked_at IS NULL AND ((t.expires_at IS NOT NULL AND t.expires_at <= ?)${maxAge === null ? '' : ' OR t.created_at < ?'})`;
  const staleParams: SqlParam[] = maxAge === null ? [now] : [now, maxAge];
  const stale = await cappedList<{ id: number; name: string; agent: string | null; username: string | null; createdAt: number; expiresAt: number | null; disabledReason: string | null }>(
    r,
    't.id, t.name, t.agent_name AS agent, u.username, t.created_at AS "createdAt", t.expires_at AS "expiresAt", t.disabled_reason AS "disabledReason"',
    `api_tokens t LEFT JOIN users u ON u.id = t.user_id WHERE ${staleWhere}`,
    't.created_at, t.id',
    staleParams,
    cap,
  );
  return {
    roleHolders,
    breakGlass: await eventList(r, `type = 'auth.break_glass' AND timestamp >= ? AND timestamp < ?`, [p.from, p.to], cap),
    /** the tokens not revoked whose life ran past what the profile allows (PCI DSS 8.3.9, 8.6.3), or past their expiry */
    staleTokens: {
      total: stale.total,
      rows: stale.rows.map((t) => ({
        id: Number(t.id),
        name: t.name,
        owner: t.agent ? `agent:${t.agent}` : (t.username ?? '(unknown user)'),
        createdAt: t.createdAt,
        expiresAt: t.expiresAt,
        ageDays: Math.floor((now - t.createdAt) / DAY),
        reason: t.expiresAt !== null && t.expiresAt <= now ? ('past_expiry' as const) : ('older_than_max' as const),
        state: t.disabledReason === 'inactive' ? 'disabled (unused)' : t.expiresAt !== null && t.expiresAt <= now ? 'expired, not revoked' : 'active',
      })),
    },
    /** the lifecycle the active profiles ask of tokens (none: no profile sets one) */
    tokenPolicy: policy ? { maxDays: policy.maxDays, inactiveDays: policy.inactiveDays } : null,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Human oversight
// ---------------------------------------------------------------------------------------------------------------

/** The column of the oversight figures a request's state counts in (any other state is still pending). */
const STATE_COLUMN: Record<string, 'approved' | 'rejected' | 'expired'> = { approved: 'approved', consumed: 'approved', rejected: 'rejected', expired: 'expired' };

async function gatherOversight(r: ReportReader, p: ReportPeriod, now: number, cap: number, events: TypeCount[]) {
  // A request past its expiry that the sweeper has not marked yet reads as expired (as the approval store reads it).
  const byGate = await r.all<{ gate: string; state: string; n: number }>(
    `SELECT gate, CASE WHEN status = 'pending' AND expires_at <= ? THEN 'expired' ELSE status END AS state, count(*) AS n
     FROM approvals WHERE requested_at >= ? AND requested_at < ? GROUP BY 1, 2`,
    [now, p.from, p.to],
  );
  const gates = new Map<string, { gate: string; requested: number; approved: number; rejected: number; expired: number; pending: number }>();
  let ran = 0;
  for (const row of byGate) {
    const g = gates.get(row.gate) ?? { gate: row.gate, requested: 0, approved: 0, rejected: 0, expired: 0, pending: 0 };
    g.requested += row.n;
    g[STATE_COLUMN[row.state] ?? 'pending'] += row.n;
    if (row.state === 'consumed') ran += row.n;
    gates.set(row.gate, g);
  }
  const list = [...gates.values()].sort((a, b) => b.requested - a.requested || a.gate.localeCompare(b.gate));
  const total = (k: 'requested' | 'approved' | 'rejected' | 'expired' | 'pending') => list.reduce((n, g) => n + g[k], 0);

  // Median time from request to a person's decision, by an ORDER BY ... OFFSET on the decided requests.
  const decided = `approvals WHERE requested_at >= ? AND requested_at < ? AND decided_at IS NOT NULL AND status IN ('approved', 'consumed', 'rejected')`;
  const n = await countOf(r, decided, [p.from, p.to]);
  let median: number | null = null;
  if (n > 0) {
    const mid = (await r.all<{ d: number }>(`SELECT decided_at - requested_at AS d FROM ${decided} ORDER BY d LIMIT 2 OFFSET ?`, [p.from, p.to, Math.floor((n - 1) / 2)])).map((row) => row.d);
    median = n % 2 === 1 ? (mid[0] ?? null) : ((mid[0] ?? 0) + (mid[1] ?? mid[0] ?? 0)) / 2;
  }

  // Each person's approvals (their votes) and rejections (the request's decision), by name.
  const approvers = new Map<string, { name: string; role: string | null; approvals: number; rejections: number }>();
  const tally = async (kind: 'approvals' | 'rejections', sql: string) => {
    for (const row of await r.all<{ name: string; role: string | null; n: number }>(sql, [p.from, p.to])) {
      const a = approvers.get(row.name) ?? { name: row.name, role: row.role, approvals: 0, rejections: 0 };
      a[kind] += row.n;
      approvers.set(row.name, a);
    }
  };
  await tally(
    'approvals',
    `SELECT v.approver AS name, v.approver_role AS role, count(*) AS n FROM approval_votes v JOIN approvals a ON a.id = v.approval_id
     WHERE a.requested_at >= ? AND a.requested_at < ? GROUP BY 1, 2`,
  );
  await tally(
    'rejections',
    `SELECT a.decided_by AS name, u.role AS role, count(*) AS n FROM approvals a LEFT JOIN users u ON u.username = a.decided_by
     WHERE a.status = 'rejected' AND a.decided_by IS NOT NULL AND a.requested_at >= ? AND a.requested_at < ? GROUP BY 1, 2`,
  );

  // The approvers in the order they voted (string_agg with ORDER BY: SQLite 3.44 and PostgreSQL alike).
  const twoPerson = await cappedList<TwoPersonDecision>(
    r,
    `a.id, a.gate, a.agent_name AS agent, a.tool_name AS tool, a.risk, a.status, a.requested_by AS "requestedBy", a.requested_at AS "requestedAt",
     a.decided_at AS "decidedAt", a.decided_by AS "decidedBy", a.approvals_required AS required,
     coalesce((SELECT string_agg(v.approver || ' (' || v.approver_role || ')', ', ' ORDER BY v.at, v.approver) FROM approval_votes v WHERE v.approval_id = a.id), '') AS approvers`,
    `approvals a WHERE a.approvals_required >= 2 AND a.status IN ('approved', 'consumed', 'rejected') AND a.requested_at >= ? AND a.requested_at < ?`,
    'a.requested_at, a.id',
    [p.from, p.to],
    cap,
  );

  return {
    requested: total('requested'),
    approved: total('approved'),
    rejected: total('rejected'),
    expired: total('expired'),
    pending: total('pending'),
    /** approved requests whose call has run (status consumed): included in approved */
    ran,
    decidedByPeople: n,
    medianSecondsToDecision: median,
    byGate: list,
    approvers: [...approvers.values()].sort((a, b) => b.approvals + b.rejections - (a.approvals + a.rejections) || a.name.localeCompare(b.name)),
    twoPerson,
    /** approval attempts refused and recorded (a requester deciding their own call, a second vote by one person, a decision on a request already decided or expired) */
    refusedAttempts: sumOf(events, (e) => e.type.startsWith('approval.') && e.outcome === 'refused'),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Policy and flag changes
// ---------------------------------------------------------------------------------------------------------------

/** A flag value as stored: 0/1 on SQLite, a boolean on PostgreSQL. */
const flagValue = (v: number | boolean | null): boolean | null => (v === null ? null : Boolean(v));

async function gatherChanges(r: ReportReader, p: ReportPeriod, cap: number) {
  const flagCounts = await r.get<{ n: number; refused: number | null }>(
    `SELECT count(*) AS n, sum(CASE WHEN action = 'refused' THEN 1 ELSE 0 END) AS refused FROM flag_changes WHERE changed_at >= ? AND changed_at < ?`,
    [p.from, p.to],
  );
  const flagRows = (
    await r.all<{ at: number; name: string; action: string; oldValue: number | boolean | null; newValue: number | boolean | null; by: string; reason: string }>(
      `SELECT changed_at AS at, name, action, old_value AS "oldValue", new_value AS "newValue", changed_by AS "by", reason
       FROM flag_changes WHERE changed_at >= ? AND changed_at < ? ORDER BY changed_at, id LIMIT ?`,
      [p.from, p.to, cap],
    )
  ).map((row) => ({ ...row, oldValue: flagValue(row.oldValue), newValue: flagValue(row.newValue) }));
  // The MCP gateway's tool definitions (issue 42): every change held and every acceptance, beside the files' events.
  const configWhere = `type IN ('config.loaded', 'config.refused', 'config.drift', 'policy.unverified', 'profile.switched', 'mcp.tool.changed', 'mcp.tool.held', 'mcp.tool.accepted') AND timestamp >= ? AND timestamp < ?`;
  const configEvents = await eventList(r, configWhere, [p.from, p.to], cap);
  const revisions = await cappedList<{ revision: string; at: number }>(r, 'revision, first_seen_at AS at', 'policy_revisions WHERE first_seen_at >= ? AND first_seen_at < ?', 'first_seen_at, revision', [p.from, p.to], cap);
  // One revision's content at a time: the texts of the configuration files can be large.
  const revisionLines = await inTurn(revisions.rows, async (row) => {
    const content = (await r.get<{ content: string }>('SELECT content_json AS content FROM policy_revisions WHERE revision = ?', [row.revision]))?.content ?? '';
    // The SHA-256 of the revision's canonical content: the revision id is its first 128 bits.
    return { revision: row.revision, firstSeenAt: row.at, sha256: createHash('sha256').update(content).digest('hex') };
  });
  const atStart = (await r.get<{ revision: string }>('SELECT revision FROM policy_revisions WHERE first_seen_at < ? ORDER BY first_seen_at DESC LIMIT 1', [p.from]))?.revision ?? null;
  // Change control (issue 28): every activation of the period, with its proposal, approvers and impact.
  const activations = await cappedList<{ seq: number; revision: string; kind: string; at: number; by: string; proposal: string | null; proposalKind: string | null; message: string | null; proposedBy: string | null; impact: string | null }>(
    r,
    'a.seq, a.revision, a.kind, a.activated_at AS at, a.activated_by AS "by", a.proposal_id AS proposal, p.kind AS "proposalKind", p.message, p.proposed_by AS "proposedBy", p.impact_json AS impact',
    'policy_activations a LEFT JOIN policy_proposals p ON p.id = a.proposal_id WHERE a.activated_at >= ? AND a.activated_at < ?',
    'a.seq',
    [p.from, p.to],
    cap,
  );
  // One activation of the rules (change control): the seed, an approved change or rollback, an emergency rollback.
  const ruleChanges = await inTurn(activations.rows, async (a) => {
    const approvers = a.proposal
      ? (await r.all<{ voter: string }>(`SELECT voter FROM policy_votes WHERE proposal_id = ? AND vote = 'approve' ORDER BY id`, [a.proposal])).map((v) => v.voter)
      : [];
    const impact = a.impact ? (JSON.parse(a.impact) as ImpactSummary) : null;
    return {
      seq: Number(a.seq),
      revision: a.revision,
      at: a.at,
      kind: a.kind === 'seed' ? 'seed' : a.kind === 'emergency' ? 'emergency rollback' : a.proposalKind === 'rollback' ? 'rollback' : 'change',
      proposal: a.proposal,
      message: a.message,
      proposedBy: a.proposedBy,
      activatedBy: a.by,
      approvers,
      impact: impact && { replayed: impact.replayed, changed: impact.changed, uncertain: impact.uncertain, newlyDenied: impact.by_direction.newly_denied ?? 0, newlyAllowed: impact.by_direction.newly_allowed ?? 0, newlyAsking: impact.by_direction.newly_asking ?? 0 },
    };
  });
  return {
    /** the activations of the rules in the period (change control), each with its proposal, approvers and impact */
    ruleChanges: { rows: ruleChanges, total: activations.total },
    /** the flag history of the period, refused attempts included (`refused` of `total`) */
    flagChanges: { rows: flagRows, total: flagCounts?.n ?? 0, refused: flagCounts?.refused ?? 0 },
    configEvents,
    revisions: { rows: revisionLines, total: revisions.total },
    /** the revision in force when the period began */
    revisionAtStart: atStart,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Flags, retention
// ---------------------------------------------------------------------------------------------------------------

async function gatherFlags(r: ReportReader, p: ReportPeriod, flags: ReadonlyMap<string, ResolvedFlag>) {
  // The flag history keeps refused attempts beside the changes (action 'refused').
  const counts = await r.all<{ name: string; refused: number; n: number }>(
    `SELECT name, CASE WHEN action = 'refused' THEN 1 ELSE 0 END AS refused, count(*) AS n FROM flag_changes WHERE changed_at >= ? AND changed_at < ? GROUP BY 1, 2`,
    [p.from, p.to],
  );
  const changes = new Map(counts.filter((c) => !c.refused).map((c) => [c.name, c.n]));
  const refused = new Map(counts.filter((c) => c.refused).map((c) => [c.name, c.n]));
  // A flag as it is in force now, with its changes and refused changes in the period.
  const state = (f: ResolvedFlag) => ({
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

async function archiveFigures(r: ReportReader): Promise<{ archives: number; archivedRows: number; oldestLiveRow: number | null }> {
  const a = await r.get<{ n: number; rows: number | null }>('SELECT count(*) AS n, sum(rows) AS rows FROM audit_archives');
  const oldest = await r.get<{ t: number | null }>('SELECT min(timestamp) AS t FROM permission_denials');
  return { archives: a?.n ?? 0, archivedRows: a?.rows ?? 0, oldestLiveRow: oldest?.t ?? null };
}
