/**
 * The denial explorer's API, in process: the list with text search, sorting and exports, the summary and the
 * histogram, through the real route wrapper on a real SQLite file.
 */
import { join } from 'node:path';
import { callRoute, useTempServerEnv, type RouteHandler } from './support/in-process-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const server = useTempServerEnv('denials-api');

const { getSqliteApp } = await import('@/lib/app');
const check = await import('@/app/api/v1/permissions/check/route');
const denials = await import('@/app/api/v1/permissions/denials/route');
const denial = await import('@/app/api/v1/permissions/denials/[id]/route');
const summary = await import('@/app/api/v1/permissions/denials/summary/route');
const histogram = await import('@/app/api/v1/permissions/denials/histogram/route');
const facets = await import('@/app/api/v1/permissions/denials/facets/route');
const tail = await import('@/app/api/v1/permissions/denials/tail/route');

type Handler = RouteHandler;
const ADMIN = server.adminToken;
let auditor = '';
let operator = '';
let viewer = '';

const call = callRoute;

async function get<T>(handler: Handler, url: string, params?: Record<string, string>): Promise<T> {
  const r = await call(handler, url, { token: auditor, params });
  expect(r.status, `${url}: ${r.status}`).toBe(200);
  return (await r.json()) as T;
}

interface DenialJson {
  id: number;
  agent_name: string | null;
  tool_name: string;
  rule_source: string;
  reason: string | null;
  arguments_json: string | null;
  timestamp: number;
}
type Page = { denials: DenialJson[]; next_cursor: string | null };
type Ranked = { value: string | null; count: number };
type Summary = { total: number; top_agents: Ranked[]; top_rule_sources: Ranked[]; top_tools: Ranked[]; families: Ranked[] };
type Histogram = { from: number; to: number; bucket_seconds: number; families: string[]; buckets: { start: number; end: number; total: number; counts: Record<string, number> }[] };

const NOW = Date.now() / 1000;

beforeAll(async () => {
  const app = getSqliteApp();
  await app.auth.createUser('alex', 'auditor', 'auditor-password');
  await app.auth.createUser('olivia', 'operator', 'operator-password');
  await app.auth.createUser('victor', 'viewer', 'viewer-password');
  auditor = await app.auth.createToken({ username: 'alex' }, 't');
  operator = await app.auth.createToken({ username: 'olivia' }, 't');
  viewer = await app.auth.createToken({ username: 'victor' }, 't');
  // Real denials from the engine: an unlisted tool, a YAML policy rule, a flag that is off by default.
  const checks = [
    { agent: 'data_cleaner', tool: 'deploy_serving', arguments: { model_id: 'm-42', env: 'prod' } },
    { agent: 'trainer', tool: 'tune_hyperparameters', arguments: { model_id: 'm-7', trials: 500 } },
    { agent: 'evaluator', tool: 'grade_with_llm', arguments: { model_id: 'm-9', api_key: 'sk-secret' } },
  ];
  for (const body of checks) {
    const r = await call(check.POST, '/api/v1/permissions/check', { method: 'POST', token: ADMIN, body: JSON.stringify(body) });
    expect(((await r.json()) as { decision: string }).decision).toBe('DENY');
  }
  // And a history: 60 denials over the last 30 days, written with their timestamps.
  for (let i = 0; i < 60; i++) {
    app.recorder.appendDenial({
      toolName: i % 2 ? 'export_raw_data' : 'deploy_serving',
      agentName: i % 3 ? 'deployer' : 'compliance_agent',
      ruleSource: i % 4 ? 'policy:no-pii-export' : 'hitl:deploy',
      reason: i % 5 ? 'Exports with personal data are never allowed.' : 'Rejected by olivia: 100% of the budget is spent',
      argumentsJson: JSON.stringify({ dataset_id: `ds_${i}`, contains_pii: true }),
      userRole: 'viewer',
      timestamp: NOW - (i + 0.5) * 12 * 3600,
    });
  }
});
afterAll(async () => {
  await getSqliteApp().close();
  server.remove();
});

