/**
 * The batch check endpoint and the AuthZEN Authorization API 1.0 (evaluation, evaluations, metadata), in process:
 * the real route handlers and wrapper on a real SQLite file with a copy of config/ (the BFSI profile active).
 */
import { callRoute, useTempServerEnv } from './support/in-process-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const server = useTempServerEnv('decisions');

const { getSqliteApp } = await import('@/lib/app');
const batch = await import('@/app/api/v1/permissions/check/batch/route');
const evaluation = await import('@/app/access/v1/evaluation/route');
const evaluations = await import('@/app/access/v1/evaluations/route');
const configuration = await import('@/app/api/authzen/configuration/route');

const ADMIN = server.adminToken;
let deployer = '';
let trainer = '';
let olivia = '';

type Json = Record<string, unknown> & { error?: { code: string; message: string; issues?: { path: string }[] } };
const json = async (r: Response) => (await r.json()) as Json;
const post = (handler: typeof batch.POST, url: string, body: unknown, token: string, headers: Record<string, string> = {}) =>
  callRoute(handler, url, { method: 'POST', token, body: JSON.stringify(body), headers });

beforeAll(async () => {
  const app = getSqliteApp();
  await app.auth.createUser('olivia', 'operator', 'operator-password');
  await app.auth.createUser('victor', 'viewer', 'viewer-password');
  olivia = await app.auth.createToken({ username: 'olivia' }, 't');
  deployer = await app.auth.createToken({ agent: 'deployer' }, 't');
  trainer = await app.auth.createToken({ agent: 'trainer' }, 't');
});
afterAll(async () => {
  await getSqliteApp().close();
  server.remove();
});

const denialOf = async (decisionId: unknown) => (await getSqliteApp().denials.query({ limit: 50 })).rows.find((r) => r.decisionId === decisionId);

describe('POST /api/v1/permissions/check/batch', () => {
  it('answers every check in order, each with its decision id; denials are recorded with it', async () => {
    const r = await post(batch.POST, '/api/v1/permissions/check/batch', {
      checks: [
        { agent: 'trainer', tool: 'train_model', arguments: { dataset_id: 'ds-1', algorithm: 'xgb' } },
        { agent: 'trainer', tool: 'tune_hyperparameters', arguments: { model_id: 'm-1', trials: 900 } },
        { agent: 'trainer', tool: 'deploy_serving', arguments: { model_id: 'm-1', env: 'prod' } },
        { agent: 'trainer', tool: 'train_model', arguments: { dataset_id: 'ds-2', algorithm: 'xgb' }, dry_run: true },
      ],
    }, trainer);
    expect(r.status).toBe(200);
    const { results } = (await r.json()) as { results: { decision: string; rule_source: string; decision_id: string | null; recorded: boolean }[] };
    expect(results.map((x) => [x.decision, x.rule_source])).toEqual([
      ['ALLOW', 'agent_allowlist'],
      ['DENY', 'policy:bfsi/tuning-capacity-review'],
      ['DENY', 'agent_allowlist'],
      ['ALLOW', 'agent_allowlist'],
    ]);
    expect(results.slice(0, 3).every((x) => typeof x.decision_id === 'string')).toBe(true);
    expect(new Set(results.slice(0, 3).map((x) => x.decision_id)).size).toBe(3);
    expect(results[3]!.decision_id).toBeNull();
    expect(await denialOf(results[1]!.decision_id)).toMatchObject({ ruleSource: 'policy:bfsi/tuning-capacity-review', agentName: 'trainer' });
    expect(await denialOf(results[2]!.decision_id)).toMatchObject({ ruleSource: 'agent_allowlist', toolName: 'deploy_serving' });
  });

  it('refuses an empty batch and one of more than 1,000 checks with the zod issues', async () => {
    const empty = await post(batch.POST, '/api/v1/permissions/check/batch', { checks: [] }, trainer);
    expect(empty.status).toBe(400);
    const one = { agent: 'trainer', tool: 'train_model', arguments: {} };
    const big = await post(batch.POST, '/api/v1/permissions/check/batch', { checks: Array.from({ length: 1001 }, () => one) }, trainer);
    expect(big.status).toBe(400);
    expect((await json(big)).error?.issues?.[0]).toMatchObject({ path: 'checks' });
    const bad = await post(batch.POST, '/api/v1/permissions/check/batch', { checks: [one, { agent: 'trainer' }] }, trainer);
    expect((await json(bad)).error?.issues?.map((i) => i.path)).toEqual(['checks.1.tool']);
  });

  it('is one transaction: when a denial cannot be recorded, nothing of the batch is kept or acknowledged (503)', async () => {
    const sqlite = getSqliteApp().db.$client;
    const before = await getSqliteApp().denials.count();
    // The second denial of this batch fails in the database (as a full disk would), after the first was written.
    sqlite.exec(`CREATE TEMP TRIGGER fail_second_denial BEFORE INSERT ON permission_denials
      WHEN (SELECT count(*) FROM permission_denials) >= ${before + 1} BEGIN SELECT RAISE(ABORT, 'disk full'); END`);
    try {
      const r = await post(batch.POST, '/api/v1/permissions/check/batch', {
        checks: [
          { agent: 'trainer', tool: 'deploy_serving', arguments: { n: 1 } },
          { agent: 'trainer', tool: 'deploy_serving', arguments: { n: 2 } },
        ],
      }, trainer);
      expect(r.status).toBe(503);
      expect((await json(r)).error?.code).toBe('AUDIT_UNAVAILABLE');
    } finally {
      sqlite.exec('DROP TRIGGER fail_second_denial');
    }
    expect(await getSqliteApp().denials.count()).toBe(before);
  });
});

