/**
 * Hooks that act on MCP tool annotations: a hook's `match.annotations` (the policy's match) and `tool_annotations` in
 * its `when`, against the real application on a real SQLite file.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { tempApp, type TempApp } from '@/lib/test-support/temp-app';
import type { CheckInput, ToolAnnotations } from '@/lib/permissions';

const AGENTS = 'agents:\n  coder:\n    tools: [github__delete_repo, github__list_repos]\n';

const HOOKS = `
hooks:
  - id: no-destructive-on-fridays
    event: before_tool_call
    match: { annotations: { destructiveHint: true } }
    block: No destructive tool on a Friday.
  - id: no-open-world-reads
    event: before_tool_call
    match: { tool: github__list_repos }
    when: "has(tool_annotations.openWorldHint) && tool_annotations.openWorldHint"
    block: Reads of the open world are stopped.
`;

const call = (tool: string, annotations?: ToolAnnotations): CheckInput => ({
  kind: 'tool',
  principal: { kind: 'agent', id: 'coder', role: 'viewer', agent: 'coder' },
  agent: 'coder',
  tool,
  arguments: {},
  ...(annotations ? { annotations } : {}),
});

let t: TempApp | undefined;
afterEach(() => {
  t?.cleanup();
  t = undefined;
});

describe('hooks by MCP annotations', () => {
  it.each([
    ['blocks a destructive MCP call', call('github__delete_repo', {}), 'DENY hook:no-destructive-on-fridays'],
    ['lets the same tool without annotations through', call('github__delete_repo'), 'ALLOW agent_allowlist'],
    ['lets a read-only closed-world call through', call('github__list_repos', { readOnlyHint: true, openWorldHint: false }), 'ALLOW agent_allowlist'],
    ['sees tool_annotations in its condition', call('github__list_repos', { readOnlyHint: true }), 'DENY hook:no-open-world-reads'],
    ['sees an empty tool_annotations without annotations', call('github__list_repos'), 'ALLOW agent_allowlist'],
  ])('%s', (_, input, expected) => {
    t = tempApp({ agents: AGENTS, hooks: HOOKS });
    const r = t.app.engine.decide(input);
    expect(`${r.decision} ${r.ruleSource}`).toBe(expected);
  });
});
