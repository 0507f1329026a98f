/**
 * Policy tests that give their call MCP annotations (`input.annotations`), so operators can test rules and gates by
 * annotations before a reload takes them. Pure: parsed texts, an engine of the runner's own.
 */
import { describe, expect, it } from 'vitest';
import { parseGates } from '@/lib/permissions/gates';
import { parsePolicy } from '@/lib/permissions/policy';
import { ConfigFileError } from '@/lib/permissions/yaml-config';
import { parseAgents } from './agents';
import { parsePolicyTests, runPolicyTests } from './policy-tests';

const config = {
  agents: parseAgents('agents:\n  coder:\n    tools: [github__delete_repo, github__list_repos]\n'),
  policy: parsePolicy('rules:\n  - { id: no-open-world, decision: DENY, match: { tool: github__list_repos, annotations: { openWorldHint: true } } }\n'),
  gates: parseGates('gates:\n  - id: destructive\n    annotations: { destructiveHint: true }\n'),
};

const TESTS = `
tests:
  - name: a tool that declares nothing is destructive, so it asks
    input: { agent: coder, tool: github__delete_repo, annotations: {} }
    expect: { decision: ASK, rule_source: "hitl:destructive" }
  - name: the same tool without annotations (not through the gateway) is not gated
    input: { agent: coder, tool: github__delete_repo }
    expect: { decision: ALLOW, rule_source: agent_allowlist }
  - name: a read-only tool reaching the open world is denied
    input: { agent: coder, tool: github__list_repos, annotations: { readOnlyHint: true } }
    expect: { decision: DENY, rule_source: "policy:no-open-world" }
  - name: a closed-world reader runs
    input: { agent: coder, tool: github__list_repos, annotations: { readOnlyHint: true, openWorldHint: false } }
    expect: { decision: ALLOW }
`;

describe('policy tests with annotations', () => {
  it('decides each case with the annotations it gives, and without any when it gives none', () => {
    const results = runPolicyTests(config, parsePolicyTests(TESTS, 'policy_tests.yaml'));
    expect(results.map((r) => [r.case.name, r.passed, `${r.got.decision} ${r.got.ruleSource}`])).toEqual([
      ['a tool that declares nothing is destructive, so it asks', true, 'ASK hitl:destructive'],
      ['the same tool without annotations (not through the gateway) is not gated', true, 'ALLOW agent_allowlist'],
      ['a read-only tool reaching the open world is denied', true, 'DENY policy:no-open-world'],
      ['a closed-world reader runs', true, 'ALLOW agent_allowlist'],
    ]);
  });

  it('refuses an unknown hint at the line and column where it is written', () => {
    const text = 'tests:\n  - name: x\n    input:\n      agent: coder\n      tool: github__delete_repo\n      annotations: { destructive: true }\n    expect: { decision: ASK }\n';
    expect(() => parsePolicyTests(text, 'policy_tests.yaml')).toThrow(ConfigFileError);
    expect(() => parsePolicyTests(text, 'policy_tests.yaml')).toThrow(/^policy_tests\.yaml:6:22: tests\.0\.input\.annotations: .*destructive/);
  });
});
