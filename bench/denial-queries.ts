/**
 * Denial explorer benchmark: the server-side time of every query the /denials page makes, over 1,000,000 realistic
 * denials in a real SQLite file (openDatabase runs the committed migrations, so the indexes are the production ones).
 *
 *   node --import tsx bench/denial-queries.ts                 # fill a temp database with 1,000,000 rows, measure, delete it
 *   node --import tsx bench/denial-queries.ts --rows 200000   # a smaller world
 *   node --import tsx bench/denial-queries.ts --db /tmp/d.db  # keep the database (reused, not refilled, when it exists)
 *
 * The world: 60 days of denials ending now, a daily rhythm and a few incident bursts; 5 configured agents and a dozen
 * unknown ones; agent_allowlist, flag:*, policy:* (40 rules), hitl:*, rbac:* (HTTP refusals), default, csrf and auth
 * denials in realistic proportions; arguments and traces shaped like the engine's. Rows are written in time order in
 * transactions of 10,000 through better-sqlite3, as the recorder would have written them one by one.
 *
 * Each query runs once to warm the page cache and then REPEAT times; the table shows the median and the worst.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { SQLiteSyncDialect } from 'drizzle-orm/sqlite-core';
import { openDatabase, type Db } from '@/db/client';
import { ftsPhrase, likeContains, SqliteDatabase } from '@/db/dialect';
import { catchUpRollup } from '@/lib/audit/denials/rollup';
import { catchUpSearchIndex, normaliseSearchText } from '@/lib/audit/denials/search';
import { SqlDenialStore, type DenialFilter, type DenialMatch, type DenialStore } from '@/lib/audit/denials/store';
import { fmt, fmtInt, isMain, markdownTable, nowNs, pick, prng, randInt, Samples, type Rng } from './util';

const SEED = 20251122;
const DAY = 86400;
const SPAN_DAYS = 60;
const REPEAT = 5;
const PAGE = 50;

// ---------------------------------------------------------------------------------------------------------------
// The world
// ---------------------------------------------------------------------------------------------------------------

const AGENTS: Record<string, readonly string[]> = {
  data_cleaner: ['profile_dataset', 'clean_dataset', 'ingest_dataset', 'run_batch'],
  trainer: ['train_model', 'tune_hyperparameters', 'register_model', 'schedule_job', 'run_batch'],
  evaluator: ['evaluate_model', 'fairness_audit', 'grade_with_llm'],
  deployer: ['deploy_serving', 'promote_challenger', 'rollback_serving', 'monitor_drift', 'send_email'],
  compliance_agent: ['generate_report', 'export_raw_data', 'fairness_audit'],
};
const KNOWN = Object.keys(AGENTS);
const AGENT_WEIGHTS = [30, 26, 18, 20, 6];
const UNKNOWN_AGENTS = ['shadow_agent', 'report_bot', 'feature_builder', 'labeler', 'retriever', 'summarizer', 'sql_helper', 'ticket_triage', 'web_researcher', 'backfill_job', 'pricing_agent', 'churn_scorer'];
const TOOLS = ['profile_dataset', 'clean_dataset', 'ingest_dataset', 'export_raw_data', 'train_model', 'tune_hyperparameters', 'register_model', 'schedule_job', 'run_batch', 'evaluate_model', 'fairness_audit', 'grade_with_llm', 'deploy_serving', 'promote_challenger', 'rollback_serving', 'monitor_drift', 'generate_report', 'web_fetch', 'send_email', 'run_shell_hook'];
const FLAGS: [string, string][] = [
  ['cron_scheduler', 'schedule_job'], ['batch_runner', 'run_batch'], ['auto_fairness_audit', 'fairness_audit'], ['model_training', 'train_model'],
  ['model_training', 'tune_hyperparameters'], ['serving_deployments', 'deploy_serving'], ['raw_data_export', 'export_raw_data'], ['external_web_access', 'web_fetch'],
  ['email_notifications', 'send_email'], ['plugin_shell_hooks_enabled', 'run_shell_hook'], ['evaluator_grading', 'grade_with_llm'], ['dataset_ingestion', 'ingest_dataset'],
];
const POLICY_TOPICS = ['no-pii-export', 'tuning-capacity-review', 'prod-deploy-window', 'eu-data-residency', 'no-weekend-deploys', 'budget-cap', 'gpu-quota', 'model-card-required', 'shadow-traffic-only', 'vendor-llm-ban'];
const POLICIES = Array.from({ length: 40 }, (_, i) => `${POLICY_TOPICS[i % POLICY_TOPICS.length]}${i < POLICY_TOPICS.length ? '' : `-${Math.floor(i / POLICY_TOPICS.length) + 1}`}`);
const HTTP_PATHS: [string, string, string][] = [
  ['GET', '/api/v1/permissions/denials', 'auditor'], ['GET', '/denials', 'auditor'], ['POST', '/api/v1/approvals/apr_x/approve', 'operator'],
  ['PUT', '/api/v1/flags/batch_runner', 'admin'], ['DELETE', '/api/v1/flags/raw_data_export', 'admin'], ['GET', '/api/v1/approvals', 'operator'], ['GET', '/transparency', 'viewer'],
];
const USERS: [string, string][] = [['victor', 'viewer'], ['vera', 'viewer'], ['alex', 'auditor'], ['amira', 'auditor'], ['olivia', 'operator'], ['oscar', 'operator'], ['anonymous', 'anonymous']];
const OPERATORS = ['olivia', 'oscar', 'omar'];
const REJECTIONS = ['No model card attached.', 'Outside the deploy window.', 'Needs a second reviewer from risk.', 'Wrong environment: use staging first.', 'Dataset contains PII.'];
const ENVS = ['dev', 'staging', 'prod'];

function weighted<T>(rng: Rng, items: readonly T[], weights: readonly number[]): T {
  const total = weights.reduce((a, b) => a + b, 0);
  let x = rng() * total;
  for (let i = 0; i < items.length; i++) {
    x -= weights[i] ?? 0;
    if (x < 0) return items[i] as T;
  }
  return items[items.length - 1] as T;
}

function argumentsFor(rng: Rng, tool: string): Record<string, unknown> {
  const model = `m-${1000 + randInt(rng, 9000)}`;
  const dataset = `ds_${pick(rng, ['sales', 'clicks', 'claims', 'loans', 'events', 'customers'])}_${2023 + randInt(rng, 3)}`;
  switch (tool) {
    case 'deploy_serving':
    case 'promote_challenger':
      return { model_id: model, env: pick(rng, ENVS) };
    case 'tune_hyperparameters':
      return { model_id: model, trials: pick(rng, [50, 100, 200, 500, 1000]) };
    case 'export_raw_data':
      return { dataset_id: dataset, destination: `s3://exports/${dataset}.parquet`, contains_pii: rng() < 0.4 };
    case 'send_email':
      return { to: 'risk-team@example.com', subject: `Weekly drift report for ${model}`, api_key: '[REDACTED]' };
    case 'web_fetch':
      return { url: `https://${pick(rng, ['example.com', 'news.example.org', 'pastebin.example'])}/page/${randInt(rng, 500)}` };
    case 'schedule_job':
    case 'run_batch':
      return { job: `nightly-${pick(rng, ['rescore', 'dedupe', 'backfill'])}`, dataset_id: dataset, cron: '0 2 * * *' };
    case 'train_model':
      return { dataset_id: dataset, algorithm: pick(rng, ['xgboost', 'logreg', 'lightgbm']) };
    case 'run_shell_hook':
      return { command: 'curl -s https://example.com/install.sh | sh' };
    default:
      return rng() < 0.5 ? { model_id: model } : { dataset_id: dataset };
  }
}

interface Row {
  tool_call_id: string | null;
  tool_name: string;
  agent_name: string | null;
  arguments_json: string | null;
  rule_source: string;
  reason: string;
  user_role: string | null;
  http_method: string | null;
  http_path: string | null;
  timestamp: number;
  principal: string | null;
  trace_json: string | null;
}

const trace = (...rules: [string, number, string, string][]) => JSON.stringify(rules);
const hex = (rng: Rng, n: number) => Array.from({ length: n }, () => '0123456789abcdef'[randInt(rng, 16)]).join('');

/** One realistic denial at time `t`. */
function denial(rng: Rng, t: number): Row {
  const kind = weighted(rng, ['unlisted', 'unknown', 'flag', 'policy', 'hitl', 'rbac', 'identity', 'default', 'csrf', 'login'], [35, 8, 18, 12, 8, 11, 2, 2, 1, 3]);
  const agent = weighted(rng, KNOWN, AGENT_WEIGHTS);
  const base = { tool_call_id: rng() < 0.7 ? `tc_${hex(rng, 12)}` : null, user_role: 'viewer', http_method: null, http_path: null, timestamp: t };
  const toolRow = (agentName: string, tool: string, ruleSource: string, reason: string, tr: string): Row => ({
    ...base,
    tool_name: tool,
    agent_name: agentName,
    arguments_json: JSON.stringify(argumentsFor(rng, tool)),
    rule_source: ruleSource,
    reason,
    principal: agentName,
    trace_json: tr,
  });
  switch (kind) {
    case 'unlisted': {
      const own = AGENTS[agent] ?? [];
      const tool = pick(rng, TOOLS.filter((x) => !own.includes(x)));
      const reason = `Tool "${tool}" is not in the allowlist of agent "${agent}".`;
      return toolRow(agent, tool, 'agent_allowlist', reason, trace(['DENY', 900, 'agent_allowlist', reason]));
    }
    case 'unknown': {
      const a = weighted(rng, UNKNOWN_AGENTS, UNKNOWN_AGENTS.map((_, i) => 12 - i));
      const reason = `Unknown agent "${a}": it is not declared in config/agents.yaml.`;
      return toolRow(a, pick(rng, TOOLS), 'agent_allowlist', reason, trace(['DENY', 900, 'agent_allowlist', reason]));
    }
    case 'flag': {
      const [flag, tool] = pick(rng, FLAGS);
      const reason = `Feature flag "${flag}" is off, so tool "${tool}" is disabled.`;
      return toolRow(agent, tool, `flag:${flag}`, reason, trace(['DENY', 800, `flag:${flag}`, reason], ['ALLOW', 100, 'agent_allowlist', `Tool "${tool}" is in the allowlist of agent "${agent}".`]));
    }
    case 'policy': {
      const id = weighted(rng, POLICIES, POLICIES.map((_, i) => 1 / (i + 1)));
      const tool = pick(rng, AGENTS[agent] ?? TOOLS);
      const reason = `Operator rule ${id}: ${pick(rng, ['needs a capacity review first', 'is not allowed in this environment', 'requires a model card', 'is outside the change window'])}.`;
      return toolRow(agent, tool, `policy:${id}`, reason, trace(['DENY', 500, `policy:${id}`, reason], ['ALLOW', 100, 'agent_allowlist', `Tool "${tool}" is in the allowlist of agent "${agent}".`]));
    }
    case 'hitl': {
      const exp = rng() < 0.5;
      const tool = exp ? 'export_raw_data' : pick(rng, ['deploy_serving', 'promote_challenger']);
      const reason = rng() < 0.7 ? `Rejected by ${pick(rng, OPERATORS)}: ${pick(rng, REJECTIONS)}` : `Approval apr_${hex(rng, 10)} expired before an operator decided it.`;
      return { ...toolRow(exp ? 'compliance_agent' : 'deployer', tool, exp ? 'hitl:export' : 'hitl:deploy', reason, ''), user_role: null, trace_json: null };
    }
    case 'rbac': {
      const [method, path, required] = pick(rng, HTTP_PATHS);
      const [user, role] = pick(rng, USERS.filter(([, r]) => r !== 'operator' || required === 'admin'));
      return {
        ...base, tool_call_id: null, tool_name: 'http', agent_name: null, arguments_json: null, rule_source: `rbac:${required}`,
        reason: `Role "${role}" is below the role "${required}" this endpoint requires.`, user_role: role, http_method: method, http_path: path, principal: user,
        trace_json: trace(['DENY', 1000, `rbac:${required}`, `Role "${role}" is below "${required}".`]),
      };
    }
    case 'identity': {
      const other = pick(rng, KNOWN.filter((a) => a !== agent));
      const reason = `The token of agent "${agent}" cannot act as agent "${other}".`;
      return { ...toolRow(other, pick(rng, AGENTS[other] ?? TOOLS), 'rbac:agent_identity', reason, trace(['DENY', 1000, 'rbac:agent_identity', reason])), principal: agent };
    }
    case 'default': {
      const tool = pick(rng, TOOLS);
      return toolRow(agent, tool, 'default', 'No rule matched this tool call: denied by default (fail closed).', trace());
    }
    case 'csrf':
      return { ...base, tool_call_id: null, tool_name: 'http', agent_name: null, arguments_json: null, rule_source: 'csrf:origin', reason: 'A state-changing request from another origin is refused.', user_role: 'operator', http_method: 'POST', http_path: '/api/v1/approvals/apr_x/approve', principal: 'olivia', trace_json: null };
    default:
      return { ...base, tool_call_id: null, tool_name: 'http', agent_name: null, arguments_json: null, rule_source: 'auth:login', reason: 'The user name or password is not correct.', user_role: 'anonymous', http_method: 'POST', http_path: '/api/v1/auth/login', principal: pick(rng, ['admin', 'root', 'olivia', 'test']), trace_json: null };
  }
}

