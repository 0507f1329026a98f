import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { resolve } from './resolve';
import { DECISIONS, ruleSourceOf, type Attribution, type PermissionRule, type PluginSource } from './types';

// Resolution is blind to what a source is: any name stands for one here (as a registered plugin's would).
const attr = (ruleSource: string): Attribution => {
  const [name, id] = ruleSource.split(':') as [string, string | undefined];
  const source = name as PluginSource;
  return id === undefined ? { source } : { source, id };
};
const rule = (decision: PermissionRule['decision'], priority: number, ruleSource = `src:${decision}`): PermissionRule => ({
  decision,
  priority,
  attribution: attr(ruleSource),
  reason: `${decision}@${priority}`,
});

describe('resolve', () => {
  it('lets the highest priority decide, whatever the decisions below it', () => {
    expect(resolve([rule('ALLOW', 100), rule('DENY', 900)], 'tool').decision).toBe('DENY');
    expect(resolve([rule('DENY', 100), rule('ASK', 400)], 'tool').decision).toBe('ASK');
  });

  it('settles a tier with ALLOW over DENY over ASK', () => {
    expect(resolve([rule('DENY', 500), rule('ALLOW', 500)], 'tool').decision).toBe('ALLOW');
    expect(resolve([rule('ASK', 500), rule('DENY', 500)], 'tool').decision).toBe('DENY');
    expect(resolve([rule('ASK', 500)], 'tool').decision).toBe('ASK');
  });

  it('denies a tool call that no rule matched, attributed to default', () => {
    const r = resolve([], 'tool');
    expect(r.decision).toBe('DENY');
    expect(ruleSourceOf(r.rule.attribution)).toBe('default');
  });

  it('allows an HTTP request that no rule matched', () => {
    expect(resolve([], 'http').decision).toBe('ALLOW');
  });

  it('returns every matched rule in the trace', () => {
    const rules = [rule('ALLOW', 100), rule('DENY', 900), rule('ASK', 400)];
    expect(resolve(rules, 'tool').trace).toEqual(rules);
  });
});

const arbRule = fc.record({
  decision: fc.constantFrom(...DECISIONS),
  priority: fc.integer({ min: 0, max: 2000 }),
  attribution: fc.constantFrom('rbac:admin', 'agent_allowlist', 'flag:x', 'policy:a', 'policy:b', 'hitl:deploy').map(attr),
  reason: fc.string({ maxLength: 8 }),
});

describe('resolve (properties over random rule sets)', () => {
  it('always picks one of the matched rules of the top priority, or the default when nothing matched', () => {
    fc.assert(
      fc.property(fc.array(arbRule, { maxLength: 30 }), fc.constantFrom('tool' as const, 'http' as const), (rules, kind) => {
        const r = resolve(rules, kind);
        if (rules.length === 0) {
          expect(ruleSourceOf(r.rule.attribution)).toBe('default');
          expect(r.decision).toBe(kind === 'tool' ? 'DENY' : 'ALLOW');
          return;
        }
        const top = Math.max(...rules.map((x) => x.priority));
        expect(rules).toContain(r.rule);
        expect(r.rule.priority).toBe(top);
        const tierDecisions = new Set(rules.filter((x) => x.priority === top).map((x) => x.decision));
        const expected = tierDecisions.has('ALLOW') ? 'ALLOW' : tierDecisions.has('DENY') ? 'DENY' : 'ASK';
        expect(r.decision).toBe(expected);
      }),
    );
  });

  it('always allows when an ALLOW sits above every other rule', () => {
    fc.assert(
      fc.property(fc.array(arbRule, { maxLength: 30 }), (rules) => {
        const top = Math.max(0, ...rules.map((x) => x.priority));
        expect(resolve([...rules, rule('ALLOW', top + 1, 'policy:break_glass')], 'tool').decision).toBe('ALLOW');
      }),
    );
  });

  it('does not depend on the order of the rules', () => {
    fc.assert(
      fc.property(fc.array(arbRule, { maxLength: 30 }).chain((rules) => fc.tuple(fc.constant(rules), fc.shuffledSubarray(rules, { minLength: rules.length, maxLength: rules.length }))), ([a, b]) => {
        const ra = resolve(a, 'tool');
        const rb = resolve(b, 'tool');
        expect(rb.decision).toBe(ra.decision);
        expect(rb.rule).toEqual(ra.rule);
      }),
    );
  });
});