describe('AuthZEN: POST /access/v1/evaluation', () => {
  const toolCall = (tool: string, args: Record<string, unknown> = {}) => ({
    subject: { type: 'agent', id: 'deployer' },
    action: { name: 'call' },
    resource: { type: 'tool', id: tool, properties: { arguments: args } },
  });

  it('answers true for an allowed call, with its decision id, and echoes X-Request-ID', async () => {
    const r = await post(evaluation.POST, '/access/v1/evaluation', toolCall('monitor_drift', { model_id: 'm-1' }), deployer, { 'x-request-id': 'req-42' });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-request-id')).toBe('req-42');
    expect(await r.json()).toMatchObject({ decision: true, context: { swarm_decision: 'ALLOW', rule_source: 'agent_allowlist', decision_id: expect.any(String) } });
  });

  it('answers false for a denial, recorded with the decision id it returns', async () => {
    const body = await json(await post(evaluation.POST, '/access/v1/evaluation', toolCall('train_model', { dataset_id: 'd' }), deployer));
    expect(body).toMatchObject({ decision: false, context: { swarm_decision: 'DENY', rule_source: 'agent_allowlist', reason_admin: { en: expect.stringContaining('train_model') } } });
    expect(await denialOf((body.context as { decision_id: string }).decision_id)).toMatchObject({ agentName: 'deployer', toolName: 'train_model' });
  });

  it('answers false for a gated call, with the approval a person must give', async () => {
    const body = await json(await post(evaluation.POST, '/access/v1/evaluation', toolCall('deploy_serving', { model_id: 'm-9', env: 'prod' }), deployer));
    expect(body).toMatchObject({ decision: false, context: { swarm_decision: 'ASK', rule_source: 'hitl:deploy', approval_id: expect.stringMatching(/^apr_/) } });
    expect(await getSqliteApp().approvals.get((body.context as { approval_id: string }).approval_id)).toMatchObject({ status: 'pending', agentName: 'deployer' });
  });

  it('maps an http resource: the method is the action, the path the resource', async () => {
    const ask = (method: string, path: string) => ({ subject: { type: 'user', id: 'olivia' }, action: { name: method }, resource: { type: 'http', id: path } });
    const read = await json(await post(evaluation.POST, '/access/v1/evaluation', ask('GET', '/api/v1/approvals'), olivia));
    expect(read).toMatchObject({ decision: true });
    const admin = await json(await post(evaluation.POST, '/access/v1/evaluation', { ...ask('PUT', '/api/v1/flags/batch_runner'), resource: { type: 'http', id: '/api/v1/flags/batch_runner', properties: { required_role: 'admin' } } }, olivia));
    expect(admin).toMatchObject({ decision: false, context: { swarm_decision: 'DENY' } });
    // This product's own routes are evaluated with the role they declare, whatever role the request names or omits.
    const undeclared = await json(await post(evaluation.POST, '/access/v1/evaluation', ask('PUT', '/api/v1/flags/batch_runner'), olivia));
    expect(undeclared).toMatchObject({ decision: false, context: { swarm_decision: 'DENY', rule_source: 'rbac:admin' } });
    const lowered = await json(await post(evaluation.POST, '/access/v1/evaluation', { ...ask('POST', '/api/v1/approvals/apr_x/approve'), resource: { type: 'http', id: '/api/v1/approvals/apr_x/approve', properties: { required_role: 'viewer' } } }, olivia));
    expect(lowered).toMatchObject({ decision: true });
    const auditorOnly = await json(await post(evaluation.POST, '/access/v1/evaluation', { ...ask('GET', '/api/v1/permissions/denials'), subject: { type: 'user', id: 'victor' }, resource: { type: 'http', id: '/api/v1/permissions/denials', properties: { required_role: 'viewer' } } }, ADMIN));
    expect(auditorOnly).toMatchObject({ decision: false, context: { rule_source: 'rbac:auditor' } });
    // A path of another service keeps the role the request names (a gateway's own endpoints).
    const foreign = await json(await post(evaluation.POST, '/access/v1/evaluation', ask('DELETE', '/billing/invoices/7'), olivia));
    expect(foreign).toMatchObject({ decision: true });
  });

  it('lets an agent ask only about itself, a person about themselves, and an administrator about anyone', async () => {
    const other = { ...toolCall('monitor_drift'), subject: { type: 'agent', id: 'trainer' } };
    const r = await post(evaluation.POST, '/access/v1/evaluation', other, deployer);
    expect(r.status).toBe(403);
    expect((await json(r)).error?.message).toMatch(/asks only about its own agent \("deployer"\)/);
    const byAdmin = await json(await post(evaluation.POST, '/access/v1/evaluation', { ...other, resource: { type: 'tool', id: 'train_model', properties: { agent: 'trainer' } } }, ADMIN));
    expect(byAdmin).toMatchObject({ decision: true, context: { rule_source: 'agent_allowlist' } });
  });

  it('takes the specification\'s shapes (properties, context) and refuses what does not map with a clear 400', async () => {
    // The example of AuthZEN 1.0 section 6: the shape parses; an "account" resource means nothing to this PDP.
    const example = {
      subject: { type: 'user', id: 'olivia', properties: { department: 'Sales' } },
      resource: { type: 'account', id: '123', properties: { library_record: { title: 'AuthZEN in Action', isbn: '978-0593383322' } } },
      action: { name: 'can_read', properties: { method: 'GET' } },
      context: { time: '1985-10-26T01:22-07:00' },
    };
    const r = await post(evaluation.POST, '/access/v1/evaluation', example, olivia);
    expect(r.status).toBe(400);
    expect((await json(r)).error?.message).toBe('resource.type "account" is not known here: use "tool" or "http".');
    const missing = await post(evaluation.POST, '/access/v1/evaluation', { subject: example.subject, action: example.action }, olivia);
    expect(missing.status).toBe(400);
    expect((await json(missing)).error?.issues?.map((i) => i.path)).toEqual(['resource']);
    const wrongAction = await post(evaluation.POST, '/access/v1/evaluation', { ...toolCall('monitor_drift'), action: { name: 'can_read' } }, deployer);
    expect((await json(wrongAction)).error?.message).toMatch(/does not apply to a tool/);
  });
});