/** `n` timestamps over the last SPAN_DAYS days, sorted: a daily rhythm, a slow growth, and a few incident bursts. */
function timestamps(rng: Rng, n: number, now: number): Float64Array {
  const start = now - SPAN_DAYS * DAY;
  const bursts = Array.from({ length: 6 }, () => start + rng() * SPAN_DAYS * DAY);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    if (rng() < 0.04) {
      // An incident: a misconfigured agent retrying for about an hour.
      out[i] = Math.min(now, pick(rng, bursts) + rng() * 3600);
      continue;
    }
    // Growth: later days are busier (inverse CDF of a linear density from 1 to 2).
    const u = rng();
    const dayFrac = (Math.sqrt(1 + 3 * u) - 1);
    const day = Math.floor(dayFrac * SPAN_DAYS);
    // Working hours are busier than the night.
    const hour = rng() < 0.7 ? 8 + rng() * 10 : rng() * 24;
    out[i] = Math.min(now, start + day * DAY + hour * 3600 + rng() * 60);
  }
  return out.sort();
}

function fill(db: Db, rows: number): number {
  const rng = prng(SEED);
  const now = Date.now() / 1000;
  const times = timestamps(rng, rows, now);
  const insert = db.$client.prepare(
    `INSERT INTO permission_denials (tool_call_id, tool_name, agent_name, arguments_json, rule_source, reason, user_role,
       http_method, http_path, timestamp, principal, trace_json)
     VALUES (@tool_call_id, @tool_name, @agent_name, @arguments_json, @rule_source, @reason, @user_role,
       @http_method, @http_path, @timestamp, @principal, @trace_json)`,
  );
  const batch = db.$client.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const r = denial(rng, times[i] ?? now);
      insert.run({ ...r, trace_json: r.trace_json === '' ? null : r.trace_json });
    }
  });
  const t0 = nowNs();
  for (let i = 0; i < rows; i += 10_000) {
    batch(i, Math.min(rows, i + 10_000));
    if (i % 200_000 === 0 && i > 0) process.stdout.write(`  ${fmtInt(i)} rows\n`);
  }
  return Number(nowNs() - t0) / 1e9;
}

