/**
 * Policy change control on both databases, with two applications on one database standing for two servers: the
 * seed, a proposal with its impact and tests, votes (the proposer refused, two admins needed), activation heard by
 * the other server within a second, drift, a failing test that blocks approval, a stale proposal, a rollback proposal,
 * an emergency rollback, and an activation row written behind the service's back refused.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { openApp, type App } from '@/lib/app';
import type { CheckInput } from '@/lib/permissions';
import { TEST_AGENTS, TEST_APPROVAL_KEY } from '@/lib/test-support/temp-app';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { within } from '@/lib/test-support/wait';
import { AppError } from '@/lib/errors';
import { readRuleFolder } from './files';
import { revisionOf } from '@/lib/audit/revisions';
import { execFileSync } from 'node:child_process';
import { buildReport } from '@/lib/reports/generate';
import { explainDecision } from '@/lib/audit/explain';

const pg15 = usePostgres();
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const SEED_POLICY = 'rules: []\n';
const DENY_DRIFT = 'rules:\n  - { id: no-drift-watch, decision: DENY, match: { tool: monitor_drift }, reason: drift is watched elsewhere }\n';

const call = (agent: string, tool: string): CheckInput => ({ kind: 'tool', principal: { kind: 'agent', id: agent, role: 'viewer', agent }, agent, tool, arguments: {} });
const alice = { id: 'alice', role: 'admin' as const };
const bob = { id: 'bob', role: 'admin' as const };
const carol = { id: 'carol', role: 'admin' as const };
const olivia = { id: 'olivia', role: 'operator' as const };

function configFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'swarm-change-control-'));
  writeFileSync(join(dir, 'agents.yaml'), TEST_AGENTS);
  writeFileSync(join(dir, 'permission_policies.yaml'), SEED_POLICY);
  writeFileSync(join(dir, 'policy_tests.yaml'), 'tests: []\n');
  cpSync('config/profiles', join(dir, 'profiles'), { recursive: true });
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function twoServers(kind: 'SQLite' | 'PostgreSQL'): Promise<{ a: App; b: App; dirA: string; dirB: string; dbPath: string }> {
  const dirA = configFolder();
  const dirB = configFolder();
  const dbPath = kind === 'SQLite' ? join(dirA, 'cc.db') : pg15.cluster.urlOf(await pg15.freshDatabase('cc'));
  const open = async (dir: string) => {
    const env = { SWARM_APPROVAL_KEY: TEST_APPROVAL_KEY, SWARM_PROFILE: 'bfsi' };
    const app = await openApp({ dbPath, configDir: dir, env, profile: 'bfsi', watchConfig: true });
    cleanups.push(() => app.close());
    return app;
  };
  const a = await open(dirA);
  const b = await open(dirB);
  return { a, b, dirA, dirB, dbPath };
}

/** Why an activation written behind the service's back is not loaded. */
const SEALLESS = "it does not carry its seal (it was written behind the service's back)";

const decisionOf = async (app: App, tool = 'monitor_drift') => (await app.decisions.authorize(call('deployer', tool))).decision;

async function refusal(p: Promise<unknown>): Promise<AppError> {
  const e = await p.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(e).toBeInstanceOf(AppError);
  return e as AppError;
}

