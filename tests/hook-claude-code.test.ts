/**
 * `swarm hook claude-code` and `swarm hook codex` with recorded PreToolUse events (tests/fixtures/claude-code): the
 * event on stdin, the answer read from stdout. The CLI's own entry runs in this process with the event as its stdin
 * (lib/test-support/cli.ts); once, the real binary in a child process reads it from a pipe, as Claude Code runs a
 * command hook. Deciding in process on a real SQLite file, and over REST against the decision listener.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, cpSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type SqliteApp } from '@/lib/app';
import { createFrontServer } from '@/lib/server/front';
import { runSwarm, runSwarmBinary } from '@/lib/test-support/cli';

const AGENTS = `agents:
  claude_code:
    description: The developers' Claude Code sessions.
    tools: [bash, read, write]
`;
const POLICY = `rules:
  - id: no-recursive-delete
    decision: DENY
    priority: 950
    reason: Recursive deletes are not run by agents.
    when: "args.command.contains('rm -rf')"
    match: { tool: bash }
`;
const GATES = `gates:
  - id: prod-config
    tools: [write]
    when: "args.file_path.contains('/deploy/')"
    risk: high
    description: Deployment configuration is reviewed by a person.
`;

/** A rewrite (long sleeps get a timeout) and a report of finished calls to a program that appends them to a file. */
const hooksYaml = (log: string) => `hooks:
  - id: cap-sleep
    event: before_tool_call
    match: { tool: bash }
    when: "args.command.startsWith('sleep')"
    rewrite: { set: { timeout: 60000 } }
  - id: log-finished
    event: after_tool_call
    shell:
      command: ["${process.execPath}", "-e", "require('fs').appendFileSync(process.argv[1], require('fs').readFileSync(0, 'utf8') + '\\\\n')", "${log}"]
`;
const SHELL_ON = { SWARM_FLAG_PLUGIN_SHELL_HOOKS_ENABLED: 'true' };
const sleepEvent = JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'sleep 600' }, tool_use_id: 'toolu_sleep' });

let dir = '';
let finishedLog = '';
let env: Record<string, string> = {};
let app: SqliteApp;
let front: Server;
let url = '';
let token = '';

const event = (name: string) => readFileSync(join('tests/fixtures/claude-code', `${name}.json`), 'utf8');

/** `swarm hook <client>` with `stdin` as the event: in process, or (`binary`) the real command in a child process. */
async function hook(stdin: string, extraEnv: Record<string, string> = {}, client = 'claude-code', binary = false): Promise<{ code: number | null; out: string; err: string }> {
  const run = binary ? runSwarmBinary : runSwarm;
  const r = await run(['hook', client], { ...process.env, ...env, ...extraEnv }, { stdin });
  return { code: r.code, out: r.stdout, err: r.stderr };
}