describe('GET /api/v1/permissions/denials: text, sorting, exports', () => {
  it('finds free text in the reason or the arguments, case-insensitively', async () => {
    const prod = await get<Page>(denials.GET, '/api/v1/permissions/denials?q=PROD');
    expect(prod.denials.map((d) => d.agent_name)).toEqual(['data_cleaner']);
    const budget = await get<Page>(denials.GET, `/api/v1/permissions/denials?q=${encodeURIComponent('100%')}&limit=1000`);
    expect(budget.denials).toHaveLength(12);
    expect(budget.denials.every((d) => d.reason?.includes('100%'))).toBe(true);
    const blank = await get<Page>(denials.GET, '/api/v1/permissions/denials?q=&limit=1000');
    expect(blank.denials.length).toBeGreaterThanOrEqual(63);
  });

  it('finds a path segment and a line copied from the detail panel (FTS5), and the summary and histogram agree', async () => {
    getSqliteApp().recorder.appendDenial({
      toolName: 'http', ruleSource: 'rbac:admin', reason: 'Role "viewer" is below the role "admin" this endpoint requires.',
      userRole: 'viewer', httpMethod: 'PUT', httpPath: '/api/v1/flags/batch_runner', principal: 'victor',
    });
    const path = await get<Page>(denials.GET, '/api/v1/permissions/denials?q=batch_runner&limit=1000');
    expect(path.denials.map((d) => d.tool_name)).toEqual(['http']);
    // As the panel shows the trainer's arguments: `  "trials": 500,` (two-space indent, a space after the colon).
    const copied = encodeURIComponent('  "trials": 500,');
    const trials = await get<Page>(denials.GET, `/api/v1/permissions/denials?q=${copied}&limit=1000`);
    expect(trials.denials.map((d) => d.agent_name)).toEqual(['trainer']);
    expect(JSON.parse(trials.denials[0]!.arguments_json!)).toMatchObject({ trials: 500 });
    for (const q of ['batch_runner', copied, 'SHADOW']) {
      const list = await get<Page>(denials.GET, `/api/v1/permissions/denials?q=${q}&limit=1000`);
      const s = await get<Summary>(summary.GET, `/api/v1/permissions/denials/summary?q=${q}`);
      const h = await get<Histogram>(histogram.GET, `/api/v1/permissions/denials/histogram?q=${q}`);
      expect(s.total, q).toBe(list.denials.length);
      expect(h.buckets.reduce((a, b) => a + b.total, 0), q).toBe(list.denials.length);
      const csv = await call(denials.GET, `/api/v1/permissions/denials?q=${q}&format=csv`, { token: auditor });
      expect((await csv.text()).trim().split('\r\n').length - 1, q).toBe(list.denials.length);
    }
  });

  it('sorts by a whitelisted column and pages it with a keyset cursor that fits only that sort', async () => {
    const seen: DenialJson[] = [];
    let url = '/api/v1/permissions/denials?sort=agent_name&order=asc&limit=7&since=2592000';
    for (;;) {
      const page = await get<Page>(denials.GET, url);
      seen.push(...page.denials);
      if (!page.next_cursor) break;
      url = `/api/v1/permissions/denials?sort=agent_name&order=asc&limit=7&since=2592000&cursor=${page.next_cursor}`;
    }
    const names = seen.map((d) => d.agent_name ?? '');
    expect(names).toEqual([...names].sort());
    expect(new Set(seen.map((d) => d.id)).size).toBe(seen.length);
    const page = await get<Page>(denials.GET, '/api/v1/permissions/denials?sort=agent_name&order=asc&limit=2');
    const wrongSort = await call(denials.GET, `/api/v1/permissions/denials?sort=tool_name&order=asc&cursor=${page.next_cursor}`, { token: auditor });
    expect(wrongSort.status).toBe(400);
    const body = (await wrongSort.json()) as { error: { issues: { path: string; message: string }[] } };
    expect(body.error.issues[0]).toMatchObject({ path: 'cursor' });
    expect(body.error.issues[0]?.message).toMatch(/another sort/);
  });

  it('keeps the numeric cursor of the default order, newest first', async () => {
    const first = await get<Page>(denials.GET, '/api/v1/permissions/denials?limit=2');
    expect(first.next_cursor).toBe(String(first.denials[1]!.id));
    const second = await get<Page>(denials.GET, `/api/v1/permissions/denials?limit=2&cursor=${first.next_cursor}`);
    expect(second.denials[0]!.id).toBeLessThan(first.denials[1]!.id);
  });

  it('streams every row of a filter as NDJSON, the same rows as the CSV export', async () => {
    const filter = 'rule_source=policy&agent=deployer';
    const nd = await call(denials.GET, `/api/v1/permissions/denials?${filter}&format=ndjson`, { token: auditor });
    expect(nd.headers.get('content-type')).toMatch(/application\/x-ndjson/);
    expect(nd.headers.get('content-disposition')).toMatch(/^attachment; filename="permission_denials_agent-deployer_rule-policy_exported-\d{8}T\d{6}Z\.ndjson"$/);
    // The first record names the export (its window, newest id and row count); one denial per line after it.
    const [meta, ...lines] = (await nd.text()).trim().split('\n');
    const rows = lines.map((l) => JSON.parse(l) as DenialJson);
    expect(rows.length).toBeGreaterThan(0);
    const head = JSON.parse(meta!) as { export: { kind: string; rows: number; until_id: number } };
    expect(head.export).toMatchObject({ kind: 'permission_denials', rows: rows.length });
    // the newest row of the trail when the export was cut: no exported row is newer
    expect(head.export.until_id).toBeGreaterThanOrEqual(Math.max(...rows.map((r) => r.id)));
    expect(rows.every((r) => r.agent_name === 'deployer' && r.rule_source.startsWith('policy:'))).toBe(true);
    const csv = await call(denials.GET, `/api/v1/permissions/denials?${filter}&format=csv`, { token: auditor });
    const ids = (await csv.text()).trim().split('\r\n').slice(1).map((l) => Number(l.split(',')[0]));
    expect(ids).toEqual(rows.map((r) => r.id));
  });

  it('exports CSV with ISO 8601 times beside the epoch, in a file named after the filter and the time', async () => {
    const r = await call(denials.GET, '/api/v1/permissions/denials?agent=deployer&rule_source=policy&since=3600&q=personal&format=csv', { token: auditor });
    expect(r.headers.get('content-disposition')).toMatch(
      /^attachment; filename="permission_denials_last-1h_agent-deployer_rule-policy_text-personal_exported-\d{8}T\d{6}Z\.csv"$/,
    );
    const all = await call(denials.GET, '/api/v1/permissions/denials?format=csv&limit=1000', { token: auditor });
    const lines = (await all.text()).trim().split('\r\n');
    expect(lines[0]).toMatch(/^id,timestamp,timestamp_iso,/);
    for (const line of lines.slice(1, 20)) {
      const [, epoch, iso] = line.split(',');
      expect(iso).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(Math.abs(Date.parse(iso!) / 1000 - Number(epoch))).toBeLessThan(0.001);
    }
    const windowed = await call(denials.GET, '/api/v1/permissions/denials?from=1763596800&to=1763683200&format=ndjson', { token: auditor });
    expect(windowed.headers.get('content-disposition')).toMatch(/filename="permission_denials_20251120T000000Z-20251121T000000Z_exported-\d{8}T\d{6}Z\.ndjson"/);
  });

  it('answers 400 with the issues for bad sorting, text and windows, never 500', async () => {
    for (const q of ['sort=reason', 'sort=agent_name&order=up', `q=${'x'.repeat(201)}`, 'from=200&to=100', 'format=xml', 'cursor=x', 'sort=timestamp&cursor=12']) {
      const r = await call(denials.GET, `/api/v1/permissions/denials?${q}`, { token: auditor });
      expect(r.status, q).toBe(400);
      const body = (await r.json()) as { error: { code: string; issues: unknown[] } };
      expect(body.error.code, q).toBe('BAD_REQUEST');
      expect(body.error.issues.length, q).toBeGreaterThan(0);
    }
  });

  it('returns the stored trace of a denial with its arguments redacted', async () => {
    const page = await get<Page>(denials.GET, '/api/v1/permissions/denials?agent=evaluator');
    const id = String(page.denials[0]!.id);
    const one = await get<DenialJson & { trace: { decision: string; rule_source: string }[] }>(denial.GET, `/api/v1/permissions/denials/${id}`, { id });
    expect(one.rule_source).toBe('flag:evaluator_grading');
    expect(one.trace.some((r) => r.decision === 'DENY' && r.rule_source === 'flag:evaluator_grading')).toBe(true);
    expect(one.arguments_json).not.toContain('sk-secret');
    expect(JSON.parse(one.arguments_json!)).toMatchObject({ api_key: '[REDACTED]' });
  });
});