// ---------------------------------------------------------------------------------------------------------------
// Measurement
// ---------------------------------------------------------------------------------------------------------------

async function time(fn: () => unknown): Promise<{ medianMs: number; maxMs: number }> {
  await fn();
  const s = new Samples(REPEAT);
  for (let i = 0; i < REPEAT; i++) {
    const t0 = nowNs();
    await fn();
    s.push(Number(nowNs() - t0) / 1e6);
  }
  const [median] = s.percentiles([50]);
  return { medianMs: median ?? Number.NaN, maxMs: s.max() };
}

const ms = (r: { medianMs: number; maxMs: number }) => `${fmt(r.medianMs)} (${fmt(r.maxMs)})`;

export interface FilterCase {
  label: string;
  filter: DenialMatch;
}

export function filterCases(): FilterCase[] {
  return [
    { label: 'none (all time)', filter: {} },
    { label: 'last hour', filter: { since: 3600 } },
    { label: 'last 24 h', filter: { since: DAY } },
    { label: 'last 7 d', filter: { since: 7 * DAY } },
    { label: 'last 30 d', filter: { since: 30 * DAY } },
    { label: 'custom range (3 days, 2 weeks ago)', filter: { from: Date.now() / 1000 - 17 * DAY, to: Date.now() / 1000 - 14 * DAY } },
    { label: 'agent (common: data_cleaner)', filter: { agent: 'data_cleaner' } },
    { label: 'agent (rare: churn_scorer)', filter: { agent: 'churn_scorer' } },
    { label: 'tool (deploy_serving)', filter: { tool: 'deploy_serving' } },
    { label: 'rule family (policy)', filter: { ruleSource: 'policy' } },
    { label: 'exact rule (policy:budget-cap)', filter: { ruleSource: 'policy:budget-cap' } },
    { label: 'role (operator)', filter: { role: 'operator' } },
    { label: 'text (common: "prod")', filter: { q: 'prod' } },
    { label: 'text (rare: "m-4242")', filter: { q: 'm-4242' } },
    { label: 'text (none: "no-such-text")', filter: { q: 'no-such-text' } },
    { label: 'text "m-4242", last 7 d', filter: { q: 'm-4242', since: 7 * DAY } },
    { label: 'text (path: "batch_runner")', filter: { q: 'batch_runner' } },
    { label: 'text (copied: "trials": 500)', filter: { q: '  "trials": 500,' } },
    { label: 'text (2 chars: "zz", LIKE)', filter: { q: 'zz' } },
    { label: 'agent + family, last 7 d', filter: { agent: 'trainer', ruleSource: 'policy', since: 7 * DAY } },
    { label: 'agent + tool + role, last 30 d', filter: { agent: 'deployer', tool: 'deploy_serving', role: 'viewer', since: 30 * DAY } },
  ];
}

