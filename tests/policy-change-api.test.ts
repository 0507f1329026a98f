/**
 * The policy change control routes (issue 28) on the server's application with the bfsi profile (two admins other than
 * the proposer): a proposal uploaded as JSON, its problems at file:line:column, the roles, the proposer refused, the
 * activation by the second approval, a rollback proposal, and the list and history.
 */
import type { Server } from 'node:http';
import { sendJson } from './support/send';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTempServerEnv } from './support/in-process-api';

const server = useTempServerEnv('policy-change');
const { getApp, getSqliteApp } = await import('@/lib/app');
const { createRouteServer } = await import('./support/route-server');

interface Answer {
  status: number;
  body: Record<string, unknown> & { error?: { code: string; message: string; details?: { issues?: { file: string; line: number; column: number; message: string }[] }; issues?: unknown[] } };
}

let port = 0;
let upstream: Server;
const tokens: Record<string, string> = {};

const call = (method: string, path: string, token: string, body?: unknown) => sendJson<Answer['body']>(port, method, path, token, body);

beforeAll(async () => {
  const app = await getApp();
  for (const [name, role] of [['alice', 'admin'], ['bob', 'admin'], ['carol', 'admin'], ['olga', 'operator'], ['aldo', 'auditor']] as const) {
    await app.auth.createUser(name, role);
    tokens[name] = (await app.auth.issueToken({ username: name }, 'policy-change test')).token;
  }
  upstream = createRouteServer();
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
  port = (upstream.address() as AddressInfo).port;
}, 60_000);
afterAll(async () => {
  await new Promise((r) => upstream.close(r));
  upstream.closeAllConnections();
  await getSqliteApp().close();
  server.remove();
});

const DENY_DRIFT = 'rules:\n  - { id: no-drift-watch, decision: DENY, match: { agent: deployer, tool: monitor_drift }, reason: Watched elsewhere. }\n';

describe('policy change control over REST (SQLite, bfsi)', () => {
  it('refuses bad input with every problem at its place, and lets only admins propose', async () => {
    const bad = await call('POST', '/api/v1/policy/proposals', tokens.alice!, { message: 'x', files: { policy: 'rules:\n  - { id: y, decision: MAYBE }\n', gates: 'gates: 3\n' } });
    expect(bad.status).toBe(400);
    const issues = (bad.body.error?.details as { issues: { file: string; line: number }[] }).issues;
    expect(issues.map((i) => i.file)).toEqual(expect.arrayContaining(['proposed/permission_policies.yaml', 'proposed/gates.yaml']));
    expect(issues.every((i) => i.line >= 1)).toBe(true);
    expect((await call('POST', '/api/v1/policy/proposals', tokens.alice!, { files: { policy: DENY_DRIFT } })).status).toBe(400);
    expect((await call('POST', '/api/v1/policy/proposals', tokens.alice!, { message: 'x', files: {} })).status).toBe(400);
    expect((await call('POST', '/api/v1/policy/proposals', tokens.alice!, { message: 'x', files: { policy: DENY_DRIFT }, extra: 1 })).status).toBe(400);
    expect((await call('POST', '/api/v1/policy/proposals', tokens.olga!, { message: 'x', files: { policy: DENY_DRIFT } })).status).toBe(403);
    expect((await call('GET', '/api/v1/policy/proposals/prp_nosuchproposal', tokens.aldo!)).status).toBe(404);
    expect((await call('GET', '/api/v1/policy/proposals/not-an-id', tokens.aldo!)).status).toBe(400);
  });

  it('activates a proposal on the second approval by admins other than the proposer, and proposes a rollback', async () => {
    const made = await call('POST', '/api/v1/policy/proposals', tokens.alice!, { message: 'Drift is watched elsewhere', files: { policy: DENY_DRIFT } });
    expect(made.status).toBe(200);
    const id = made.body.id as string;
    expect(made.body).toMatchObject({ status: 'open', approvals_required: 2, proposed_by: 'alice', tests: { failed: 0 } });

    const detail = await call('GET', `/api/v1/policy/proposals/${id}`, tokens.aldo!);
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ stale: false, files: [{ name: 'permission_policies.yaml', after: DENY_DRIFT }] });

    const own = await call('POST', `/api/v1/policy/proposals/${id}/votes`, tokens.alice!, { vote: 'approve', reason: 'mine' });
    expect(own.status).toBe(403);
    expect((await call('POST', `/api/v1/policy/proposals/${id}/votes`, tokens.olga!, { vote: 'approve', reason: 'ok' })).status).toBe(403);
    expect((await call('POST', `/api/v1/policy/proposals/${id}/votes`, tokens.bob!, { vote: 'approve' })).status).toBe(400);
    const first = await call('POST', `/api/v1/policy/proposals/${id}/votes`, tokens.bob!, { vote: 'approve', reason: 'impact reviewed' });
    expect(first.body).toMatchObject({ status: 'open', activation: null });
    expect((await call('POST', `/api/v1/policy/proposals/${id}/votes`, tokens.bob!, { vote: 'approve', reason: 'again' })).status).toBe(409);
    const second = await call('POST', `/api/v1/policy/proposals/${id}/votes`, tokens.carol!, { vote: 'approve', reason: 'agreed' });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ status: 'activated', activation: 2, votes: [{ voter: 'bob' }, { voter: 'carol' }] });

    const list = await call('GET', '/api/v1/policy/proposals', tokens.aldo!);
    expect(list.body).toMatchObject({ change_control: { enforced: true, approvers: 2, roles: ['admin'], profiles: ['bfsi'] }, active: { seq: 2, proposal_id: id } });
    const history = await call('GET', '/api/v1/policy/activations', tokens.aldo!);
    const activations = history.body.activations as { kind: string; revision: string }[];
    expect(activations.map((a) => a.kind)).toEqual(['proposal', 'seed']);

    const back = await call('POST', '/api/v1/policy/rollback', tokens.bob!, { revision: activations[1]!.revision, message: 'Back to the seed' });
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({ kind: 'rollback', status: 'open', proposed_by: 'bob' });
    expect((await call('POST', '/api/v1/policy/rollback', tokens.bob!, { revision: 'rev_0123', message: 'x' })).status).toBe(400);
    const withdrawn = await call('POST', `/api/v1/policy/proposals/${back.body.id as string}/withdraw`, tokens.bob!, { reason: 'not needed' });
    expect(withdrawn.body).toMatchObject({ status: 'withdrawn' });

    // A file is removed by proposing null for it: the diff shows it gone.
    const removal = await call('POST', '/api/v1/policy/proposals', tokens.bob!, { message: 'No gates of our own', files: { gates: null } });
    expect(removal.status).toBe(200);
    const removed = await call('GET', `/api/v1/policy/proposals/${removal.body.id as string}`, tokens.aldo!);
    expect(removed.body.files).toEqual([{ name: 'gates.yaml', key: 'gates', before: expect.stringContaining('gates:'), after: null }]);
  });
});
