/**
 * Every decision is taken under one frozen snapshot of the configuration (sources, gates, flag values, revision), and
 * its audit row names that snapshot's revision: a reload while the decision is being evaluated or recorded changes the
 * next decision, never the one under way, and `swarm audit explain` replays the rules the decision really used.
 */
import { writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { explainDecision } from '@/lib/audit/explain';
import { tempApp, type TempApp } from '@/lib/test-support/temp-app';
import { PermissionEngine, type CheckResult, type Principal, type ToolContext } from './index';

const cleaner: Principal = { kind: 'agent', id: 'data_cleaner', role: 'viewer', agent: 'data_cleaner' };
const exportCall = (): ToolContext => ({ kind: 'tool', principal: cleaner, agent: 'data_cleaner', tool: 'export_raw_data', arguments: { dataset_id: 'd1' } });
const POLICY_A = 'rules:\n  - { id: no-export-a, decision: DENY, match: { tool: export_raw_data }, reason: first version }\n';
const POLICY_B = 'rules:\n  - { id: no-export-b, decision: DENY, match: { tool: export_raw_data }, reason: second version }\n';

let t: TempApp | undefined;
afterEach(() => {
  t?.cleanup();
  t = undefined;
});

/** A plugin source that, while the decision is being evaluated, replaces the policy file and reloads it. */
function reloadDuringEvaluation(app: TempApp, nextPolicy: string): void {
  let done = false;
  app.app.engine.registerSource({
    name: 'reloader',
    rules: () => {
      if (!done) {
        done = true;
        writeFileSync(app.policyPath, nextPolicy);
        expect(app.app.policyFile.reload(true)).toBe(true);
      }
      return [];
    },
  });
}

describe('a decision and its snapshot', () => {
  it('records the revision it was decided under when the policy is reloaded between evaluation and recording', async () => {
    t = tempApp({ policy: POLICY_A });
    const before = t.app.currentRevision();
    reloadDuringEvaluation(t, POLICY_B);

    const result = t.app.engine.decide(exportCall());
    expect(result).toMatchObject({ decision: 'DENY', ruleSource: 'policy:no-export-a' });
    // The reload took effect for what comes next...
    expect(t.app.currentRevision()).not.toBe(before);
    expect(t.app.engine.check(exportCall()).ruleSource).toBe('policy:no-export-b');

    // ...but the row of the decision under way names the revision whose rules decided it, and that revision is kept.
    const row = (await t.app.denials.query({ limit: 10 })).rows.find((r) => r.decisionId === result.decisionId)!;
    expect(row.policyRevision).toBe(before);
    expect((await t.app.revisions.get(before))!.files.policy).toBe(POLICY_A);

    // explain replays the rules the decision used: the same decision, the same rule.
    const explained = await explainDecision(t.app, result.decisionId!);
    expect(explained.at_the_time).toMatchObject({ rule_source: 'policy:no-export-a', same: true });
  });

  it('keeps the snapshot across an awaited port on an asynchronous store', async () => {
    t = tempApp({ policy: POLICY_A });
    const app = t.app;
    const revisionA = app.currentRevision();
    const recorded: { revision?: string; result: CheckResult }[] = [];
    const engine = new PermissionEngine({
      config: () => app.configSnapshot(),
      ports: {
        async: true,
        flagValues: () => app.flags.values(),
        // The store answers a turn later; the policy is reloaded while it is awaited.
        approvalState: async () => {
          writeFileSync(t!.policyPath, POLICY_B);
          app.policyFile.reload(true);
          await new Promise((r) => setImmediate(r));
          return undefined;
        },
        recorder: { record: async (e) => void recorded.push({ revision: e.kind === 'tool' ? e.revision : undefined, result: (e as { result: CheckResult }).result }) },
      },
    });
    const result = await engine.decideAsync(exportCall());
    expect(result.ruleSource).toBe('policy:no-export-a');
    expect(recorded).toHaveLength(1);
    expect(recorded[0]!.revision).toBe(revisionA);
    expect(app.currentRevision()).not.toBe(revisionA);
  });

  it('is one frozen object while nothing changes, and a new one after a reload', () => {
    t = tempApp({ policy: POLICY_A });
    const first = t.app.engine.snapshot();
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first.sources)).toBe(true);
    expect(t.app.engine.snapshot()).toBe(first);
    writeFileSync(t.policyPath, POLICY_B);
    t.app.policyFile.reload(true);
    const second = t.app.engine.snapshot();
    expect(second).not.toBe(first);
    expect(second.revision).not.toBe(first.revision);
    expect(second.sources.map((s) => s.name)).toEqual(first.sources.map((s) => s.name));
  });

  it('answers with a result that cannot be changed after it was recorded', () => {
    t = tempApp({ policy: POLICY_A });
    const result = t.app.engine.decide(exportCall());
    expect(Object.isFrozen(result)).toBe(true);
    expect(() => {
      (result as { decision: string }).decision = 'ALLOW';
    }).toThrow(TypeError);
  });

  it('writes nothing for a check: the revision is stored with the first row that names it', () => {
    t = tempApp({ policy: POLICY_A });
    const revisions = () => (t!.app.db.$client.prepare('SELECT count(*) AS n FROM policy_revisions').get() as { n: number }).n;
    t.app.engine.check(exportCall());
    expect(revisions()).toBe(0);
    t.app.engine.decide(exportCall());
    expect(revisions()).toBe(1);
  });

  it('reports every decision to the metrics port, not by replacing a method of the engine', () => {
    const seen: string[] = [];
    const engine = new PermissionEngine({ ports: { flagValues: () => new Map(), observe: (kind, r, seconds) => void seen.push(`${kind} ${r.decision} ${seconds >= 0}`) } });
    engine.decide(exportCall());
    expect(seen).toEqual(['tool DENY true']);
  });
});