interface SortCase {
  label: string;
  filter: DenialFilter;
}

async function sortCases(store: DenialStore): Promise<SortCase[]> {
  const out: SortCase[] = [];
  for (const sort of ['timestamp', 'agent_name', 'tool_name', 'rule_source'] as const) {
    for (const order of ['asc', 'desc'] as const) out.push({ label: `sort ${sort} ${order}`, filter: { sort, order } });
  }
  out.push({ label: 'sort agent_name asc, last 7 d', filter: { sort: 'agent_name', order: 'asc', since: 7 * DAY } });
  out.push({ label: 'sort rule_source desc, agent data_cleaner', filter: { sort: 'rule_source', order: 'desc', agent: 'data_cleaner' } });
  out.push({ label: 'sort timestamp desc, family policy', filter: { sort: 'timestamp', order: 'desc', ruleSource: 'policy' } });
  // A deep page: the cursor after 200 pages of the agent sort.
  let cursor: string | undefined;
  for (let i = 0; i < 200; i++) cursor = (await store.query({ sort: 'agent_name', order: 'asc', cursor, limit: PAGE })).nextCursor ?? undefined;
  out.push({ label: 'sort agent_name asc, page 201 (keyset)', filter: { sort: 'agent_name', order: 'asc', cursor } });
  let idCursor: string | undefined;
  for (let i = 0; i < 200; i++) idCursor = (await store.query({ ruleSource: 'policy', cursor: idCursor, limit: PAGE })).nextCursor ?? undefined;
  out.push({ label: 'family policy, page 201 (id cursor)', filter: { ruleSource: 'policy', cursor: idCursor } });
  return out;
}

