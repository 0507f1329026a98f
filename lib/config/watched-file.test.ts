import { mkdtempSync, rmSync, writeFileSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EMPTY_POLICY, parsePolicy } from '@/lib/permissions/policy';
import { parseAgents } from './agents';
import { WatchedFile } from './watched-file';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function file(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'swarm-watch-'));
  dirs.push(dir);
  const p = join(dir, 'permission_policies.yaml');
  writeFileSync(p, text);
  return p;
}
/** Write and move the mtime forward, so the change is seen even within the file system's time resolution. */
function rewrite(p: string, text: string, bump: number): void {
  writeFileSync(p, text);
  const t = new Date(Date.now() + bump * 1000);
  utimesSync(p, t, t);
}

describe('a watched policy file', () => {
  it('takes a valid change without a restart', () => {
    const p = file('rules: []\n');
    const w = new WatchedFile(p, parsePolicy, EMPTY_POLICY);
    rewrite(p, 'rules:\n  - { id: a, decision: DENY, match: { tool: x } }\n', 1);
    expect(w.reload()).toBe(true);
    expect(w.current.rules.map((r) => r.id)).toEqual(['a']);
    expect(w.status().error).toBeNull();
  });

  it('keeps the last good policy when the new file is malformed, and says why with line and column', () => {
    const p = file('rules:\n  - { id: a, decision: DENY, match: { tool: x } }\n');
    const w = new WatchedFile(p, parsePolicy, EMPTY_POLICY);
    rewrite(p, 'rules:\n  - { id: a, decision: DENY, match: { tool: x ', 1);
    expect(w.reload()).toBe(false);
    expect(w.current.rules.map((r) => r.id)).toEqual(['a']);
    expect(w.status().error).toMatch(/permission_policies\.yaml:\d+:\d+/);
    expect(w.status().error).toMatch(/last good version stays in force/);
  });

  it('keeps the last good policy when the file disappears', () => {
    const p = file('rules:\n  - { id: a, decision: DENY }\n');
    const w = new WatchedFile(p, parsePolicy, EMPTY_POLICY);
    rmSync(p);
    expect(w.reload()).toBe(false);
    expect(w.current.rules).toHaveLength(1);
    expect(w.status().error).toMatch(/missing/);
  });

  it('refuses to start on a malformed file', () => {
    const p = file('rules: [ { id: a, decision: NOPE } ]\n');
    expect(() => new WatchedFile(p, parsePolicy, EMPTY_POLICY)).toThrow(/:1:\d+: rules\.0\.decision/);
  });

  it('uses the empty default when the file does not exist', () => {
    const w = new WatchedFile('/nonexistent/permission_policies.yaml', parsePolicy, EMPTY_POLICY);
    expect(w.current).toBe(EMPTY_POLICY);
    expect(w.status().missing).toBe(true);
  });
});

describe('agents.yaml', () => {
  it('compiles the allowlists', () => {
    const a = parseAgents('agents:\n  trainer:\n    tools: [train_model]\n');
    expect(a.agents.get('trainer')?.tools.has('train_model')).toBe(true);
  });

  it('refuses a malformed agent entry with its line and column', () => {
    expect(() => parseAgents('agents:\n  trainer:\n    tools: train_model\n', 'agents.yaml')).toThrow(/^agents\.yaml:3:12: agents\.trainer\.tools/);
    expect(() => parseAgents('agents:\n  Bad Name:\n    tools: []\n', 'agents.yaml')).toThrow(/agents\.yaml:2:/);
  });
});
