/**
 * The API answers what lib/http/responses.ts says it answers: each route the console reads, called through its real
 * handler, and its body parsed with the schema the console's API client parses it with (app/_lib/api-client.ts) and
 * the OpenAPI document shows. A body with a field the schema lacks fails too (zod drops unknown keys, so the parse
 * would differ from the body): the schema is the whole answer, not a part of it. Shared by
 * tests/response-schemas.test.ts (SQLite) and tests/pg-response-schemas.test.ts (PostgreSQL).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { App } from '@/lib/app';
import * as R from '@/lib/http/responses';
import { callRoute, type RouteHandler } from './in-process-api';

const check = await import('@/app/api/v1/permissions/check/route');
const denials = await import('@/app/api/v1/permissions/denials/route');
const denial = await import('@/app/api/v1/permissions/denials/[id]/route');
const summary = await import('@/app/api/v1/permissions/denials/summary/route');
const histogram = await import('@/app/api/v1/permissions/denials/histogram/route');
const facets = await import('@/app/api/v1/permissions/denials/facets/route');
const tail = await import('@/app/api/v1/permissions/denials/tail/route');
const events = await import('@/app/api/v1/audit/events/route');
const verify = await import('@/app/api/v1/audit/verify/route');
const approvals = await import('@/app/api/v1/approvals/route');
const approval = await import('@/app/api/v1/approvals/[id]/route');
const approve = await import('@/app/api/v1/approvals/[id]/approve/route');
const reject = await import('@/app/api/v1/approvals/[id]/reject/route');
const flags = await import('@/app/api/v1/flags/route');
const flag = await import('@/app/api/v1/flags/[name]/route');
const me = await import('@/app/api/v1/auth/me/route');
const batch = await import('@/app/api/v1/permissions/check/batch/route');
const finished = await import('@/app/api/v1/permissions/finished/route');
const tools = await import('@/app/api/v1/permissions/tools/route');

const DEPLOYER = 'response-schemas-deployer-token-0123456789';

export function responseSchemasSuite(name: string, getApp: () => App | Promise<App>, adminToken: () => string): void {
  describe(`the API answers its response schemas (${name})`, () => {
    let denialId = 0;
    const asked: string[] = [];

    /** Call `handler`, expect `status`, and parse the body with `schema`: the parse must be the body itself. */
    async function answer<S extends z.ZodType>(handler: RouteHandler, url: string, schema: S, init: { method?: string; body?: unknown; params?: Record<string, string>; token?: string; status?: number } = {}): Promise<z.output<S>> {
      const res = await callRoute(handler, url, { method: init.method, token: init.token ?? adminToken(), params: init.params, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
      const body: unknown = await res.json();
      expect(res.status, `${url}: ${JSON.stringify(body)}`).toBe(init.status ?? 200);
      const parsed = schema.safeParse(body);
      expect(parsed.error?.issues ?? [], url).toEqual([]);
      expect(parsed.data, `${url}: a field of the answer is missing from its schema`).toEqual(body);
      return parsed.data as z.output<S>;
    }

    beforeAll(async () => {
      const app = await getApp();
      await app.auth.ensureToken(DEPLOYER, { agent: 'deployer' }, 'response schemas');
      // A denial of the engine (a tool the agent may not use), and two gated calls waiting for a person.
      const res = await callRoute(check.POST, '/api/v1/permissions/check', { method: 'POST', token: adminToken(), body: JSON.stringify({ agent: 'data_cleaner', tool: 'deploy_serving', arguments: { model_id: 'm-schema', env: 'prod' } }) });
      expect(((await res.json()) as { decision: string }).decision).toBe('DENY');
      for (const model of ['m-schema-a', 'm-schema-b']) {
        const res = await callRoute(check.POST, '/api/v1/permissions/check', { method: 'POST', token: DEPLOYER, body: JSON.stringify({ agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: model, env: 'staging' } }) });
        const body = (await res.json()) as { decision: string; approval_id: string };
        expect(body.decision).toBe('ASK');
        asked.push(body.approval_id);
      }
    });

    it('the denials: a page, one with its trace, the summary, the chart, the facets and the tail', async () => {
      const page = await answer(denials.GET, '/api/v1/permissions/denials?limit=5', R.denialPageSchema);
      expect(page.denials.length).toBeGreaterThan(0);
      denialId = page.denials[0]!.id;
      const one = await answer(denial.GET, `/api/v1/permissions/denials/${denialId}`, R.denialDetailSchema, { params: { id: String(denialId) } });
      expect(one.id).toBe(denialId);
      expect((await answer(summary.GET, '/api/v1/permissions/denials/summary', R.denialSummarySchema)).total).toBeGreaterThan(0);
      await answer(histogram.GET, '/api/v1/permissions/denials/histogram?since=86400', R.denialHistogramSchema);
      expect((await answer(facets.GET, '/api/v1/permissions/denials/facets?field=rule_source&prefix=agent', R.denialFacetsSchema)).values.length).toBeGreaterThan(0);
      expect((await answer(tail.GET, '/api/v1/permissions/denials/tail?after=0&newest=1', R.denialTailSchema)).newest_id).toBe(denialId);
      expect((await answer(tail.GET, '/api/v1/permissions/denials/tail?after=0', R.denialTailSchema)).count).toBeGreaterThan(0);
    });

    it('the decisions: one check, a batch, an outcome report, the tools an agent may use', async () => {
      const denied = await answer(check.POST, '/api/v1/permissions/check', R.checkAnswerSchema, { method: 'POST', token: DEPLOYER, body: { agent: 'deployer', tool: 'export_raw_data', arguments: { dataset_id: 'd-1' } } });
      expect(denied).toMatchObject({ decision: 'DENY', recorded: true, approval_id: null });
      const results = await answer(batch.POST, '/api/v1/permissions/check/batch', R.checkBatchAnswerSchema, {
        method: 'POST',
        token: DEPLOYER,
        body: { checks: [{ agent: 'deployer', tool: 'monitor_drift', arguments: { model_id: 'm-1' } }, { agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: 'm-schema-c', env: 'prod' }, dry_run: true }] },
      });
      expect(results.results.map((r) => r.decision)).toEqual(['ALLOW', 'ASK']);
      await answer(finished.POST, '/api/v1/permissions/finished', R.finishedAnswerSchema, { method: 'POST', token: DEPLOYER, status: 202, body: { agent: 'deployer', tool: 'monitor_drift', arguments: { model_id: 'm-1' }, decision_id: results.results[0]!.decision_id!, outcome: 'succeeded' } });
      const usable = await answer(tools.POST, '/api/v1/permissions/tools', R.toolVisibilitySchema, { method: 'POST', token: DEPLOYER, body: { agent: 'deployer', tools: [{ tool: 'monitor_drift' }, { tool: 'export_raw_data' }] } });
      expect(usable.tools).toEqual(['open', 'hidden']);
    });

    it('the audit trail: a page of security events, and a verification', async () => {
      expect((await answer(events.GET, '/api/v1/audit/events?limit=20', R.eventPageSchema)).events.length).toBeGreaterThan(0);
      expect((await answer(verify.GET, '/api/v1/audit/verify', R.verifyReportSchema)).ok).toBe(true);
    });

    it('approvals: the pending list, one request, an approval and a rejection', async () => {
      const list = await answer(approvals.GET, '/api/v1/approvals?status=pending', R.approvalListSchema);
      expect(list.approvals.map((a) => a.id)).toEqual(expect.arrayContaining(asked));
      const [a, b] = asked as [string, string];
      expect((await answer(approval.GET, `/api/v1/approvals/${a}`, R.approvalSchema, { params: { id: a } })).status).toBe('pending');
      expect((await answer(approve.POST, `/api/v1/approvals/${a}/approve`, R.approvalSchema, { method: 'POST', params: { id: a }, body: {} })).status).toBe('approved');
      const rejected = await answer(reject.POST, `/api/v1/approvals/${b}/reject`, R.approvalSchema, { method: 'POST', params: { id: b }, body: { reason: 'not now' } });
      expect(rejected).toMatchObject({ status: 'rejected', decision_reason: 'not now' });
    });

    it('flags: one flag, an override set and removed', async () => {
      const all = (await (await callRoute(flags.GET, '/api/v1/flags', { token: adminToken() })).json()) as { flags: { name: string; changeable: boolean; value: boolean }[] };
      const target = all.flags.find((f) => f.changeable);
      expect(target).toBeDefined();
      const name = target!.name;
      expect((await answer(flag.GET, `/api/v1/flags/${name}`, R.flagSchema, { params: { name } })).name).toBe(name);
      const set = await answer(flag.PUT, `/api/v1/flags/${name}`, R.flagSchema, { method: 'PUT', params: { name }, body: { value: !target!.value, reason: 'schema test' } });
      expect(set.override).toMatchObject({ value: !target!.value, reason: 'schema test' });
      expect((await answer(flag.DELETE, `/api/v1/flags/${name}`, R.flagSchema, { method: 'DELETE', params: { name }, body: { reason: 'schema test done' } })).override).toBeNull();
    });

    it('who is asking, and the body of a refusal with its issues', async () => {
      expect((await answer(me.GET, '/api/v1/auth/me', R.meSchema)).role).toBe('admin');
      const refused = await answer(denials.GET, '/api/v1/permissions/denials?limit=0', R.apiErrorBodySchema, { status: 400 });
      expect(refused.error.issues?.[0]).toMatchObject({ in: 'query', path: 'limit' });
      await answer(denial.GET, '/api/v1/permissions/denials/999999999', R.apiErrorBodySchema, { params: { id: '999999999' }, status: 404 });
    });
  });
}