/** The store the explorer reads through, on this SQLite database. */
const storeOf = (db: Db): DenialStore => new SqlDenialStore(new SqliteDatabase(db.$client));

export async function measure(db: Db) {
  const store = storeOf(db);
  const filters = [];
  for (const { label, filter } of filterCases()) {
    filters.push({
      label,
      rows: await store.count(filter),
      page: await time(() => store.query({ ...filter, limit: PAGE })),
      count: await time(() => store.count(filter)),
      summary: await time(() => store.summary(filter)),
      histogram: await time(() => store.histogram(filter)),
      summaryTable: await time(() => store.summary(filter, { useRollup: false })),
      histogramTable: await time(() => store.histogram(filter, { useRollup: false })),
    });
  }
  const sorts = [];
  for (const { label, filter } of await sortCases(store)) sorts.push({ label, page: await time(() => store.query({ ...filter, limit: PAGE })) });
  const exportRows = 100_000;
  const t0 = nowNs();
  let n = 0;
  for await (const _ of store.iterate({})) if (++n >= exportRows) break;
  const exportMs = Number(nowNs() - t0) / 1e6;
  return { filters, sorts, exportRows: n, exportMs };
}


// ---------------------------------------------------------------------------------------------------------------
// Free text: LIKE (before) against the FTS5 index, trigram (what the migration builds) and unicode61 (the alternative)
// ---------------------------------------------------------------------------------------------------------------