describe('GET /api/v1/permissions/denials/summary', () => {
  it('totals a filter and ranks its agents, rule sources and tools', async () => {
    const s = await get<Summary>(summary.GET, '/api/v1/permissions/denials/summary?rule_source=policy');
    expect(s.total).toBe(46);
    expect(s.top_rule_sources).toEqual([
      { value: 'policy:no-pii-export', count: 45 },
      { value: 'policy:bfsi/tuning-capacity-review', count: 1 },
    ]);
    expect(s.top_agents[0]).toEqual({ value: 'deployer', count: 30 });
    expect(s.families).toEqual([{ value: 'policy', count: 46 }]);
  });

  it('takes the same filters as the list and agrees with it', async () => {
    for (const q of ['since=604800', 'agent=compliance_agent&tool=deploy_serving', `q=${encodeURIComponent('100%')}`, `from=${NOW - 10 * 86400}&to=${NOW - 2 * 86400}`]) {
      const s = await get<Summary>(summary.GET, `/api/v1/permissions/denials/summary?${q}`);
      const list = await get<Page>(denials.GET, `/api/v1/permissions/denials?${q}&limit=1000`);
      expect(s.total, q).toBe(list.denials.length);
    }
  });

  it('is for auditors and above, and refuses bad filters with 400', async () => {
    expect((await call(summary.GET, '/api/v1/permissions/denials/summary', { token: viewer })).status).toBe(403);
    expect((await call(summary.GET, '/api/v1/permissions/denials/summary')).status).toBe(401);
    expect((await call(summary.GET, '/api/v1/permissions/denials/summary', { token: operator })).status).toBe(200);
    for (const q of ['since=-1', 'role=root', 'limit=5', 'sort=agent_name', 'from=10&to=5']) {
      const r = await call(summary.GET, `/api/v1/permissions/denials/summary?${q}`, { token: auditor });
      expect(r.status, q).toBe(400);
      expect(((await r.json()) as { error: { issues: unknown[] } }).error.issues.length).toBeGreaterThan(0);
    }
  });
});