type Output = { hookSpecificOutput: { hookEventName: string; permissionDecision: string; permissionDecisionReason: string; updatedInput?: Record<string, unknown> } };
const finishedCalls = () => (existsSync(finishedLog) ? readFileSync(finishedLog, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>) : []);
const parse = (out: string) => JSON.parse(out) as Output;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'swarm-hook-'));
  const config = join(dir, 'config');
  cpSync('config', config, { recursive: true });
  writeFileSync(join(config, 'agents.yaml'), AGENTS);
  writeFileSync(join(config, 'permission_policies.yaml'), POLICY);
  writeFileSync(join(config, 'gates.yaml'), GATES);
  writeFileSync(join(config, 'policy_tests.yaml'), 'tests: []\n');
  finishedLog = join(dir, 'finished.jsonl');
  writeFileSync(join(config, 'hooks.yaml'), hooksYaml(finishedLog));
  env = { SWARM_DB: join(dir, 'hook.db'), SWARM_CONFIG_DIR: config, SWARM_POLICY_FILE: '', SWARM_PROFILE: '', SWARM_URL: '', SWARM_TOKEN: '' };
  app = createApp({ dbPath: env.SWARM_DB!, configDir: config, env });
  token = await app.auth.createToken({ agent: 'claude_code' }, 'claude code hook');
  front = createFrontServer({ app, upstream: { host: '127.0.0.1', port: 1 } });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => front.close(r));
  front.closeAllConnections();
  app.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('swarm hook claude-code, in process', () => {
  it('is run by Claude Code as a command: the real binary reads the event from a pipe and answers, exit 0', async () => {
    const r = await hook(event('bash-rm'), {}, 'claude-code', true);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(parse(r.out).hookSpecificOutput).toMatchObject({ hookEventName: 'PreToolUse', permissionDecision: 'deny' });
    expect(parse(r.out).hookSpecificOutput.permissionDecisionReason).toMatch(/^Recursive deletes are not run by agents\. \(policy:no-recursive-delete, decision /);
  });

  it('allows a call the agent may make, with the rule that allowed it', async () => {
    const r = await hook(event('bash-ls'));
    expect(r.code).toBe(0);
    expect(parse(r.out).hookSpecificOutput).toMatchObject({ hookEventName: 'PreToolUse', permissionDecision: 'allow' });
    expect(parse(r.out).hookSpecificOutput.permissionDecisionReason).toMatch(/^Allowed by Swarm Permissions \(agent_allowlist, decision [0-9a-f-]{36}\)\.$/);
  });

  it('denies what the policy refuses, records the denial with the tool call id, and says why', async () => {
    const r = await hook(event('bash-rm'));
    const out = parse(r.out).hookSpecificOutput;
    expect(out.permissionDecision).toBe('deny');
    expect(out.permissionDecisionReason).toMatch(/^Recursive deletes are not run by agents\. \(policy:no-recursive-delete, decision /);
    expect((await app.denials.query({ limit: 1 })).rows[0]).toMatchObject({ toolName: 'bash', agentName: 'claude_code', toolCallId: 'toolu_01ABCDEF0123456790', ruleSource: 'policy:no-recursive-delete' });
  });

  it('denies a gated call until a person approved it, naming the request; then allows it once', async () => {
    const first = parse((await hook(event('write-file'))).out).hookSpecificOutput;
    expect(first.permissionDecision).toBe('deny');
    const id = /\((apr_[A-Za-z0-9_-]+), hitl:prod-config\)/.exec(first.permissionDecisionReason)?.[1];
    expect(id).toBeDefined();
    expect(first.permissionDecisionReason).toContain("the console's /approvals page");
    await app.approvals.approve(id!, { id: 'olivia', role: 'operator' });
    expect(parse((await hook(event('write-file'))).out).hookSpecificOutput.permissionDecision).toBe('allow');
    expect(parse((await hook(event('write-file'))).out).hookSpecificOutput.permissionDecision).toBe('deny');
  });

  it('matches MCP tools by their lower-case name, denied when not on the allowlist', async () => {
    const out = parse((await hook(event('mcp-issue'))).out).hookSpecificOutput;
    expect(out).toMatchObject({ permissionDecision: 'deny' });
    expect(out.permissionDecisionReason).toContain('mcp__github__create_issue');
  });

  it('leaves other events alone, and denies an event it cannot read (fail closed)', async () => {
    const post = await hook(event('post-tool-use'));
    expect(post).toMatchObject({ code: 0, out: '' });
    const broken = await hook('{"hook_event_name":"PreToolUse"');
    expect(parse(broken.out).hookSpecificOutput.permissionDecision).toBe('deny');
    expect(parse(broken.out).hookSpecificOutput.permissionDecisionReason).toMatch(/could not read the hook event/);
  });

  it('denies a tool input with a "__proto__" key, naming it, instead of deciding a copy without it', async () => {
    const smuggled = '{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls","__proto__":{"command":"rm -rf /"}},"tool_use_id":"toolu_proto"}';
    const out = parse((await hook(smuggled)).out).hookSpecificOutput;
    expect(out.permissionDecision).toBe('deny');
    expect(out.permissionDecisionReason).toMatch(/tool_input\.__proto__: The key "__proto__" is refused/);
  });

  it('answers updatedInput, the whole new input, when a hook rewrote it', async () => {
    const out = parse((await hook(sleepEvent)).out).hookSpecificOutput;
    expect(out).toMatchObject({ permissionDecision: 'allow', updatedInput: { command: 'sleep 600', timeout: 60000 } });
    expect(out.permissionDecisionReason).toMatch(/with the input rewritten by hook:cap-sleep\.$/);
    expect(parse((await hook(event('bash-ls'))).out).hookSpecificOutput.updatedInput).toBeUndefined();
  });

  it('reports a PostToolUse event to the after_tool_call hooks, printing nothing', async () => {
    const before = finishedCalls().length;
    const r = await hook(event('post-tool-use'), SHELL_ON);
    expect(r).toMatchObject({ code: 0, out: '' });
    const calls = finishedCalls();
    expect(calls).toHaveLength(before + 1);
    expect(calls.at(-1)).toMatchObject({ event: 'after_tool_call', hook: 'log-finished', outcome: 'succeeded', result: { stdout: 'src' }, call: { agent: 'claude_code', tool: 'bash', tool_call_id: 'toolu_01ABCDEF0123456789' } });
  });

  it('answers the Codex CLI the same way', async () => {
    expect(parse((await hook(event('bash-ls'), {}, 'codex')).out).hookSpecificOutput.permissionDecision).toBe('allow');
  });
});

describe('swarm hook claude-code, over REST (SWARM_URL, SWARM_TOKEN)', () => {
  it('decides through the server with the agent token', async () => {
    const ok = parse((await hook(event('bash-ls'), { SWARM_URL: url, SWARM_TOKEN: token })).out).hookSpecificOutput;
    expect(ok.permissionDecision).toBe('allow');
    const no = parse((await hook(event('bash-rm'), { SWARM_URL: url, SWARM_TOKEN: token })).out).hookSpecificOutput;
    expect(no).toMatchObject({ permissionDecision: 'deny' });
    expect(no.permissionDecisionReason).toContain('policy:no-recursive-delete');
  });

  it('answers the rewritten input and reports finished calls over REST too', async () => {
    const out = parse((await hook(sleepEvent, { SWARM_URL: url, SWARM_TOKEN: token })).out).hookSpecificOutput;
    expect(out).toMatchObject({ permissionDecision: 'allow', updatedInput: { command: 'sleep 600', timeout: 60000 } });
    await app.flags.setOverride('plugin_shell_hooks_enabled', true, 'test', 'report finished calls');
    const before = finishedCalls().length;
    expect(await hook(event('post-tool-use'), { SWARM_URL: url, SWARM_TOKEN: token })).toMatchObject({ code: 0, out: '', err: '' });
    await app.hooks.drain();
    expect(finishedCalls()).toHaveLength(before + 1);
  });

  it('denies when the server refuses the token or cannot be reached', async () => {
    const badToken = parse((await hook(event('bash-ls'), { SWARM_URL: url, SWARM_TOKEN: 'not-a-token' })).out).hookSpecificOutput;
    expect(badToken.permissionDecision).toBe('deny');
    expect(badToken.permissionDecisionReason).toMatch(/answered 401/);
    const down = parse((await hook(event('bash-ls'), { SWARM_URL: 'http://127.0.0.1:1', SWARM_TOKEN: token })).out).hookSpecificOutput;
    expect(down.permissionDecision).toBe('deny');
    expect(down.permissionDecisionReason).toMatch(/could not decide this call/);
  });
});