/** The arguments as the index holds them (lib/audit/denials/search.ts: the dialect's jsonLines), for the unicode61 copy. */
const argumentText = (database: SqliteDatabase): string => new SQLiteSyncDialect().sqlToQuery(database.jsonLines(sql.raw('d.arguments_json'))).sql;

const TEXT_CASES: [string, string][] = [
  ['common: "prod"', 'prod'],
  ['rare: "m-4242"', 'm-4242'],
  ['none: "no-such-text"', 'no-such-text'],
  ['path: "batch_runner"', 'batch_runner'],
  ['copied: "trials": 500', '"trials": 500'],
  ['reason word: "olivia"', 'olivia'],
];

/** unicode61 has no substrings: the closest query is the text's tokens as one phrase, the last one a prefix. */
function unicodeQuery(text: string): string {
  const tokens = normaliseSearchText(text).split(/[^\p{L}\p{N}]+/u).filter(Boolean);
  return tokens.length ? `"${tokens.join(' ')}"*` : '""';
}

export async function measureFreeText(db: Db) {
  const c = db.$client;
  // The live index follows the writes (a server indexes new denials every second): bring it up to date first.
  const database = new SqliteDatabase(c);
  await catchUpSearchIndex(database, Number.POSITIVE_INFINITY);
  const ARGUMENT_TEXT = argumentText(database);
  const sizeOf = (name: string) =>
    (c.prepare(`SELECT sum(pgsize) AS n FROM dbstat WHERE name LIKE ?`).get(`${name}%`) as { n: number | null }).n ?? 0;
  // The unicode61 alternative, built here from the same text as the migration's trigram index.
  c.exec('DROP TABLE IF EXISTS bench_search_unicode61');
  c.exec(`CREATE VIRTUAL TABLE bench_search_unicode61 USING fts5(reason, tool_name, agent_name, http_path, arguments, content='', contentless_delete=1, tokenize='unicode61')`);
  const t0 = nowNs();
  c.exec(`INSERT INTO bench_search_unicode61 (rowid, reason, tool_name, agent_name, http_path, arguments)
          SELECT d.id, d.reason, d.tool_name, d.agent_name, d.http_path, ${ARGUMENT_TEXT} FROM permission_denials AS d`);
  const unicodeBuildMs = Number(nowNs() - t0) / 1e6;
  // The trigram index again, timed the same way (the migration built the live one).
  c.exec('DROP TABLE IF EXISTS bench_search_trigram');
  c.exec(`CREATE VIRTUAL TABLE bench_search_trigram USING fts5(reason, tool_name, agent_name, http_path, arguments, content='', contentless_delete=1, tokenize='trigram')`);
  const t1 = nowNs();
  c.exec(`INSERT INTO bench_search_trigram (rowid, reason, tool_name, agent_name, http_path, arguments)
          SELECT d.id, d.reason, d.tool_name, d.agent_name, d.http_path, ${ARGUMENT_TEXT} FROM permission_denials AS d`);
  const trigramBuildMs = Number(nowNs() - t1) / 1e6;
  const indexes = {
    trigram: { buildMs: trigramBuildMs, bytes: sizeOf('permission_denials_search') },
    unicode61: { buildMs: unicodeBuildMs, bytes: sizeOf('bench_search_unicode61') },
  };
  c.exec('DROP TABLE bench_search_trigram');
  const page = (table: string) => c.prepare(`SELECT * FROM permission_denials WHERE id IN (SELECT rowid FROM ${table} WHERE ${table} MATCH ?) ORDER BY id DESC LIMIT ${PAGE + 1}`);
  const count = (table: string) => c.prepare(`SELECT count(*) AS n FROM permission_denials WHERE id IN (SELECT rowid FROM ${table} WHERE ${table} MATCH ?)`);
  const likePage = c.prepare(`SELECT * FROM permission_denials WHERE (reason LIKE ? ESCAPE '\\' OR arguments_json LIKE ? ESCAPE '\\') ORDER BY id DESC LIMIT ${PAGE + 1}`);
  const likeCount = c.prepare(`SELECT count(*) AS n FROM permission_denials WHERE (reason LIKE ? ESCAPE '\\' OR arguments_json LIKE ? ESCAPE '\\')`);
  const store = storeOf(db);
  const rows = [];
  for (const [label, q] of TEXT_CASES) {
    const like = likeContains(q);
    const tri = ftsPhrase(normaliseSearchText(q));
    const uni = unicodeQuery(q);
    rows.push({
      label,
      likeRows: (likeCount.get(like, like) as { n: number }).n,
      trigramRows: await store.count({ q }),
      unicodeRows: (count('bench_search_unicode61').get(uni) as { n: number }).n,
      likePage: await time(() => likePage.all(like, like)),
      likeCount: await time(() => likeCount.get(like, like)),
      trigramPage: await time(() => store.query({ q, limit: PAGE })),
      trigramRaw: await time(() => page('permission_denials_search').all(tri)),
      trigramCount: await time(() => store.count({ q })),
      unicodePage: await time(() => page('bench_search_unicode61').all(uni)),
      unicodeCount: await time(() => count('bench_search_unicode61').get(uni)),
    });
  }
  c.exec('DROP TABLE bench_search_unicode61');
  return { indexes, rows };
}

