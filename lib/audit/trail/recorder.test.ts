/**
 * The one recorder against a real application: what is recorded, with which decision id and policy revision, that a
 * decision which cannot be recorded is refused, and that writers in several processes still form one chain.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { tempApp, type TempApp } from '@/lib/test-support/temp-app';
import { ApprovalRequired, AuditUnavailable, PermissionDenied, type CheckInput } from '@/lib/permissions';
import { step } from '@/db/dialect';
import { archiveBefore, archivedEvent, verifyBundle } from './archive';
import { keyDirFor, loadOrCreateSigningKey, trustedVerifierKeys } from './checkpoints';
import { explainDecision } from '../explain';
import { verifyAudit } from './verify';

let t: TempApp | undefined;
afterEach(() => {
  t?.cleanup();
  t = undefined;
});

const call = (agent: string, tool: string, args: Record<string, unknown> = {}): CheckInput => ({
  kind: 'tool',
  principal: { kind: 'agent', id: agent, role: 'viewer', agent },
  agent,
  tool,
  arguments: args,
});
const verifyNow = (app: TempApp) => {
  const ro = new Database(app.dbPath, { readonly: true });
  try {
    return verifyAudit(ro, trustedVerifierKeys(keyDirFor(app.dbPath, {}), {}));
  } finally {
    ro.close();
  }
};

describe('decision ids and policy revisions', () => {
  it('gives a denial one decision id, carried by PermissionDenied and written on the row', async () => {
    t = tempApp();
    let denied: PermissionDenied | undefined;
    try {
      t.app.engine.enforce(call('data_cleaner', 'deploy_serving', { model_id: 'm', env: 'prod' }));
    } catch (e) {
      denied = e as PermissionDenied;
    }
    expect(denied).toBeInstanceOf(PermissionDenied);
    expect(denied!.decisionId).toMatch(/^[0-9a-f-]{36}$/);
    const [row] = (await t.app.denials.query({ limit: 1 })).rows;
    expect(row!.decisionId).toBe(denied!.decisionId);
  });

  it('joins an asked call, its request, its approvals and its rejection by the decision id', async () => {
    t = tempApp();
    let asked: ApprovalRequired | undefined;
    try {
      t.app.engine.enforce(call('deployer', 'deploy_serving', { model_id: 'm', env: 'prod' }));
    } catch (e) {
      asked = e as ApprovalRequired;
    }
    const id = asked!.decisionId!;
    await t.app.approvals.reject(asked!.approvalId, { id: 'olivia', role: 'operator' }, 'Not now');
    expect((await t.app.approvals.get(asked!.approvalId))!.decisionId).toBe(id);
    expect((await t.app.securityEvents.list({ decisionId: id })).rows.map((e) => e.type).sort()).toEqual(['approval.rejected', 'approval.requested']);
    expect((await t.app.denials.query({ ruleSource: 'hitl:deploy' })).rows[0]!.decisionId).toBe(id);
  });

  it('records the policy revision in force, keeps its content once, and changes it with the policy', async () => {
    t = tempApp();
    t.app.engine.decide(call('data_cleaner', 'deploy_serving'));
    const first = (await t.app.denials.query({ limit: 1 })).rows[0]!.policyRevision!;
    writeFileSync(t.policyPath, 'rules:\n  - { id: no-profiling, decision: DENY, match: { tool: profile_dataset } }\n');
    expect(t.app.policyFile.reload(true)).toBe(true);
    t.app.engine.decide(call('data_cleaner', 'profile_dataset'));
    const second = (await t.app.denials.query({ limit: 1 })).rows[0]!.policyRevision!;
    expect(second).not.toBe(first);
    expect((await t.app.revisions.get(second))!.files.policy).toContain('no-profiling');
    expect((await t.app.revisions.get(first))!.files.policy).toBe('rules: []\n');
  });
});

describe('what is recorded', () => {
  it('records allowed and asked decisions only while decision_log_all is on', async () => {
    t = tempApp();
    t.app.engine.decide(call('data_cleaner', 'profile_dataset', { dataset_id: 'd' }));
    expect(await t.app.securityEvents.ofType('decision')).toHaveLength(0);
    await t.app.flags.setOverride('decision_log_all', true, 'ada', 'audit season');
    await t.app.flags.invalidate();
    const allowed = t.app.engine.decide(call('data_cleaner', 'profile_dataset', { dataset_id: 'd', contact: 'dpo@bank.example' }));
    const [event] = await t.app.securityEvents.ofType('decision.allowed');
    expect(event).toMatchObject({ decisionId: allowed.decisionId, actor: 'agent:data_cleaner', target: 'data_cleaner profile_dataset' });
    const detail = JSON.parse(event!.detailJson!) as { rule_source: string; masked_paths: string[]; arguments: Record<string, string> };
    expect(detail).toMatchObject({ rule_source: 'agent_allowlist', masked_paths: ['contact'] });
    expect(detail.arguments.contact).not.toContain('dpo@');
    expect(detail).toMatchObject({ arguments: { dataset_id: 'd' }, approval_id: null, reason: allowed.reason });
    expect((detail as unknown as { trace: unknown[][] }).trace).toContainEqual(['ALLOW', expect.any(Number), 'agent_allowlist', expect.any(String)]);
  });

  it('records every approval transition: requested, approved (with the count), consumed', async () => {
    t = tempApp();
    const asked = t.app.engine.decide(call('deployer', 'deploy_serving', { model_id: 'm', env: 'prod' }));
    await t.app.approvals.approve(asked.approvalId!, { id: 'olivia', role: 'operator' });
    t.app.engine.decide(call('deployer', 'deploy_serving', { model_id: 'm', env: 'prod' }));
    const types = (await t.app.securityEvents.ofType('approval')).map((e) => e.type).reverse();
    expect(types).toEqual(['approval.requested', 'approval.approved', 'approval.consumed']);
    const approved = (await t.app.securityEvents.ofType('approval.approved'))[0]!;
    expect(approved).toMatchObject({ actor: 'olivia', actorRole: 'operator', target: asked.approvalId });
    expect(JSON.parse(approved.detailJson!)).toMatchObject({ approvals_given: 1, approvals_required: 1, complete: true });
  });

  it('records every refused attempt to decide: the requester, a role the gate does not name, a second vote by one person', async () => {
    t = tempApp({ gates: 'gates:\n  - id: deploy\n    tools: [deploy_serving]\n    approvers: { roles: [operator, admin], count: 2 }\n' });
    const asked = t.app.engine.decide(call('deployer', 'deploy_serving', { model_id: 'm', env: 'prod' }));
    const id = asked.approvalId!;
    const requester = (await t.app.approvals.get(id))!.requestedBy;
    await expect(t!.app.approvals.approve(id, { id: requester, role: 'operator' })).rejects.toThrow(/Separation of duties/);
    await expect(t!.app.approvals.approve(id, { id: 'alex', role: 'auditor' })).rejects.toThrow(/decided by operator or admin/);
    await t.app.approvals.approve(id, { id: 'olivia', role: 'operator' });
    await expect(t!.app.approvals.approve(id, { id: 'olivia', role: 'operator' })).rejects.toThrow(/two-person rule/);
    const refused = (await t.app.securityEvents.ofType('approval.refused')).reverse();
    expect(refused.map((e) => [e.actor, e.outcome, (JSON.parse(e.detailJson!) as { refusal: string }).refusal])).toEqual([
      [requester, 'refused', 'self_decision'],
      ['alex', 'refused', 'role_not_allowed'],
      ['olivia', 'refused', 'second_vote_by_same_person'],
    ]);
    // Nothing of a refused attempt took effect: one vote, still pending.
    expect(await t.app.approvals.get(id)).toMatchObject({ status: 'pending' });
  });

  it('records users and tokens created, roles changed and tokens revoked, with who did it', async () => {
    t = tempApp();
    await t.app.auth.createUser('alex', 'auditor', undefined, 'cli:root');
    await t.app.auth.setRole('alex', 'operator', 'cli:root');
    await t.app.auth.createToken({ username: 'alex' }, 'laptop', 'cli:root');
    const [token] = await t.app.auth.listTokens();
    await t.app.auth.revokeToken(token!.id, 'cli:root');
    expect(await t.app.auth.principalForToken('nope')).toBeUndefined();
    const events = (await t.app.securityEvents.list({ actor: 'cli:root' })).rows.map((e) => [e.type, e.target]);
    expect(events.reverse()).toEqual([
      ['user.created', 'alex'],
      ['user.role_changed', 'alex'],
      ['token.created', String(token!.id)],
      ['token.revoked', String(token!.id)],
    ]);
  });
});

describe('security event queries', () => {
  it('filters a type family by its prefix, literally (an underscore is not a wildcard)', async () => {
    t = tempApp();
    t.app.recorder.appendEvent({ type: 'a_b.c', actor: 'x', outcome: 'succeeded' });
    t.app.recorder.appendEvent({ type: 'axb.c', actor: 'x', outcome: 'succeeded' });
    t.app.recorder.appendEvent({ type: 'a_b', actor: 'x', outcome: 'succeeded' });
    expect((await t.app.securityEvents.list({ type: 'a_b' })).rows.map((e) => e.type).sort()).toEqual(['a_b', 'a_b.c']);
    expect((await t.app.securityEvents.list({ type: 'axb.c' })).rows.map((e) => e.type)).toEqual(['axb.c']);
  });
});

describe('failing closed', () => {
  it('refuses a decision that cannot be recorded: an allowed call does not run, a denial is not acknowledged', async () => {
    t = tempApp();
    await t.app.flags.setOverride('decision_log_all', true, 'ada', 'audit season');
    await t.app.flags.invalidate();
    t.app.flags.values();
    // The database refuses writes from now on (a full disk, a lost volume, a read-only mount).
    t.app.db.$client.pragma('query_only = ON');
    expect(() => t!.app.engine.enforce(call('data_cleaner', 'profile_dataset', { dataset_id: 'd' }))).toThrow(AuditUnavailable);
    expect(() => t!.app.engine.enforce(call('data_cleaner', 'deploy_serving'))).toThrow(AuditUnavailable);
    t.app.db.$client.pragma('query_only = OFF');
  });
});

describe('one chain from several processes', () => {
  it('keeps one intact chain when three processes record denials at the same time', async () => {
    t = tempApp();
    t.app.engine.decide(call('data_cleaner', 'deploy_serving'));
    const startAt = Date.now() + 2000;
    const writer = (n: number) =>
      new Promise<void>((resolve, reject) => {
        const p = spawn(process.execPath, ['--import', 'tsx', 'tests/fixtures/record-denials.ts', t!.dbPath, t!.dir, String(n)], {
          env: { ...process.env, RACE_START_AT: String(startAt) },
        });
        let err = '';
        p.stderr.on('data', (d: Buffer) => (err += d.toString()));
        p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(err))));
      });
    await Promise.all([writer(150), writer(150), writer(150)]);
    const r = verifyNow(t);
    expect(r.ok).toBe(true);
    expect(r.chains.find((c) => c.chain === 'permission_denials')!.rowsChecked).toBe(451);
  }, 60_000);
});

describe('swarm audit explain', () => {
  it('re-runs a denial under the revision it was made under, and says today\'s policy decides differently', async () => {
    t = tempApp({ policy: 'rules:\n  - { id: no-profiling, decision: DENY, match: { tool: profile_dataset } }\n' });
    const denied = t.app.engine.decide(call('data_cleaner', 'profile_dataset', { dataset_id: 'd' }));
    writeFileSync(t.policyPath, 'rules: []\n');
    expect(t.app.policyFile.reload(true)).toBe(true);
    const e = await explainDecision(t.app, denied.decisionId!);
    expect(e.recorded).toMatchObject({ decision: 'DENY', rule_source: 'policy:no-profiling' });
    expect(e.at_the_time).toMatchObject({ decision: 'DENY', rule_source: 'policy:no-profiling', same: true });
    expect(e.today).toMatchObject({ decision: 'ALLOW', rule_source: 'agent_allowlist', same: false });
  });
});

describe('swarm audit archive', () => {
  it('moves older rows into a signed bundle that verifies, and the rest still verifies from where it starts', async () => {
    t = tempApp();
    const old = Date.now() / 1000 - 400 * 86400;
    for (let i = 0; i < 5; i++) t.app.recorder.appendDenial({ toolName: 'x', ruleSource: 'default', reason: `old ${i}`, timestamp: old + i });
    for (let i = 0; i < 3; i++) t.app.engine.decide(call('data_cleaner', 'deploy_serving', { n: i }));
    t.app.checkpointAudit();
    const key = loadOrCreateSigningKey(keyDirFor(t.dbPath, {}));
    const file = `${t.dir}/archive.ndjson`;
    const r = await archiveBefore(t.app.database, key, old + 100, file, (res, tx) => step(t!.app.recorder.recordWithin(tx, archivedEvent(res, 'test'))));
    expect(r.chains.find((c) => c.chain === 'permission_denials')).toMatchObject({ rows: 5, fromId: 1, upToId: 5 });
    expect((await t.app.denials.query({ limit: 100 })).rows.map((d) => d.id).sort()).toEqual([6, 7, 8]);
    const verifier = trustedVerifierKeys(keyDirFor(t.dbPath, {}), {})!;
    const text = readFileSync(file, 'utf8');
    expect(verifyBundle(text, verifier)).toEqual({ ok: true, rows: { permission_denials: 5 } });
    expect(verifyBundle(text.replace('old 2', 'old 9'), verifier)).toMatchObject({ ok: false, problem: 'permission_denials: row 3 was changed' });
    const after = verifyNow(t);
    expect(after.ok).toBe(true);
    expect(after.chains.find((c) => c.chain === 'permission_denials')).toMatchObject({ rowsChecked: 3, archivedUpTo: 5 });
    // the triggers are back: nothing else deletes
    expect(() => t!.app.db.$client.prepare('DELETE FROM permission_denials').run()).toThrow(/append-only/);
  });
});