describe('GET /api/v1/permissions/denials/histogram', () => {
  it('buckets a filter over its window, stacked by rule-source family', async () => {
    const h = await get<Histogram>(histogram.GET, '/api/v1/permissions/denials/histogram?since=2592000');
    expect(h.bucket_seconds).toBe(86400);
    expect(h.buckets.length).toBeGreaterThanOrEqual(30);
    const total = h.buckets.reduce((n, b) => n + b.total, 0);
    const s = await get<Summary>(summary.GET, '/api/v1/permissions/denials/summary?since=2592000');
    expect(total).toBe(s.total);
    expect(h.families).toEqual(expect.arrayContaining(['policy', 'hitl', 'agent_allowlist', 'flag']));
    for (const b of h.buckets) expect(Object.values(b.counts).reduce((n, c) => n + c, 0)).toBe(b.total);
  });

  it('narrows to hours for a day, and to the filter', async () => {
    const h = await get<Histogram>(histogram.GET, '/api/v1/permissions/denials/histogram?since=86400&agent=data_cleaner');
    expect(h.bucket_seconds).toBe(1800);
    expect(h.buckets.reduce((n, b) => n + b.total, 0)).toBe(1);
    expect(h.families).toEqual(['agent_allowlist']);
  });

  it('is for auditors and above, and refuses bad filters with 400', async () => {
    expect((await call(histogram.GET, '/api/v1/permissions/denials/histogram', { token: viewer })).status).toBe(403);
    for (const q of ['since=abc', 'bogus=1', 'to=-3']) {
      const r = await call(histogram.GET, `/api/v1/permissions/denials/histogram?${q}`, { token: auditor });
      expect(r.status, q).toBe(400);
    }
  });
});

type FacetJson = { field: string; prefix: string; values: { value: string; count: number; family?: boolean }[]; total: number };