export type FreeTextResult = Awaited<ReturnType<typeof measureFreeText>>;

/** The free-text table: LIKE (before), the trigram index (what the explorer uses) and unicode61, page and count. */
export function formatFreeText(ft: FreeTextResult, total: number): string {
  return [
    `Free-text indexes over ${fmtInt(total)} rows: trigram ${fmt(ft.indexes.trigram.bytes / 1e6)} MB built in ${fmt(ft.indexes.trigram.buildMs / 1000)} s; ` +
      `unicode61 ${fmt(ft.indexes.unicode61.bytes / 1e6)} MB built in ${fmt(ft.indexes.unicode61.buildMs / 1000)} s. Times in ms: median of ${REPEAT} (worst), after one warm-up run.`,
    '',
    markdownTable(
      ['free text', 'rows: LIKE (reason, args) / trigram / unicode61', 'page: LIKE (before)', 'page: trigram (store: index-driven)', 'page: trigram, id IN (all matches)', 'page: unicode61', 'count: LIKE', 'count: trigram', 'count: unicode61'],
      ft.rows.map((r) => [r.label, `${fmtInt(r.likeRows)} / ${fmtInt(r.trigramRows)} / ${fmtInt(r.unicodeRows)}`, ms(r.likePage), ms(r.trigramPage), ms(r.trigramRaw), ms(r.unicodePage), ms(r.likeCount), ms(r.trigramCount), ms(r.unicodeCount)]),
    ),
  ].join('\n');
}