describe('AuthZEN: POST /access/v1/evaluations', () => {
  const defaults = { subject: { type: 'agent', id: 'deployer' }, action: { name: 'call' } };
  const tool = (id: string, args: Record<string, unknown> = {}) => ({ resource: { type: 'tool', id, properties: { arguments: args } } });

  it('evaluates every entry in order with the request\'s defaults (execute_all)', async () => {
    const body = await json(
      await post(evaluations.POST, '/access/v1/evaluations', { ...defaults, evaluations: [tool('monitor_drift'), tool('train_model'), tool('rollback_serving', { env: 'staging' })] }, deployer),
    );
    expect((body.evaluations as { decision: boolean }[]).map((e) => e.decision)).toEqual([true, false, true]);
  });

  it('stops at the first denial (deny_on_first_deny) and at the first permit (permit_on_first_permit)', async () => {
    const entries = [tool('monitor_drift'), tool('train_model'), tool('rollback_serving', { env: 'staging' })];
    const deny = await json(await post(evaluations.POST, '/access/v1/evaluations', { ...defaults, evaluations: entries, options: { evaluations_semantic: 'deny_on_first_deny' } }, deployer));
    expect((deny.evaluations as { decision: boolean }[]).map((e) => e.decision)).toEqual([true, false]);
    const permit = await json(
      await post(evaluations.POST, '/access/v1/evaluations', { ...defaults, evaluations: [tool('train_model'), ...entries], options: { evaluations_semantic: 'permit_on_first_permit' } }, deployer),
    );
    expect((permit.evaluations as { decision: boolean }[]).map((e) => e.decision)).toEqual([false, true]);
  });

  it('is one evaluation without an evaluations array, and names the entry that does not map', async () => {
    const single = await json(await post(evaluations.POST, '/access/v1/evaluations', { ...defaults, ...tool('monitor_drift') }, deployer));
    expect(single).toMatchObject({ decision: true });
    const bad = await post(evaluations.POST, '/access/v1/evaluations', { subject: defaults.subject, evaluations: [{ ...tool('monitor_drift'), action: { name: 'call' } }, tool('monitor_drift')] }, deployer);
    expect(bad.status).toBe(400);
    expect((await json(bad)).error?.message).toBe('evaluations[1]: no action (neither in the entry nor as a default).');
    const semantic = await post(evaluations.POST, '/access/v1/evaluations', { ...defaults, evaluations: [tool('monitor_drift')], options: { evaluations_semantic: 'first_wins' } }, deployer);
    expect(semantic.status).toBe(400);
  });
});

describe('AuthZEN metadata', () => {
  it('names the endpoints under the public base URL', async () => {
    const r = await callRoute(configuration.GET, '/api/authzen/configuration', { headers: { host: 'pdp.example:8000', 'x-forwarded-proto': 'https' } });
    expect(await r.json()).toEqual({
      policy_decision_point: 'https://pdp.example:8000',
      access_evaluation_endpoint: 'https://pdp.example:8000/access/v1/evaluation',
      access_evaluations_endpoint: 'https://pdp.example:8000/access/v1/evaluations',
    });
  });
});