describe('filters by prefix or case, facets and the live tail', () => {
  beforeAll(async () => {
    // An undeclared agent, through the engine: denied by the allowlist, recorded like any other.
    for (let i = 0; i < 3; i++) {
      const r = await call(check.POST, '/api/v1/permissions/check', { method: 'POST', token: ADMIN, body: JSON.stringify({ agent: 'shadow_agent', tool: 'web_fetch', arguments: { n: i } }) });
      expect(((await r.json()) as { decision: string }).decision).toBe('DENY');
    }
  });

  it('suggests the agents of the window that start with the prefix, any case, undeclared ones included, with counts', async () => {
    const sh = await get<FacetJson>(facets.GET, '/api/v1/permissions/denials/facets?field=agent&prefix=sh&since=86400');
    expect(sh.values).toEqual([{ value: 'shadow_agent', count: 3 }]);
    const upper = await get<FacetJson>(facets.GET, '/api/v1/permissions/denials/facets?field=agent&prefix=SHA&since=86400');
    expect(upper.values).toEqual(sh.values);
    // Every value with its count, most first, and the counts are the list's.
    const all = await get<FacetJson>(facets.GET, '/api/v1/permissions/denials/facets?field=agent&since=2592000');
    expect(all.values.map((v) => v.count)).toEqual([...all.values.map((v) => v.count)].sort((a, b) => b - a));
    for (const v of all.values) {
      const list = await get<Page>(denials.GET, `/api/v1/permissions/denials?agent=${v.value}&since=2592000&limit=1000`);
      expect(list.denials.length, v.value).toBe(v.count);
    }
    // The other filters narrow the suggestions; the field's own filter does not.
    const deployTools = await get<FacetJson>(facets.GET, '/api/v1/permissions/denials/facets?field=tool&agent=deployer');
    expect(deployTools.values.map((v) => v.value).sort()).toEqual(['deploy_serving', 'export_raw_data']);
    const ownFilter = await get<FacetJson>(facets.GET, '/api/v1/permissions/denials/facets?field=agent&agent=deployer&prefix=s');
    expect(ownFilter.values.map((v) => v.value)).toEqual(['shadow_agent']);
    // Rule sources: the family beside its rules.
    const rules = await get<FacetJson>(facets.GET, '/api/v1/permissions/denials/facets?field=rule_source&prefix=pol');
    expect(rules.values[0]).toMatchObject({ value: 'policy', family: true });
    expect(rules.values.some((v) => v.value === 'policy:no-pii-export' && !v.family)).toBe(true);
    // A window without denials suggests nothing.
    const empty = await get<FacetJson>(facets.GET, `/api/v1/permissions/denials/facets?field=agent&from=1000&to=2000`);
    expect(empty.values).toEqual([]);
    for (const q of ['field=principal', 'field=agent&limit=0', 'prefix=x']) {
      expect((await call(facets.GET, `/api/v1/permissions/denials/facets?${q}`, { token: auditor })).status, q).toBe(400);
    }
    expect((await call(facets.GET, '/api/v1/permissions/denials/facets?field=agent', { token: viewer })).status).toBe(403);
  });

  it('filters by a prefix or a case difference, and the list, summary, histogram and exports agree', async () => {
    const exact = await get<Page>(denials.GET, '/api/v1/permissions/denials?agent=shadow_agent&limit=1000');
    expect(exact.denials).toHaveLength(3);
    for (const q of ['agent=Shadow_Agent', 'agent=sh', 'agent=SHADOW', 'tool=WEB_F', 'agent=shadow*']) {
      const list = await get<Page>(denials.GET, `/api/v1/permissions/denials?${q}&limit=1000`);
      expect(list.denials.map((d) => d.id), q).toEqual(exact.denials.map((d) => d.id));
      const s = await get<Summary>(summary.GET, `/api/v1/permissions/denials/summary?${q}`);
      const h = await get<Histogram>(histogram.GET, `/api/v1/permissions/denials/histogram?${q}`);
      expect(s.total, q).toBe(3);
      expect(h.buckets.reduce((a, b) => a + b.total, 0), q).toBe(3);
      const csv = await call(denials.GET, `/api/v1/permissions/denials?${q}&format=csv`, { token: auditor });
      expect((await csv.text()).trim().split('\r\n'), q).toHaveLength(4);
    }
    // An exact value (any case) wins over the prefix; a family ignores case; a rule prefix takes every rule it starts.
    const deployer = await get<Page>(denials.GET, '/api/v1/permissions/denials?agent=DEPLOYER&limit=1000');
    expect(deployer.denials.length).toBeGreaterThan(0);
    expect(deployer.denials.every((d) => d.agent_name === 'deployer')).toBe(true);
    const family = await get<Page>(denials.GET, '/api/v1/permissions/denials?rule_source=POLICY&limit=1000');
    const lowerFamily = await get<Page>(denials.GET, '/api/v1/permissions/denials?rule_source=policy&limit=1000');
    expect(family.denials.map((d) => d.id)).toEqual(lowerFamily.denials.map((d) => d.id));
    const rulePrefix = await get<Page>(denials.GET, '/api/v1/permissions/denials?rule_source=policy:no-&limit=1000');
    expect(rulePrefix.denials.length).toBeGreaterThan(0);
    expect(rulePrefix.denials.every((d) => d.rule_source.startsWith('policy:no-'))).toBe(true);
    const hitl = await get<Page>(denials.GET, '/api/v1/permissions/denials?rule_source=hitl:DEP&limit=1000');
    expect(hitl.denials.length).toBeGreaterThan(0);
    expect(hitl.denials.every((d) => d.rule_source === 'hitl:deploy')).toBe(true);
    const nobody = await get<Page>(denials.GET, '/api/v1/permissions/denials?agent=nobody_at_all');
    expect(nobody.denials).toEqual([]);
  });

  it('counts the denials of the filter recorded after an id (the live tail)', async () => {
    const newest = (await get<Page>(denials.GET, '/api/v1/permissions/denials?limit=1')).denials[0]!.id;
    const none = await get<{ count: number; newest_id: number | null }>(tail.GET, `/api/v1/permissions/denials/tail?after=${newest}&since=3600`);
    expect(none).toMatchObject({ count: 0, newest_id: null });
    for (let i = 0; i < 2; i++) {
      await call(check.POST, '/api/v1/permissions/check', { method: 'POST', token: ADMIN, body: JSON.stringify({ agent: 'shadow_agent', tool: 'tail_tool', arguments: {} }) });
    }
    getSqliteApp().recorder.appendDenial({ toolName: 'other', agentName: 'trainer', ruleSource: 'default', reason: 'not in the filter' });
    const two = await get<{ count: number; newest_id: number }>(tail.GET, `/api/v1/permissions/denials/tail?after=${newest}&since=3600&agent=sh`);
    expect(two.count).toBe(2);
    const all = await get<{ count: number; newest_id: number }>(tail.GET, `/api/v1/permissions/denials/tail?after=${newest}&since=3600`);
    expect(all.count).toBe(3);
    expect(all.newest_id).toBeGreaterThan(two.newest_id);
    expect((await call(tail.GET, '/api/v1/permissions/denials/tail', { token: auditor })).status).toBe(400);
  });
});

