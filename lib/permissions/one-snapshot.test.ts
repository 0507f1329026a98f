/**
 * A call with before_tool_call hooks is decided under one configuration: the one its hooks were asked under, whatever
 * is reloaded while a webhook answers, with the decision id its hooks were told; and the recorder names that
 * configuration's revision. No database: the engine with plain ports.
 */
import { describe, expect, it } from 'vitest';
import { EMPTY_GATES } from './gates';
import { PermissionEngine, type ConfigSnapshot } from './engine';
import type { CallHooks, HookPass } from './call-hooks';
import { PRIORITY, type RuleSource } from './types';
import type { AuditEvent } from './recorder';

const allowing = (revision: string): ConfigSnapshot => ({
  sources: [{ name: 'policy', attributedTo: 'policy', rules: () => [{ decision: 'ALLOW', priority: PRIORITY.policyDefault, attribution: { source: 'policy', id: revision }, reason: `allowed under ${revision}` }] } as RuleSource],
  gates: EMPTY_GATES,
  flags: new Map(),
  revision,
});
const denying: ConfigSnapshot = {
  sources: [{ name: 'policy', attributedTo: 'policy', rules: () => [{ decision: 'DENY', priority: PRIORITY.policyDefault, attribution: { source: 'policy', id: 'rev-2' }, reason: 'denied under rev-2' }] } as RuleSource],
  gates: EMPTY_GATES,
  flags: new Map(),
  revision: 'rev-2',
};

describe('one snapshot per decision', () => {
  it('a reload while a webhook hook answers does not change the configuration the call is decided under', async () => {
    let config = allowing('rev-1');
    const told: string[] = [];
    let answer!: (pass: HookPass) => void;
    const hooks: CallHooks = {
      appliesBefore: () => true,
      before: ({ context, result }) => {
        told.push(result.decisionId!);
        return new Promise<HookPass>((resolve) => {
          answer = resolve;
          void context;
        });
      },
    };
    const recorded: AuditEvent[] = [];
    const engine = new PermissionEngine({
      config: () => config,
      ports: { flagValues: () => new Map(), callHooks: hooks, recorder: { record: (e: AuditEvent) => void recorded.push(e) } },
    });
    const input = { kind: 'tool' as const, principal: { kind: 'agent' as const, id: 'a', role: 'viewer' as const, agent: 'a' }, agent: 'a', tool: 't', arguments: { x: 1 } };
    const deciding = engine.decideAsync(input);
    // the hook is waiting; the configuration is reloaded and would now deny
    await new Promise((r) => setImmediate(r));
    expect(told).toHaveLength(1);
    config = denying;
    answer({ arguments: input.arguments, outcomes: [{ hook: 'h', event: 'before_tool_call', action: 'webhook', outcome: 'passed' }] as unknown as HookPass['outcomes'] });
    const result = await deciding;
    expect(result).toMatchObject({ decision: 'ALLOW', ruleSource: 'policy:rev-1', decisionId: told[0] });
    // a call made now is decided under the new configuration
    expect(engine.check(input)).toMatchObject({ decision: 'DENY', ruleSource: 'policy:rev-2' });
    expect(recorded.map((e) => (e.kind === 'tool' || e.kind === 'http' ? e.revision : undefined))).toEqual(['rev-1']);
  });
});
