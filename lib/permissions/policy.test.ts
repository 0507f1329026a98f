import { describe, expect, it } from 'vitest';
import { parsePolicy } from './policy';
import { ConfigFileError } from './yaml-config';

function issuesOf(text: string) {
  try {
    parsePolicy(text, 'p.yaml');
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigFileError);
    return (e as ConfigFileError).issues;
  }
  throw new Error('expected the policy to be refused');
}

describe('parsePolicy', () => {
  it('accepts an empty file and an empty rule list', () => {
    expect(parsePolicy('').rules).toHaveLength(0);
    expect(parsePolicy('rules: []\n').rules).toHaveLength(0);
    expect(parsePolicy('# only comments\n').rules).toHaveLength(0);
  });

  it('gives a rule priority 500 and a policy:<id> attribution by default', () => {
    const p = parsePolicy('rules:\n  - id: r1\n    decision: deny\n    match: { tool: x }\n');
    expect(p.rules[0]).toMatchObject({ id: 'r1', decision: 'DENY', priority: 500, ruleSource: 'policy:r1' });
  });

  it('refuses broken YAML with the line and column of the fault', () => {
    const issues = issuesOf('rules:\n  - id: a\n    decision: DENY\n   match: [\n');
    expect(issues[0]!.line).toBeGreaterThanOrEqual(3);
    expect(issues[0]!.column).toBeGreaterThan(0);
  });

  it('refuses an invalid value with the line and column of that value', () => {
    const issues = issuesOf('rules:\n  - id: a\n    decision: MAYBE\n    match: { tool: x }\n');
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ line: 3, column: 15, path: 'rules.0.decision' });
  });

  it('refuses unknown fields, so a typo never silently widens a rule', () => {
    const issues = issuesOf('rules:\n  - id: a\n    decision: DENY\n    match: { tol: deploy_serving }\n');
    expect(issues[0]!.path).toBe('rules.0.match');
    expect(issues[0]!.line).toBe(4);
    expect(issues[0]!.message).toMatch(/tol/);
  });

  it('refuses duplicate rule ids', () => {
    const issues = issuesOf('rules:\n  - { id: a, decision: DENY }\n  - { id: a, decision: ALLOW }\n');
    expect(issues[0]).toMatchObject({ line: 3, path: 'rules.1.id' });
  });

  it('names the file in the error message', () => {
    expect(() => parsePolicy('rules: 3\n', 'policies.yaml')).toThrow(/^policies\.yaml:1:8: rules:/);
  });

  it('indexes rules by tool and agent instead of listing them all for every call', () => {
    const p = parsePolicy(`
rules:
  - { id: a, decision: DENY, match: { tool: deploy_serving } }
  - { id: b, decision: DENY, match: { agent: trainer } }
  - { id: c, decision: DENY, match: { tool: 'export_*' } }
  - { id: d, decision: DENY, match: { path: /api/v1/flags/*, method: PUT } }
`);
    expect(p.byTool.get('deploy_serving')?.map((r) => r.id)).toEqual(['a']);
    expect(p.anyToolByAgent.get('trainer')?.map((r) => r.id)).toEqual(['b']);
    expect(p.anyTool.map((r) => r.id)).toEqual(['c']);
    expect(p.http.map((r) => r.id)).toEqual(['b', 'd']);
  });
});
