/**
 * `swarm policy propose | proposals | vote | history | rollback` on a SQLite database under the bfsi profile (change
 * control: two admins other than the proposer): the exit statuses a script relies on, and the rules in force changing
 * only once two others approved.
 */
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliWorkspace, runSwarm } from '@/lib/test-support/cli';
import { createApp } from '@/lib/app';
import { TEST_APPROVAL_KEY } from '@/lib/test-support/temp-app';

const ws = cliWorkspace('swarm-policy-change-cli-', 'cc.db');
const env = { ...ws.env, SWARM_PROFILE: 'bfsi', SWARM_APPROVAL_KEY: TEST_APPROVAL_KEY };
const proposed = join(ws.dir, 'proposed');
const broken = join(ws.dir, 'broken');

beforeAll(async () => {
  cpSync('config/profiles', join(ws.dir, 'profiles'), { recursive: true });
  writeFileSync(join(ws.dir, 'policy_tests.yaml'), 'tests: []\n');
  for (const d of [proposed, broken]) {
    mkdirSync(d);
    cpSync(join(ws.dir, 'agents.yaml'), join(d, 'agents.yaml'));
  }
  writeFileSync(join(proposed, 'permission_policies.yaml'), 'rules:\n  - { id: no-drift-watch, decision: DENY, match: { tool: monitor_drift } }\n');
  writeFileSync(join(broken, 'permission_policies.yaml'), 'rules:\n  - { id: x, decision: PERHAPS }\n');
  for (const [name, role] of [['alice', 'admin'], ['bob', 'admin'], ['carol', 'admin'], ['olivia', 'operator']]) {
    expect((await runSwarm(['users', 'add', name!, '--role', role!], env)).code).toBe(0);
  }
});
afterAll(() => rmSync(ws.dir, { recursive: true, force: true }));

const decisionNow = async (): Promise<string> => {
  const app = createApp({ dbPath: ws.dbPath, configDir: ws.dir, env, profile: 'bfsi' });
  try {
    await app.startChangeControl();
    return (await app.decisions.authorize({ kind: 'tool', principal: { kind: 'agent', id: 'deployer', role: 'viewer', agent: 'deployer' }, agent: 'deployer', tool: 'monitor_drift', arguments: {} })).decision;
  } finally {
    app.close();
  }
};

describe('swarm policy: proposals, votes and rollbacks from the command line', () => {
  it('proposes, refuses the proposer and a second vote, activates on the second approval, and rolls back in an emergency', async () => {
    const bad = await runSwarm(['policy', 'propose', broken, '-m', 'broken', '--as', 'alice'], env);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toMatch(/broken|proposed\/permission_policies\.yaml:2:/);
    expect((await runSwarm(['policy', 'propose', proposed, '--as', 'alice'], env)).code).toBe(2);

    const made = await runSwarm(['policy', 'propose', proposed, '-m', 'Drift is watched elsewhere', '--as', 'alice', '--json'], env);
    expect(made.code).toBe(0);
    const p = JSON.parse(made.stdout) as { id: string; status: string; tests: { failed: number }; revision: string };
    expect(p).toMatchObject({ status: 'open', tests: { failed: 0 } });

    const own = await runSwarm(['policy', 'vote', p.id, 'approve', '-m', 'mine', '--as', 'alice'], env);
    expect(own.code).not.toBe(0);
    expect(own.stderr).toMatch(/someone else must approve/);
    expect((await runSwarm(['policy', 'vote', p.id, 'approve', '-m', 'ok', '--as', 'olivia'], env)).code).not.toBe(0);
    expect((await runSwarm(['policy', 'vote', p.id, 'approve', '-m', 'impact reviewed', '--as', 'bob'], env)).code).toBe(0);
    expect(await decisionNow()).toBe('ALLOW');
    const second = await runSwarm(['policy', 'vote', p.id, 'approve', '-m', 'agreed', '--as', 'carol'], env);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/Activated \(activation 2\)/);
    expect(await decisionNow()).toBe('DENY');

    const history = await runSwarm(['policy', 'history', '--json'], env);
    const activations = JSON.parse(history.stdout) as { kind: string; revision: string }[];
    expect(activations.map((a) => a.kind)).toEqual(['proposal', 'seed']);
    const listed = await runSwarm(['policy', 'proposals', '--status', 'activated'], env);
    expect(listed.stdout).toContain(p.id);

    const emergency = await runSwarm(['policy', 'rollback', activations[1]!.revision, '--emergency', '-m', 'incident 42'], env);
    expect(emergency.code).toBe(0);
    expect(emergency.stdout).toMatch(/Emergency rollback activated/);
    expect(await decisionNow()).toBe('ALLOW');
    expect((await runSwarm(['policy', 'rollback', 'rev_00000000000000000000000000000000', '-m', 'nowhere'], env)).code).not.toBe(0);
  });
});