describe.each(['SQLite', 'PostgreSQL'] as const)('policy change control on %s', (kind) => {
  it('changes the rules only through a proposal two other admins approve, on both servers within a second', async () => {
    const { a, b, dirA, dirB } = await twoServers(kind);
    // One seed, whichever server started first.
    expect((await a.changeControl.store.activations()).map((x) => x.kind)).toEqual(['seed']);
    expect(a.changeControl.active?.revision).toBe(b.changeControl.active?.revision);
    expect(await decisionOf(a)).toBe('ALLOW');
    await a.decisions.decide(call('deployer', 'monitor_drift'));

    // A proposal from a folder: compiled, tested, its impact replayed from the recorded calls.
    const proposed = mkdtempSync(join(tmpdir(), 'swarm-proposed-'));
    cleanups.push(() => rmSync(proposed, { recursive: true, force: true }));
    cpSync(join(dirA, 'agents.yaml'), join(proposed, 'agents.yaml'));
    writeFileSync(join(proposed, 'permission_policies.yaml'), DENY_DRIFT);
    const p = await a.changeControl.propose({ texts: readRuleFolder(proposed), message: 'Drift is watched by the platform team', by: alice });
    expect(p).toMatchObject({ status: 'open', approvalsRequired: 2, approverRoles: ['admin'], tests: { failed: 0 } });
    expect(p.impact.replayed).toBeGreaterThanOrEqual(1);
    expect(p.impact.by_direction.newly_denied).toBeGreaterThanOrEqual(1);
    const detail = await b.changeControl.detail(p.id);
    expect(detail.files.map((f) => f.name)).toEqual(['permission_policies.yaml']);
    expect(detail.files[0]).toMatchObject({ before: SEED_POLICY, after: DENY_DRIFT });
    expect(detail.stale).toBe(false);

    // The proposer cannot approve; an operator may not vote; each refusal is recorded.
    expect((await refusal(a.changeControl.vote(p.id, alice, 'approve', 'mine'))).code).toBe('FORBIDDEN');
    expect((await refusal(a.changeControl.vote(p.id, olivia, 'approve', 'ok'))).code).toBe('FORBIDDEN');
    const refused = await a.database.all<{ actor: string }>(sql`SELECT actor FROM security_events WHERE type = 'policy.refused' ORDER BY id`);
    expect(refused.map((r) => r.actor)).toEqual(['alice', 'olivia']);

    // One approval of two: nothing changes yet.
    expect((await b.changeControl.vote(p.id, bob, 'approve', 'reviewed the impact')).proposal.status).toBe('open');
    expect((await refusal(a.changeControl.vote(p.id, bob, 'approve', 'again'))).code).toBe('CONFLICT');
    expect(await decisionOf(a)).toBe('ALLOW');

    // The second activates it; the other server enforces it within a second.
    const started = Date.now();
    const done = await a.changeControl.vote(p.id, carol, 'approve', 'agreed');
    expect(done.proposal.status).toBe('activated');
    expect(await decisionOf(a)).toBe('DENY');
    const waited = await within(1_000, async () => (await decisionOf(b)) === 'DENY');
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(waited).toBeLessThan(1_000);
    expect((await b.decisions.authorize(call('deployer', 'monitor_drift'))).ruleSource).toBe('policy:no-drift-watch');
    // explain names the proposal that brought in the rule that decided a call.
    const denied = await b.decisions.decide(call('deployer', 'monitor_drift'));
    const explained = await explainDecision(b, denied.decisionId!);
    expect(explained.recorded.rule_source).toBe('policy:no-drift-watch');
    expect(explained.introduced_by).toMatchObject({ proposal_id: p.id, proposed_by: 'alice', message: 'Drift is watched by the platform team', kind: 'proposal' });
    const allowedFairness = await explainDecision(b, (await b.decisions.decide(call('deployer', 'fairness_audit'))).decisionId!);
    expect(allowedFairness.introduced_by).toMatchObject({ proposal_id: null, kind: 'seed' });

    const votes = await a.database.all<{ type: string }>(sql`SELECT type FROM security_events WHERE type LIKE 'policy.%' ORDER BY id`);
    expect(votes.map((v) => v.type)).toEqual(['policy.activated', 'policy.proposed', 'policy.refused', 'policy.refused', 'policy.voted', 'policy.refused', 'policy.voted', 'policy.activated']);

    // The file on disk is now drift on both servers: shown, recorded, never loaded.
    expect(a.configStatus().find((s) => s.path.endsWith('permission_policies.yaml'))).toMatchObject({ pinned: true, drift: true });
    const driftOfB = async () => b.database.all(sql`SELECT id FROM security_events WHERE type = 'config.drift' AND target = ${join(dirB, 'permission_policies.yaml')}`);
    // The seed's file, left on B's disk, is drift from the activation on: recorded once.
    await within(2_000, async () => (await driftOfB()).length === 1);
    writeFileSync(join(dirB, 'permission_policies.yaml'), 'rules:\n  - { id: sneaky, decision: ALLOW, match: { tool: "*" } }\n');
    b.policyFile.reload();
    expect(await decisionOf(b)).toBe('DENY');
    await within(2_000, async () => (await driftOfB()).length === 2);
    // The same version written again (a new modification time) is the same drift: not recorded twice.
    const sneaky = 'rules:\n  - { id: sneaky, decision: ALLOW, match: { tool: "*" } }\n';
    writeFileSync(join(dirB, 'permission_policies.yaml'), sneaky);
    b.policyFile.reload();
    // A third version, written after it, is recorded: once it is, the rewrite before it has had its say.
    writeFileSync(join(dirB, 'permission_policies.yaml'), `${sneaky}# third\n`);
    b.policyFile.reload();
    await within(2_000, async () => (await driftOfB()).length >= 3);
    expect(await driftOfB()).toHaveLength(3);

    // A rollback is a proposal too, with its impact; approved by two, it restores the seed.
    const seed = (await a.changeControl.store.activations()).find((x) => x.kind === 'seed')!;
    const back = await b.changeControl.proposeRollback(seed.revision, 'Back to the seed', bob);
    expect(back).toMatchObject({ kind: 'rollback', status: 'open' });
    expect(back.impact.by_direction.newly_allowed).toBeGreaterThanOrEqual(0);
    await a.changeControl.vote(back.id, alice, 'approve', 'ok');
    await a.changeControl.vote(back.id, carol, 'approve', 'ok');
    await within(1_000, async () => (await decisionOf(a)) === 'ALLOW' && (await decisionOf(b)) === 'ALLOW');

    // An emergency rollback through the break-glass path: at once, recorded as such.
    const activated = (await a.changeControl.store.activations()).find((x) => x.kind === 'proposal' && x.proposalId === p.id)!;
    const emergency = await a.changeControl.emergencyRollback(activated.revision, 'incident 42', { id: 'cli:root', role: 'admin' });
    expect(emergency.proposal).toMatchObject({ emergency: true, status: 'activated' });
    await within(1_000, async () => (await decisionOf(b)) === 'DENY');
    const rolled = await a.database.one<{ detailJson: string }>(sql`SELECT detail_json AS "detailJson" FROM security_events WHERE type = 'policy.rolled_back'`);
    expect(JSON.parse(rolled!.detailJson)).toMatchObject({ emergency: true, activation: emergency.activation });

    // The compliance report lists each activation with its approvers and its impact.
    const now = Date.now() / 1000;
    const report = await buildReport(a, { period: { from: now - 3600, to: now + 60 }, format: 'pdf', generatedBy: { actor: 'alex', role: 'auditor' } });
    const rows = report.data.changes.ruleChanges.rows;
    expect(rows.map((r) => r.kind)).toEqual(['seed', 'change', 'rollback', 'emergency rollback']);
    expect(rows[1]).toMatchObject({ proposal: p.id, proposedBy: 'alice', approvers: ['bob', 'carol'], message: 'Drift is watched by the platform team' });
    expect(rows[1]!.impact!.newlyDenied).toBeGreaterThanOrEqual(1);
    const pdf = join(dirA, 'report.pdf');
    writeFileSync(pdf, report.bytes);
    const text = execFileSync('pdftotext', ['-layout', pdf, '-'], { encoding: 'utf8' }).replace(/\s+/g, ' ');
    expect(text).toMatch(/Changes to the rules Change control is enforced \(2 approvers \(admin\) other than the proposer, by bfsi\)/);
    expect(text).toMatch(/change alice: Drift is watched by the bob, carol/);
    expect(text).toMatch(/emergency cli:root: incident 42 none \(break-glass/);
    expect(text).toMatch(/Configuration loads, drift, profile switches and MCP tool definitions .* permission_policies\.yaml differs from the active revision rev_/);
  });

  it('refuses to approve a proposal whose tests fail, or one made against rules no longer in force', async () => {
    const { a, dirA } = await twoServers(kind);
    const texts = readRuleFolder(dirA);
    const failing = await a.changeControl.propose({
      texts: { ...texts, policy: DENY_DRIFT },
      message: 'deny drift',
      by: alice,
      tests: { files: ['t.yaml'], cases: [{ name: 'drift stays allowed', position: 't.yaml:1:1', input: { agent: 'deployer', tool: 'monitor_drift', arguments: {}, flags: {}, approval: 'none' }, expect: { decision: 'ALLOW' } }] as never },
    });
    expect(failing.tests).toMatchObject({ failed: 1 });
    expect((await refusal(a.changeControl.vote(failing.id, bob, 'approve', 'ok'))).message).toMatch(/tests fail/);

    const one = await a.changeControl.propose({ texts: { ...texts, policy: DENY_DRIFT }, message: 'one', by: alice });
    const two = await a.changeControl.propose({ texts: { ...texts, policy: 'rules:\n  - { id: x, decision: DENY, match: { tool: fairness_audit } }\n' }, message: 'two', by: alice });
    await a.changeControl.vote(one.id, bob, 'approve', 'ok');
    await a.changeControl.vote(one.id, carol, 'approve', 'ok');
    expect((await a.changeControl.detail(two.id)).stale).toBe(true);
    expect((await refusal(a.changeControl.vote(two.id, bob, 'approve', 'ok'))).message).toMatch(/changed since/);
    // Nothing to change, and a file that does not compile, are refused before anything is stored.
    expect((await refusal(a.changeControl.propose({ texts: a.ruleTexts(), message: 'same', by: alice }))).message).toMatch(/Nothing changes/);
    const bad = await refusal(a.changeControl.propose({ texts: { ...texts, policy: 'rules:\n  - { id: y, decision: MAYBE }\n' }, message: 'bad', by: alice }));
    expect(bad.code).toBe('BAD_REQUEST');
    expect(JSON.stringify(bad.details)).toMatch(/permission_policies\.yaml/);
  });

  it('never loads an activation the audit trail does not record', async () => {
    const { a, b } = await twoServers(kind);
    const seed = a.changeControl.active!;
    // Someone with the database stores a permissive revision, hashed as the product would, and activates it behind
    // the service's back; then a second whose content does not hash to its id.
    const content = { files: { agents: TEST_AGENTS, policy: 'rules:\n  - { id: all, decision: ALLOW, match: { tool: "*" } }\n', gates: null, policy_file: 'p' }, flags: {} };
    const forged = revisionOf(content);
    await a.database.run(sql`INSERT INTO policy_revisions (revision, content_json, first_seen_at) VALUES (${forged}, ${JSON.stringify(content)}, 1)`);
    const nextSeq = async () => Number((await a.database.all<{ n: number }>(sql`SELECT max(seq) + 1 AS n FROM policy_activations`))[0]!.n);
    await a.database.run(sql`INSERT INTO policy_activations (seq, revision, proposal_id, kind, activated_by, activated_at) VALUES (${await nextSeq()}, ${forged}, NULL, 'proposal', 'mallory', 1)`);
    await a.changeControl.sync();
    await b.changeControl.sync();
    expect(a.changeControl.active?.revision).toBe(seed.revision);
    expect(b.changeControl.active?.revision).toBe(seed.revision);
    const problems = async () =>
      (await a.database.all<{ detailJson: string }>(sql`SELECT detail_json AS "detailJson" FROM security_events WHERE type = 'policy.unverified'`)).map(
        (r) => (JSON.parse(r.detailJson) as { problem: string }).problem,
      );
    await within(2_000, async () => (await problems()).length >= 2);
    // (It carries no seal: nothing else of it is asked.)
    expect(await problems()).toEqual([SEALLESS, SEALLESS]);

    await a.database.run(sql`INSERT INTO policy_revisions (revision, content_json, first_seen_at) VALUES ('rev_forged', ${JSON.stringify(content)}, 1)`);
    await a.database.run(sql`INSERT INTO policy_activations (seq, revision, proposal_id, kind, activated_by, activated_at) VALUES (${await nextSeq()}, 'rev_forged', NULL, 'proposal', 'mallory', 1)`);
    await a.changeControl.sync();
    expect(a.changeControl.active?.revision).toBe(seed.revision);
    // A forged activation of a corrupt revision is passed over too (only a sealed one stops decisions).
    await within(2_000, async () => (await problems()).length >= 3);
    expect(await problems()).toEqual([SEALLESS, SEALLESS, SEALLESS]);
    expect(await decisionOf(a, 'deploy_serving')).not.toBe('ALLOW');

    // A server that starts after the forgery takes the newest sound activation, not the files on its disk.
    const dirC = configFolder();
    writeFileSync(join(dirC, 'permission_policies.yaml'), DENY_DRIFT);
    const c = await openApp({ dbPath: a.options.dbPath, configDir: dirC, env: { SWARM_APPROVAL_KEY: TEST_APPROVAL_KEY, SWARM_PROFILE: 'bfsi' }, profile: 'bfsi', watchConfig: true });
    cleanups.push(() => c.close());
    expect(c.changeControl.active?.revision).toBe(seed.revision);
    expect(await decisionOf(c)).toBe('ALLOW');

    // A vote written into policy_votes in someone's name counts for nothing: one real approval of two stays one.
    const p = await a.changeControl.propose({ texts: { ...a.ruleTexts(), policy: DENY_DRIFT }, message: 'deny drift', by: alice });
    await a.database.run(sql`INSERT INTO policy_votes (proposal_id, voter, voter_role, vote, reason, voted_at) VALUES (${p.id}, 'bob', 'admin', 'approve', 'forged', 1)`);
    const after = await a.changeControl.vote(p.id, carol, 'approve', 'real');
    expect(after.proposal.status).toBe('open');
    expect(after.activation).toBeUndefined();
    const forgedVotes = await a.database.all<{ detailJson: string }>(sql`SELECT detail_json AS "detailJson" FROM security_events WHERE type = 'policy.unverified' AND target = ${p.id}`);
    expect(forgedVotes.map((r) => (JSON.parse(r.detailJson) as { voters: string[] }).voters)).toEqual([['bob']]);
    expect(await decisionOf(a)).toBe('ALLOW');
  });

  it('counts votes cast at the same moment on two servers once: one activation, the vote after it refused', async () => {
    const { a, b } = await twoServers(kind);
    const p = await a.changeControl.propose({ texts: { ...a.ruleTexts(), policy: DENY_DRIFT }, message: 'deny drift', by: alice });
    const dave = { id: 'dave', role: 'admin' as const };
    const outcomes = await Promise.allSettled([
      a.changeControl.vote(p.id, bob, 'approve', 'from A'),
      b.changeControl.vote(p.id, carol, 'approve', 'from B'),
      b.changeControl.vote(p.id, dave, 'approve', 'from B too'),
    ]);
    const done = outcomes.filter((o) => o.status === 'fulfilled').map((o) => (o as PromiseFulfilledResult<Awaited<ReturnType<App['changeControl']['vote']>>>).value);
    const refused = outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason as AppError);
    expect(done).toHaveLength(2);
    expect(done.filter((d) => d.activation !== undefined)).toHaveLength(1);
    expect(refused.map((e) => e.code)).toEqual(['CONFLICT']);
    const activations = await a.changeControl.store.activations();
    expect(activations.filter((x) => x.proposalId === p.id)).toHaveLength(1);
    await within(1_000, async () => (await decisionOf(a)) === 'DENY' && (await decisionOf(b)) === 'DENY');
  });

  it('records a compliance profile whose files differ from those of the active revision as drift', async () => {
    const dirA = configFolder();
    const dirB = configFolder();
    const dbPath = kind === 'SQLite' ? join(dirA, 'profiles.db') : pg15.cluster.urlOf(await pg15.freshDatabase('profiles'));
    const env = { SWARM_APPROVAL_KEY: TEST_APPROVAL_KEY, SWARM_PROFILE: 'bfsi' };
    const a = await openApp({ dbPath, configDir: dirA, env, profile: 'bfsi', watchConfig: true });
    cleanups.push(() => a.close());
    // B's copy of the profile was edited on its disk: B starts with it (profiles are read at start), and says so.
    const file = join(dirB, 'profiles', 'bfsi', 'profile.yaml');
    writeFileSync(file, `${readFileSync(file, 'utf8')}\n# edited on this server only\n`);
    const b = await openApp({ dbPath, configDir: dirB, env, profile: 'bfsi', watchConfig: true });
    cleanups.push(() => b.close());
    const drift = async () =>
      (await a.database.all<{ detailJson: string }>(sql`SELECT detail_json AS "detailJson" FROM security_events WHERE type = 'config.drift' AND target = 'profiles'`)).map(
        (r) => JSON.parse(r.detailJson) as { profiles: string[]; active_revision: string },
      );
    await within(2_000, async () => (await drift()).length >= 1);
    expect(await drift()).toEqual([{ profiles: ['bfsi'], active_revision: a.changeControl.active!.revision }]);
  });

  it('is an advisory review without a profile that asks for it: the files on disk stay the rules', async () => {
    const dir = configFolder();
    const dbPath = kind === 'SQLite' ? join(dir, 'advisory.db') : pg15.cluster.urlOf(await pg15.freshDatabase('advisory'));
    const app = await openApp({ dbPath, configDir: dir, env: { SWARM_APPROVAL_KEY: TEST_APPROVAL_KEY, SWARM_PROFILE: '' }, profile: '', watchConfig: true });
    cleanups.push(() => app.close());
    expect(app.changeControl.enforced).toBe(false);
    expect(await app.changeControl.store.activations()).toEqual([]);
    const p = await app.changeControl.propose({ texts: { ...app.ruleTexts(), policy: DENY_DRIFT }, message: 'deny drift', by: alice });
    expect(p).toMatchObject({ approvalsRequired: 1, approverRoles: ['admin'] });
    expect((await refusal(app.changeControl.vote(p.id, alice, 'approve', 'mine'))).code).toBe('FORBIDDEN');
    const done = await app.changeControl.vote(p.id, bob, 'approve', 'deploy it');
    expect(done).toMatchObject({ proposal: { status: 'approved' }, activation: undefined });
    expect(await decisionOf(app)).toBe('ALLOW');
    expect(await app.changeControl.store.activations()).toEqual([]);
    // The file on disk is the rules, as before: edited, it is loaded.
    writeFileSync(join(dir, 'permission_policies.yaml'), DENY_DRIFT);
    expect(app.policyFile.reload(true)).toBe(true);
    expect(await decisionOf(app)).toBe('DENY');
    expect(app.configStatus().find((f) => f.path.endsWith('permission_policies.yaml'))).toMatchObject({ pinned: false, drift: false });
    await expect(refusal(app.changeControl.proposeRollback('rev_00000000000000000000000000000000', 'x', bob))).resolves.toMatchObject({ code: 'CONFLICT' });
  });

  it('starts no command a configuration from the database names unless this server\'s disk allows it', async () => {
    const { a, b, dirA } = await twoServers(kind);
    // What the command would do if it ever ran: leave a marker file.
    const marker = join(dirA, 'the-command-ran');
    const serverOf = (command: string) =>
      `servers:\n  - id: notes\n    command: ${process.execPath}\n    args: ["-e", "require('fs').writeFileSync(process.argv[1], '')", "${command}"]\n`;
    const proposedWith = (mcp: string) => {
      const folder = mkdtempSync(join(tmpdir(), 'swarm-proposed-'));
      cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
      cpSync(join(dirA, 'agents.yaml'), join(folder, 'agents.yaml'));
      cpSync(join(dirA, 'permission_policies.yaml'), join(folder, 'permission_policies.yaml'));
      writeFileSync(join(folder, 'mcp.yaml'), mcp);
      return readRuleFolder(folder);
    };
    // Not on either server's disk: the proposal is refused at the line of the command.
    const refused = await refusal(a.changeControl.propose({ texts: proposedWith(serverOf(marker)), message: 'notes server', by: alice }));
    expect(refused.code).toBe('BAD_REQUEST');
    expect(refused.message).toMatch(/proposed\/mcp\.yaml:\d+:\d+: servers\.0\.command: ".*" is not a command this server may start/);
    // On A's disk (its mcp.yaml names it), not on B's: A may propose it, both admins approve, and B does not put it in force.
    writeFileSync(join(dirA, 'mcp.yaml'), serverOf(marker));
    const p = await a.changeControl.propose({ texts: proposedWith(serverOf(marker)), message: 'notes server', by: alice });
    await b.changeControl.vote(p.id, bob, 'approve', 'ok');
    expect((await a.changeControl.vote(p.id, carol, 'approve', 'ok')).proposal.status).toBe('activated');
    await within(2_000, async () =>
      (await b.database.all<{ n: number }>(sql`SELECT count(*) AS n FROM security_events WHERE type = 'config.refused' AND detail_json LIKE '%is not a command this server may start%'`))[0]!.n > 0,
    );
    expect(b.mcpFile.current.servers.map((s) => s.id)).toEqual([]);
    expect(a.mcpFile.current.servers.map((s) => s.id)).toEqual(['notes']);
    expect(existsSync(marker)).toBe(false);
  });

  it('takes no decision when the active revision was corrupted, instead of falling back to older rules, until it is rolled back', async () => {
    const { a, b, dirA, dbPath } = await twoServers(kind);
    const proposed = mkdtempSync(join(tmpdir(), 'swarm-proposed-'));
    cleanups.push(() => rmSync(proposed, { recursive: true, force: true }));
    cpSync(join(dirA, 'agents.yaml'), join(proposed, 'agents.yaml'));
    writeFileSync(join(proposed, 'permission_policies.yaml'), DENY_DRIFT);
    const p = await a.changeControl.propose({ texts: readRuleFolder(proposed), message: 'Drift is watched elsewhere', by: alice });
    await b.changeControl.vote(p.id, bob, 'approve', 'ok');
    await a.changeControl.vote(p.id, carol, 'approve', 'ok');
    expect(await decisionOf(a)).toBe('DENY');
    const seed = (await a.changeControl.store.activations()).find((x) => x.kind === 'seed')!;

    // One byte of the active revision's content changed in the database (its append-only trigger out of the way).
    await a.database.transaction(function* (t) {
      if (kind === 'PostgreSQL') yield* t.run(sql`SET LOCAL session_replication_role = replica`);
      else yield* t.run(sql`DROP TRIGGER IF EXISTS policy_revisions_no_update`);
      yield* t.run(sql`UPDATE policy_revisions SET content_json = replace(content_json, 'no-drift-watch', 'no-drift-watcH') WHERE revision = ${p.revision}`);
    });
    // A server that starts now takes no decision: the older rules (the seed, which allowed the call) are not taken instead.
    const c = await openApp({ dbPath, configDir: dirA, env: { SWARM_APPROVAL_KEY: TEST_APPROVAL_KEY, SWARM_PROFILE: 'bfsi' }, profile: 'bfsi' });
    cleanups.push(() => c.close());
    await c.startChangeControl();
    const refused = await c.decisions.authorize(call('deployer', 'monitor_drift')).then(
      () => undefined,
      (error: unknown) => error as { code?: string; message?: string },
    );
    expect(refused).toMatchObject({ code: 'RULES_UNAVAILABLE' });
    expect(refused!.message).toContain('does not hash to its revision');
    expect(c.rulesRefusal).toMatch(new RegExp(`activation \\d+ of ${p.revision}`));
    // Recorded once (an event nothing waits for: on PostgreSQL it is written a moment later).
    const refusals = async () =>
      (await c.database.all<{ detailJson: string }>(sql`SELECT detail_json AS "detailJson" FROM security_events WHERE type = 'config.refused' AND target = ${p.revision}`)).map(
        (r) => (JSON.parse(r.detailJson) as { error: string }).error,
      );
    await within(2_000, async () => (await refusals()).length > 0);
    expect(await refusals()).toEqual([expect.stringMatching(/the rules in force cannot be used/)]);
    // An emergency rollback to the seed (on a host that holds the database) makes a newer activation: decisions resume.
    await c.changeControl.emergencyRollback(seed.revision, 'the active revision was corrupted', alice);
    expect(c.rulesRefusal).toBeUndefined();
    expect(await decisionOf(c)).toBe('ALLOW');
  });

  it('counts no vote and loads no activation written behind the service\'s back, even with a chained event for it', async () => {
    const { a, b, dirA } = await twoServers(kind);
    const proposed = mkdtempSync(join(tmpdir(), 'swarm-proposed-'));
    cleanups.push(() => rmSync(proposed, { recursive: true, force: true }));
    cpSync(join(dirA, 'agents.yaml'), join(proposed, 'agents.yaml'));
    writeFileSync(join(proposed, 'permission_policies.yaml'), DENY_DRIFT);
    const p = await a.changeControl.propose({ texts: readRuleFolder(proposed), message: 'Drift is watched elsewhere', by: alice });
    const now = Date.now() / 1000;
    // bob's approval forged: the row, and a chained policy.voted event appended as the recorder would (the chain is not keyed).
    await a.database.run(sql`INSERT INTO policy_votes (proposal_id, voter, voter_role, vote, reason, voted_at) VALUES (${p.id}, 'bob', 'admin', 'approve', 'forged', ${now})`);
    await a.recorder.record({ kind: 'config', type: 'policy.voted', actor: 'bob', actorRole: 'admin', outcome: 'succeeded', target: p.id, detail: { proposal: p.id, vote: 'approve' } });
    // One real approval is one of two: nothing is activated.
    expect((await a.changeControl.vote(p.id, carol, 'approve', 'agreed')).proposal.status).toBe('open');
    expect(await decisionOf(a)).toBe('ALLOW');
    const unverified = await a.database.all<{ detailJson: string }>(sql`SELECT detail_json AS "detailJson" FROM security_events WHERE type = 'policy.unverified' AND target = ${p.id}`);
    expect(unverified.map((e) => (JSON.parse(e.detailJson) as { voters: string[] }).voters)).toEqual([['bob']]);
    // An activation of the proposal forged after the newest, with its chained event: not loaded by either server.
    const next = Number((await a.database.all<{ n: number }>(sql`SELECT max(seq) + 1 AS n FROM policy_activations`))[0]!.n);
    await a.database.run(sql`INSERT INTO policy_activations (seq, revision, proposal_id, kind, activated_by, activated_at) VALUES (${next}, ${p.revision}, ${p.id}, 'proposal', 'carol', ${now})`);
    await a.recorder.record({ kind: 'config', type: 'policy.activated', actor: 'carol', actorRole: 'admin', outcome: 'succeeded', target: p.revision, detail: { activation: next, kind: 'proposal' } });
    await b.changeControl.sync();
    await a.changeControl.sync();
    expect(await decisionOf(a)).toBe('ALLOW');
    expect(await decisionOf(b)).toBe('ALLOW');
    // Recorded as an activation not loaded (an event nothing waits for: on PostgreSQL written a moment later).
    await within(2_000, async () => Number((await a.database.all<{ n: number }>(sql`SELECT count(*) AS n FROM security_events WHERE type = 'policy.unverified' AND target = ${p.revision}`))[0]!.n) > 0);
  });

  it('carries the newest activation of a release before seals over as a sealed one, once, so that the rules in force stay', async () => {
    const dir = configFolder();
    const dbPath = kind === 'SQLite' ? join(dir, 'old.db') : pg15.cluster.urlOf(await pg15.freshDatabase('cc_old'));
    const env = { SWARM_APPROVAL_KEY: TEST_APPROVAL_KEY, SWARM_PROFILE: 'bfsi', SWARM_AUDIT_KEY_DIR: join(dir, 'keys') };
    // What a release before seals left: the DENY rule's revision in force through an activation without a seal.
    writeFileSync(join(dir, 'permission_policies.yaml'), DENY_DRIFT);
    const old = await openApp({ dbPath, configDir: dir, env, profile: 'bfsi' });
    cleanups.push(() => old.close());
    const content = old.revisionContentOfTexts(old.ruleTexts());
    const revision = revisionOf(content);
    await old.database.run(sql`INSERT INTO policy_revisions (revision, content_json, first_seen_at) VALUES (${revision}, ${JSON.stringify(content)}, 1) ON CONFLICT (revision) DO NOTHING`);
    await old.database.run(sql`INSERT INTO policy_activations (seq, revision, proposal_id, kind, activated_by, activated_at) VALUES (1, ${revision}, NULL, 'seed', 'system', 1)`);
    await old.recorder.record({ kind: 'config', type: 'policy.activated', actor: 'system', outcome: 'succeeded', target: revision, detail: { activation: 1, kind: 'seed' } });
    // The files on disk now say otherwise: a start must not take them instead of the rules in force.
    writeFileSync(join(dir, 'permission_policies.yaml'), SEED_POLICY);
    const started = await openApp({ dbPath, configDir: dir, env, profile: 'bfsi' });
    cleanups.push(() => started.close());
    await started.bootstrap();
    expect(await decisionOf(started)).toBe('DENY');
    const activations = await started.changeControl.store.activations();
    expect(activations.map((x) => [x.seq, x.revision, x.mac === null])).toEqual([
      [2, revision, false],
      [1, revision, true],
    ]);
    // Once: a later start carries nothing over.
    await started.bootstrap();
    expect(await started.changeControl.store.activations()).toHaveLength(2);
  });
});