// Moved from e2e/shell.spec.ts (issue 43): the REST API's answers are the route handlers', not the build's.
describe('the REST API: the queries of the specification', () => {
  it('answers the three queries of the specification', async () => {
    for (const body of [
      { agent: 'data_cleaner', tool: 'deploy_serving', arguments: { model_id: 'm', env: 'prod' } },
      { agent: 'trainer', tool: 'tune_hyperparameters', arguments: { model_id: 'm', trials: 500 } },
    ]) {
      await call(check.POST, '/api/v1/permissions/check', { method: 'POST', token: ADMIN, body: JSON.stringify(body) });
    }
    const as = (url: string) => call(denials.GET, url, { token: ADMIN }).then((r) => r.json());
    const since = (await as('/api/v1/permissions/denials?since=86400')) as { denials: unknown[] };
    expect(since.denials.length).toBeGreaterThanOrEqual(2);
    const agent = (await as('/api/v1/permissions/denials?agent=data_cleaner')) as { denials: { agent_name: string; rule_source: string }[] };
    expect(agent.denials[0]).toMatchObject({ agent_name: 'data_cleaner', rule_source: 'agent_allowlist' });
    const policy = (await as('/api/v1/permissions/denials?rule_source=policy')) as { denials: { rule_source: string }[] };
    expect(policy.denials.map((d) => d.rule_source)).toContain('policy:bfsi/tuning-capacity-review');
    expect(policy.denials.every((d) => d.rule_source.startsWith('policy:'))).toBe(true);
  });

  it('refuses a missing token with 401 and a bad filter with 400', async () => {
    expect((await call(denials.GET, '/api/v1/permissions/denials')).status).toBe(401);
    const bad = await call(denials.GET, '/api/v1/permissions/denials?since=yesterday', { token: ADMIN });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { issues: unknown[] } }).error.issues.length).toBeGreaterThan(0);
  });
});