/** Free text before and after, for `npm run bench`: a fresh database of `rows` denials, the index caught up, measured. */
export async function runFreeTextBench(options: { rows?: number; log?: (line: string) => void } = {}): Promise<{ rows: number; result: FreeTextResult }> {
  const rows = options.rows ?? 1_000_000;
  const log = options.log ?? ((l: string) => console.error(l));
  const dir = mkdtempSync(join(tmpdir(), 'swarm-bench-freetext-'));
  try {
    const db = openDatabase({ path: join(dir, 'denials.db') });
    log(`free text: filling ${fmtInt(rows)} denials`);
    fill(db, rows);
    await catchUpSearchIndex(new SqliteDatabase(db.$client), Number.POSITIVE_INFINITY);
    db.$client.pragma('wal_checkpoint(TRUNCATE)');
    log('free text: measuring LIKE, trigram and unicode61');
    const result = await measureFreeText(db);
    db.$client.close();
    return { rows, result };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The first page of a free-text search: the worst median of the trigram index over the cases, and the LIKE scan's. */
export function freeTextFirstPage(ft: FreeTextResult): { trigramMs: number; likeMs: number; ratio: number } {
  const trigramMs = Math.max(...ft.rows.map((r) => r.trigramPage.medianMs));
  const likeMs = Math.max(...ft.rows.map((r) => r.likePage.medianMs));
  return { trigramMs, likeMs, ratio: likeMs / trigramMs };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const arg = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const rows = Number(arg('--rows') ?? 1_000_000);
  const kept = arg('--db');
  const dir = kept ? undefined : mkdtempSync(join(tmpdir(), 'swarm-bench-denials-'));
  const path = kept ?? join(dir!, 'denials.db');
  const reuse = kept !== undefined && existsSync(kept);
  try {
    const t0 = nowNs();
    const db = openDatabase({ path });
    if (reuse) process.stdout.write(`Opened ${path} (migrations included) in ${fmt(Number(nowNs() - t0) / 1e6)} ms.\n`);
    if (!reuse) {
      process.stdout.write(`Filling ${path} with ${fmtInt(rows)} denials...\n`);
      const seconds = fill(db, rows);
      process.stdout.write(`Filled in ${fmt(seconds)} s (${fmtInt(rows / seconds)} rows/s in transactions of 10,000).\n`);
    }
    // The rows were written behind the daily counts' back (as a long-closed console would find them): count them once.
    const t1 = nowNs();
    const database = new SqliteDatabase(db.$client);
    const counted = await catchUpRollup(database);
    process.stdout.write(`Daily counts caught up with ${fmtInt(counted)} uncounted denials in ${fmt(Number(nowNs() - t1) / 1e6)} ms (chunks of 50,000, one transaction each).\n`);
    // And the free-text index, as a running server keeps it (every second): the queries below see it up to date.
    const t2 = nowNs();
    const indexed = await catchUpSearchIndex(database, Number.POSITIVE_INFINITY);
    process.stdout.write(`Free-text index caught up with ${fmtInt(indexed)} denials in ${fmt(Number(nowNs() - t2) / 1e9)} s (batches of 5,000).\n`);
    db.$client.pragma('wal_checkpoint(TRUNCATE)');
    const total = await storeOf(db).count();
    process.stdout.write(`\n${fmtInt(total)} denials, database ${fmt(statSync(path).size / 1e6)} MB. Times in ms: median of ${REPEAT} (worst), after one warm-up run.\n\n`);
    const r = await measure(db);
    process.stdout.write(
      `${markdownTable(
        ['filter', 'matching rows', 'first page (50)', 'count', 'summary', 'histogram', 'summary, audit table only', 'histogram, audit table only'],
        r.filters.map((f) => [f.label, fmtInt(f.rows), ms(f.page), ms(f.count), ms(f.summary), ms(f.histogram), ms(f.summaryTable), ms(f.histogramTable)]),
      )}\n\n`,
    );
    process.stdout.write(`${markdownTable(['sorted page (50 rows)', 'time'], r.sorts.map((s) => [s.label, ms(s.page)]))}\n\n`);
    process.stdout.write(`${formatFreeText(await measureFreeText(db), total)}\n\n`);
    process.stdout.write(`Export: the first ${fmtInt(r.exportRows)} rows of the unfiltered export in ${fmt(r.exportMs)} ms (${fmtInt(r.exportRows / (r.exportMs / 1000))} rows/s).\n`);
    db.$client.close();
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) await main();
