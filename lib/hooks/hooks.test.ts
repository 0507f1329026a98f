/**
 * Lifecycle hooks against the real engine, store and recorder (a temp SQLite file), a real webhook receiver (node:http,
 * checking the HMAC signature) and real programs for shell hooks.
 */
import { createHmac } from 'node:crypto';
import { chmodSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hashArguments } from '@/lib/approvals/canonical';
import { ConfigFileError } from '@/lib/permissions/yaml-config';
import { HookWouldWait, type Principal } from '@/lib/permissions';
import { tempApp, type TempApp } from '@/lib/test-support/temp-app';
import { AgentRuntime } from '@/lib/agents/runtime';
import { createApp } from '@/lib/app';
import { explainDecision } from '@/lib/audit/explain';
import { z } from 'zod';
import { parseHooks } from './config';

const SECRET = 'hook-secret-0123456789';
const AGENTS = `
agents:
  mailer:
    tools: [send_message, lookup, deploy_serving]
`;
const mailer: Principal = { kind: 'agent', id: 'mailer', role: 'viewer', agent: 'mailer' };
const call = (tool: string, args: Record<string, unknown>) => ({ kind: 'tool' as const, principal: mailer, agent: 'mailer', tool, arguments: args });

interface Received {
  headers: IncomingHttpHeaders;
  json: Record<string, unknown>;
  signed: boolean;
}

/** A webhook receiver that checks the signature and answers from a plan (status and body), then 200 {} by default. */
async function receiver(answer: (r: Received) => { status?: number; body?: unknown; delayMs?: number } = () => ({})) {
  const got: Received[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const ts = String(req.headers['x-swarm-timestamp']);
      const expected = `sha256=${createHmac('sha256', SECRET).update(`${ts}.${body}`).digest('hex')}`;
      const r = { headers: req.headers, json: JSON.parse(body) as Record<string, unknown>, signed: req.headers['x-swarm-signature'] === expected };
      got.push(r);
      const a = answer(r);
      setTimeout(() => {
        if (res.destroyed) return;
        res.writeHead(a.status ?? 200, { 'content-type': 'application/json' });
        res.end(a.body === undefined ? '' : JSON.stringify(a.body));
      }, a.delayMs ?? 0);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    got,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

let t: TempApp | undefined;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  t?.cleanup();
  t = undefined;
  for (const c of closers.splice(0)) await c();
});

function app(hooks: string, options: { policy?: string; gates?: string; env?: Record<string, string> } = {}) {
  t = tempApp({ agents: AGENTS, hooks, policy: options.policy, gates: options.gates, env: { SWARM_HOOK_SECRET: SECRET, ...options.env } });
  return t.app;
}

const FILE_HOOKS = `
hooks:
  - id: no-rival-mail
    event: before_tool_call
    match: { tool: send_message }
    when: "args.to.endsWith('@rival.com')"
    block: Mail to competitors is not sent by agents.
  - id: drop-bcc
    event: before_tool_call
    match: { tool: send_message }
    rewrite: { remove: [bcc], mask: [card] }
`;

describe('hooks.yaml', () => {
  it('refuses a malformed file with file:line:column for each problem', () => {
    const text = `hooks:
  - id: a
    event: approval_requested
    block: nope
  - id: b
    event: before_tool_call
    block: x
    rewrite: { remove: [y] }
  - id: c
    event: before_tool_call
    webhook: { url: "http://x.test/h", secret_env: MISSING_SECRET }
  - id: a
    event: denied
    shell: { command: ["true"] }
    when: "args.x >"
`;
    let error: ConfigFileError | undefined;
    try {
      parseHooks(text, 'hooks.yaml', {});
    } catch (e) {
      error = e as ConfigFileError;
    }
    expect(error).toBeInstanceOf(ConfigFileError);
    const lines = error!.message.split('\n');
    expect(lines).toContainEqual(expect.stringMatching(/^hooks\.yaml:4:\d+: hooks\.0\.block: block acts on a call before it runs: its event is before_tool_call, not approval_requested/));
    expect(lines).toContainEqual(expect.stringMatching(/^hooks\.yaml:5:\d+: hooks\.1: a hook has exactly one action .*not block and rewrite/));
    expect(lines).toContainEqual(expect.stringMatching(/^hooks\.yaml:15:\d+: hooks\.3\.when: invalid condition/));
    expect(() => parseHooks('hooks:\n  - { id: a, event: denied, shell: { command: ["true"] } }\n  - { id: a, event: denied, shell: { command: ["true"] } }\n', 'hooks.yaml')).toThrow(
      /hooks\.yaml:3:\d+: hooks\.1\.id: duplicate hook id "a"/,
    );
  });

  it('refuses a webhook whose secret is not in a server\'s environment, naming the line; a one-shot command keeps it', () => {
    const text = 'hooks:\n  - id: w\n    event: denied\n    webhook: { url: "http://x.test/h", secret_env: MISSING_SECRET }\n';
    expect(() => parseHooks(text, 'hooks.yaml', {}, { secrets: 'required' })).toThrow(/hooks\.yaml:4:\d+: .*MISSING_SECRET is not set/);
    expect(parseHooks(text, 'hooks.yaml', {}, { secrets: 'optional' }).hooks[0]!.webhook!.secret).toBeUndefined();
  });

  it('reloads a changed file, keeps the last good one when the new one is broken, and says where', () => {
    const a = app(FILE_HOOKS);
    expect(a.engine.decide(call('send_message', { to: 'x@rival.com' })).ruleSource).toBe('hook:no-rival-mail');
    writeFileSync(join(t!.dir, 'hooks.yaml'), 'hooks:\n  - id: only\n    event: before_tool_call\n    block: Everything is blocked.\n');
    a.hooksFile.reload();
    expect(a.engine.decide(call('lookup', {})).ruleSource).toBe('hook:only');
    writeFileSync(join(t!.dir, 'hooks.yaml'), 'hooks:\n  - id: broken\n    event: before_tool_call\n');
    a.hooksFile.reload();
    expect(a.hooksFile.status().error).toMatch(/hooks\.yaml:2:\d+/);
    expect(a.engine.decide(call('lookup', {})).ruleSource).toBe('hook:only');
  });
});

describe('before_tool_call: block, rewrite, rate_limit', () => {
  it('blocks what the condition names, as a recorded DENY attributed to the hook; lets the rest through', async () => {
    const a = app(FILE_HOOKS);
    const denied = a.engine.decide(call('send_message', { to: 'ceo@rival.com', body: 'hi' }));
    expect(denied).toMatchObject({ decision: 'DENY', ruleSource: 'hook:no-rival-mail', reason: 'Mail to competitors is not sent by agents.' });
    const row = (await a.denials.get(await a.denials.newestId()))!;
    expect(row).toMatchObject({ ruleSource: 'hook:no-rival-mail', toolName: 'send_message', decisionId: denied.decisionId });
    // An auditor explaining it is told that hooks are not replayed, rather than left to read the re-run as drift.
    expect((await explainDecision(a, denied.decisionId!)).notes).toContainEqual(expect.stringMatching(/^This denial came from the hook no-rival-mail\. Hooks are not replayed/));
    expect(a.engine.decide(call('send_message', { to: 'friend@example.com' })).decision).toBe('ALLOW');
    // A condition that cannot be evaluated (no `to`) makes the guard apply, and the reason says so.
    const unsure = a.engine.decide(call('send_message', { body: 'no recipient' }));
    expect(unsure).toMatchObject({ decision: 'DENY', ruleSource: 'hook:no-rival-mail' });
    expect(unsure.reason).toMatch(/^Mail to competitors is not sent by agents\. \(its condition could not be evaluated for this call: .+; a hook that cannot tell applies\)$/);
  });

  it('rewrites the arguments: the rewritten call is what is decided and answered, the trace keeps the hash of the original', async () => {
    const a = app(FILE_HOOKS, { policy: 'rules: []\n' });
    await a.flags.setOverride('decision_log_all', true, 'test', 'see allowed decisions');
    const original = { to: 'a@example.com', bcc: 'spy@example.com', card: '4111 1111 1111 1111', body: 'hello' };
    const r = a.engine.decide(call('send_message', original));
    expect(r.decision).toBe('ALLOW');
    expect(r.arguments).toEqual({ to: 'a@example.com', card: '[MASKED]', body: 'hello' });
    expect(r.argumentsChangedBy).toEqual(['drop-bcc']);
    expect(r.hooks!.map((h) => [h.hook, h.outcome])).toEqual([['drop-bcc', 'rewrote']]);
    expect(r.hooks![0]!.changed).toEqual(['bcc', 'card']);
    const event = (await a.securityEvents.ofType('decision.allowed', 1))[0]!;
    const detail = JSON.parse(event.detailJson!) as { arguments: Record<string, unknown>; trace: unknown[][] };
    expect(detail.arguments).not.toHaveProperty('bcc');
    const hookEntry = detail.trace.find((e) => e[2] === 'hook:drop-bcc')!;
    expect(hookEntry[0]).toBe('ALLOW');
    expect(hookEntry[4]).toMatchObject({ action: 'rewrite', outcome: 'rewrote', changed: ['bcc', 'card'], original_arguments_sha256: hashArguments(original) });
  });

  it('decides the rewritten call again: a rewrite cannot carry a call past a rule', async () => {
    const hooks = `hooks:\n  - id: reroute\n    event: before_tool_call\n    match: { tool: send_message }\n    rewrite: { set: { to: ops@rival.com } }\n`;
    const policy = `rules:\n  - id: no-rival\n    decision: DENY\n    match: { tool: send_message, arguments: { to: "*@rival.com" } }\n    reason: Not to rivals.\n`;
    const a = app(hooks, { policy });
    const r = a.engine.decide(call('send_message', { to: 'a@example.com' }));
    expect(r).toMatchObject({ decision: 'DENY', ruleSource: 'policy:no-rival', argumentsChangedBy: ['reroute'] });
    const row = (await a.denials.get(await a.denials.newestId()))!;
    expect(JSON.parse(row.argumentsJson!)).toEqual({ to: '[EMAIL ***@rival.com]' });
  });

  it('binds the approval of a gated call to the rewritten arguments, and the same call sent again runs once approved', async () => {
    const gates = 'gates:\n  - id: deploy\n    tools: [deploy_serving]\n    approvers: { roles: [operator] }\n';
    const hooks = 'hooks:\n  - id: pin-region\n    event: before_tool_call\n    match: { tool: deploy_serving }\n    rewrite: { set: { region: eu-west-1 } }\n';
    const a = app(hooks, { gates });
    const sent = { model_id: 'm-7', env: 'prod', region: 'us-east-1' };
    const asked = a.engine.decide(call('deploy_serving', sent));
    expect(asked.decision).toBe('ASK');
    const request = (await a.approvals.get(asked.approvalId!))!;
    expect(JSON.parse(request.argumentsCanonical)).toEqual({ env: 'prod', model_id: 'm-7', region: 'eu-west-1' });
    await a.auth.createUser('olivia', 'operator', 'pw-olivia-123');
    await a.approvals.approve(asked.approvalId!, { id: 'olivia', role: 'operator' }, 'ok');
    const ran = a.engine.decide(call('deploy_serving', sent));
    expect(ran).toMatchObject({ decision: 'ALLOW', approvalId: asked.approvalId, arguments: { model_id: 'm-7', env: 'prod', region: 'eu-west-1' } });
    expect(a.engine.decide(call('deploy_serving', sent)).decision).toBe('ASK');
  });

  it('rate-limits per agent and tool, then denies with the hook and when the next call is allowed', () => {
    const a = app('hooks:\n  - id: two-a-minute\n    event: before_tool_call\n    match: { tool: lookup }\n    rate_limit: { calls: 2, per: 1m }\n');
    expect(a.engine.decide(call('lookup', { q: 1 })).decision).toBe('ALLOW');
    expect(a.engine.decide(call('lookup', { q: 2 })).decision).toBe('ALLOW');
    const third = a.engine.decide(call('lookup', { q: 3 }));
    expect(third).toMatchObject({ decision: 'DENY', ruleSource: 'hook:two-a-minute' });
    expect(third.reason).toMatch(/2 calls of lookup by mailer per 60s; the next is allowed in \d+s/);
    // Another tool is not counted in this window.
    expect(a.engine.decide(call('send_message', { to: 'x@example.com' })).decision).toBe('ALLOW');
  });

  it('counts one rate-limit window for every process on the database', () => {
    const yaml = 'hooks:\n  - id: two-a-minute\n    event: before_tool_call\n    match: { tool: lookup }\n    rate_limit: { calls: 2, per: 1m }\n';
    const a = app(yaml);
    // A second process on the same database and configuration (the other half of the server, a CLI hook adapter).
    const other = createApp({ dbPath: t!.dbPath, configDir: t!.dir, env: { SWARM_HOOK_SECRET: SECRET } });
    try {
      expect(a.engine.decide(call('lookup', { q: 1 })).decision).toBe('ALLOW');
      expect(other.engine.decide(call('lookup', { q: 2 })).decision).toBe('ALLOW');
      expect(a.engine.decide(call('lookup', { q: 3 })).ruleSource).toBe('hook:two-a-minute');
      expect(other.engine.decide(call('lookup', { q: 4 })).ruleSource).toBe('hook:two-a-minute');
    } finally {
      other.close();
    }
  });

  it('runs no hook for a call that is denied anyway, and none on a dry check', () => {
    const a = app('hooks:\n  - id: count\n    event: before_tool_call\n    rate_limit: { calls: 1, per: 1h }\n');
    expect(a.engine.decide(call('train_model', {})).ruleSource).toBe('agent_allowlist');
    expect(a.engine.check(call('lookup', {})).hooks).toBeUndefined();
    expect(a.engine.decide(call('lookup', {})).decision).toBe('ALLOW');
    expect(a.engine.decide(call('lookup', {})).ruleSource).toBe('hook:count');
  });
});

describe('rewrites that must not reach further than the arguments', () => {
  it('refuses __proto__, constructor and prototype in a path, in hooks.yaml and in a webhook answer', async () => {
    expect(() => parseHooks('hooks:\n  - id: p\n    event: before_tool_call\n    rewrite: { set: { __proto__.polluted: yes } }\n', 'hooks.yaml')).toThrow(
      /hooks\.yaml:4:\d+: .*names "__proto__", which no path may name/,
    );
    const r = await receiver(() => ({ body: { decision: 'rewrite', set: { '__proto__.polluted': 'yes' }, remove: ['constructor.prototype.toString'] } }));
    closers.push(r.close);
    const a = app(`hooks:\n  - id: evil\n    event: before_tool_call\n    match: { tool: lookup }\n    webhook: { url: "${r.url}", secret_env: SWARM_HOOK_SECRET, retries: 0 }\n`);
    const blocked = await a.engine.decideAsync(call('lookup', {}));
    expect(blocked).toMatchObject({ decision: 'DENY', ruleSource: 'hook:evil' });
    expect(blocked.reason).toMatch(/answered set\.__proto__\.polluted: .*names "__proto__".*remove\.0: .*names "constructor"/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(typeof Object.prototype.toString).toBe('function');
  });

  it('removes array elements from the highest index down, never pads an array, never replaces a value to pass through it', async () => {
    const { applyRewrite } = await import('./rewrite');
    const rw = (over: Partial<{ set: [string, unknown][]; remove: string[]; mask: string[] }>) => ({ set: [], remove: [], mask: [], ...over });
    expect(applyRewrite({ list: ['A', 'B', 'C'] }, rw({ remove: ['list.0', 'list.1'] }))).toEqual({ arguments: { list: ['C'] }, changed: ['list.1', 'list.0'] });
    expect(applyRewrite({ items: [1, 2] }, rw({ set: [['items.5', 9], ['items.foo', 9]] })).changed).toEqual([]);
    expect(applyRewrite({ items: [1, 2] }, rw({ set: [['items.2', 3]] })).arguments).toEqual({ items: [1, 2, 3] });
    expect(applyRewrite({ payment: 'cash' }, rw({ set: [['payment.card', 'x']] })).changed).toEqual([]);
    expect(applyRewrite({ a: 1 }, rw({ set: [['meta.added.deep', true]], mask: ['missing.key'] }))).toEqual({ arguments: { a: 1, meta: { added: { deep: true } } }, changed: ['meta.added.deep'] });
  });
});

describe('before_tool_call: webhooks', () => {
  const webhookHooks = (url: string, extra = '') =>
    `hooks:\n  - id: review\n    event: before_tool_call\n    match: { tool: send_message }\n    webhook: { url: "${url}", secret_env: SWARM_HOOK_SECRET, timeout: 1s, retries: 1 }\n${extra}`;

  it('asks a signed webhook, which may block or rewrite; decide() refuses to wait and calls nobody', async () => {
    const r = await receiver((got) =>
      (got.json.call as { arguments: { to: string } }).arguments.to.endsWith('@rival.com')
        ? { body: { decision: 'block', reason: 'The reviewer says no.' } }
        : { body: { decision: 'rewrite', set: { footer: 'Sent by an agent' } } },
    );
    closers.push(r.close);
    const a = app(webhookHooks(r.url));
    expect(() => a.engine.decide(call('send_message', { to: 'a@example.com' }))).toThrow(HookWouldWait);
    expect(r.got).toHaveLength(0);

    const blocked = await a.engine.decideAsync(call('send_message', { to: 'b@rival.com' }));
    expect(blocked).toMatchObject({ decision: 'DENY', ruleSource: 'hook:review', reason: 'The reviewer says no.' });
    const rewritten = await a.engine.decideAsync(call('send_message', { to: 'a@example.com' }));
    expect(rewritten).toMatchObject({ decision: 'ALLOW', arguments: { to: 'a@example.com', footer: 'Sent by an agent' }, argumentsChangedBy: ['review'] });
    expect(r.got).toHaveLength(2);
    expect(r.got.every((g) => g.signed)).toBe(true);
    expect(r.got[0]!.headers['x-swarm-event']).toBe('before_tool_call');
    expect(r.got[0]!.json).toMatchObject({ event: 'before_tool_call', hook: 'review', call: { agent: 'mailer', tool: 'send_message' }, decision: { decision: 'ALLOW' } });
    // What the webhook was told joins the audit row of the decision it led to.
    expect(r.got[0]!.json.decision_id).toBe(blocked.decisionId);
    expect((await a.denials.get(await a.denials.newestId()))!.decisionId).toBe(blocked.decisionId);
  });

  it('retries a failing webhook, then blocks; with on_error: allow it lets the call through and says so', async () => {
    const r = await receiver(() => ({ status: 503 }));
    closers.push(r.close);
    const a = app(webhookHooks(r.url));
    const blocked = await a.engine.decideAsync(call('send_message', { to: 'a@example.com' }));
    expect(blocked).toMatchObject({ decision: 'DENY', ruleSource: 'hook:review' });
    expect(blocked.reason).toMatch(/could not answer \(its webhook answered HTTP 503 \(2 attempts\)\); a call it cannot vouch for is not let through/);
    expect(r.got).toHaveLength(2);

    writeFileSync(join(t!.dir, 'hooks.yaml'), webhookHooks(r.url).replace('retries: 1 }', 'retries: 0 }\n    on_error: allow'));
    a.hooksFile.reload();
    const through = await a.engine.decideAsync(call('send_message', { to: 'a@example.com' }));
    expect(through.decision).toBe('ALLOW');
    expect(through.hooks).toEqual([expect.objectContaining({ hook: 'review', outcome: 'failed', reason: expect.stringMatching(/^Let through \(on_error: allow\)/) })]);
  });

  it('blocks when the webhook does not answer in time, and opens its circuit after five failures in a row', async () => {
    const r = await receiver(() => ({ delayMs: 3_000, body: { decision: 'allow' } }));
    closers.push(r.close);
    const a = app(webhookHooks(r.url).replace('retries: 1', 'retries: 0'));
    const slow = await a.engine.decideAsync(call('send_message', { to: 'a@example.com' }));
    expect(slow.reason).toMatch(/did not answer within 1000 ms/);
    for (let i = 0; i < 4; i++) await a.engine.decideAsync(call('send_message', { to: 'a@example.com' }));
    expect(r.got).toHaveLength(5);
    const started = performance.now();
    const open = await a.engine.decideAsync(call('send_message', { to: 'a@example.com' }));
    expect(performance.now() - started).toBeLessThan(500);
    expect(open).toMatchObject({ decision: 'DENY', ruleSource: 'hook:review' });
    expect(open.reason).toMatch(/circuit is open after 5 failures in a row/);
    expect(r.got).toHaveLength(5);
  }, 20_000);
});

describe('shell and TypeScript hooks', () => {
  it('runs a shell hook only while plugin_shell_hooks_enabled is on, with the event on stdin and no shell', async () => {
    const a = app('');
    const script = join(t!.dir, 'review.mjs');
    writeFileSync(
      script,
      `let s='';process.stdin.on('data',c=>s+=c).on('end',()=>{const e=JSON.parse(s);` +
        `if(e.call.arguments.to==='$(touch pwned)')console.log(JSON.stringify({decision:'block',reason:'literal '+e.call.arguments.to+' '+process.env.SWARM_HOOK_ID}));` +
        `else if(e.call.arguments.to==='crash'){console.error('boom');process.exit(3)}else console.log('');});`,
    );
    chmodSync(script, 0o755);
    writeFileSync(join(t!.dir, 'hooks.yaml'), `hooks:\n  - id: shell-review\n    event: before_tool_call\n    match: { tool: send_message }\n    shell: { command: ["${process.execPath}", review.mjs], timeout: 5s }\n`);
    a.hooksFile.reload();
    const off = a.engine.decide(call('send_message', { to: '$(touch pwned)' }));
    expect(off.decision).toBe('ALLOW');
    expect(off.hooks).toEqual([expect.objectContaining({ hook: 'shell-review', outcome: 'skipped', reason: 'the flag plugin_shell_hooks_enabled is off' })]);

    await a.flags.setOverride('plugin_shell_hooks_enabled', true, 'test', 'try the shell hook');
    const blocked = await a.engine.decideAsync(call('send_message', { to: '$(touch pwned)' }));
    expect(blocked).toMatchObject({ decision: 'DENY', ruleSource: 'hook:shell-review', reason: 'literal $(touch pwned) shell-review' });
    expect((await a.engine.decideAsync(call('send_message', { to: 'ok@example.com' }))).decision).toBe('ALLOW');
    const crashed = await a.engine.decideAsync(call('send_message', { to: 'crash' }));
    expect(crashed.reason).toMatch(/its command exited with code 3: boom/);

    await a.flags.setOverride('plugin_shell_hooks_enabled', false, 'test', 'off again');
    expect(a.engine.decide(call('send_message', { to: '$(touch pwned)' })).decision).toBe('ALLOW');
  });

  it('registers TypeScript hooks only while hooks_enabled is on, and stops them as soon as it is turned off', async () => {
    const a = app('');
    const hook = {
      id: 'ts-guard',
      event: 'before_tool_call' as const,
      match: { tool: 'send_message' },
      run: (e: { call?: { arguments: unknown } }) =>
        (e.call!.arguments as { urgent?: boolean }).urgent ? { decision: 'block' as const, reason: 'No urgent mail from agents.' } : undefined,
    };
    expect(() => a.registerHook(hook)).toThrow(/refused: the flag hooks_enabled is off/);
    await a.flags.setOverride('hooks_enabled', true, 'test', 'try');
    const unregister = a.registerHook(hook);
    expect(a.engine.decide(call('send_message', { urgent: true }))).toMatchObject({ decision: 'DENY', ruleSource: 'hook:ts-guard' });
    expect(a.engine.decide(call('send_message', { urgent: false })).decision).toBe('ALLOW');
    await a.flags.setOverride('hooks_enabled', false, 'test', 'stop');
    const skipped = a.engine.decide(call('send_message', { urgent: true }));
    expect(skipped.decision).toBe('ALLOW');
    expect(skipped.hooks).toEqual([expect.objectContaining({ hook: 'ts-guard', outcome: 'skipped' })]);
    unregister();
    await a.flags.setOverride('hooks_enabled', true, 'test', 'again');
    expect(a.engine.decide(call('send_message', { urgent: true })).decision).toBe('ALLOW');
    a.registerHook({ id: 'async-guard', event: 'before_tool_call', run: () => Promise.resolve() });
    expect(a.engine.decide(call('lookup', {}))).toMatchObject({ decision: 'DENY', ruleSource: 'hook:async-guard' });
  });

  it('blocks on a TypeScript answer that is not an answer (a "deny" instead of "block")', async () => {
    const a = app('');
    await a.flags.setOverride('hooks_enabled', true, 'test', 'try');
    a.registerHook({ id: 'sloppy', event: 'before_tool_call', run: () => ({ decision: 'deny', reason: 'nope' }) as never });
    const r = a.engine.decide(call('lookup', {}));
    expect(r).toMatchObject({ decision: 'DENY', ruleSource: 'hook:sloppy' });
    expect(r.reason).toMatch(/answered something that is not an answer \(decision: /);
  });
});

describe('reports: approval_requested, approval_decided, denied, after_tool_call', () => {
  it('reports each event to its webhook after the decision, signed, with masked arguments; a failure is recorded', async () => {
    const r = await receiver();
    closers.push(r.close);
    const gates = 'gates:\n  - id: deploy\n    tools: [deploy_serving]\n    approvers: { roles: [operator] }\n';
    const hook = (id: string, event: string, url = r.url) => `  - id: ${id}\n    event: ${event}\n    webhook: { url: "${url}", secret_env: SWARM_HOOK_SECRET, retries: 0 }\n`;
    const a = app(
      `hooks:\n${hook('asked', 'approval_requested')}${hook('decided', 'approval_decided')}${hook('denied', 'denied')}${hook('ran', 'after_tool_call')}${hook('dead', 'denied', 'http://127.0.0.1:9/gone')}`,
      { gates },
    );
    const asked = a.engine.decide(call('deploy_serving', { model_id: 'm-1', env: 'prod', notify: 'ops@example.com' }));
    await a.auth.createUser('olivia', 'operator', 'pw-olivia-123');
    await a.approvals.reject(asked.approvalId!, { id: 'olivia', role: 'operator' }, 'Not this week.');
    a.engine.decide(call('train_model', {}));
    const runtime = new AgentRuntime(a.decisions, a.approvals, 'mailer', [{ name: 'lookup', description: 'l', schema: z.object({ q: z.string() }), run: async (x: unknown) => ({ found: (x as { q: string }).q }) }]);
    await runtime.call('lookup', { q: 'ops' });
    await a.hooks.drain();

    const byEvent = Object.fromEntries(r.got.map((g) => [g.json.event as string, g]));
    expect(r.got.every((g) => g.signed)).toBe(true);
    expect(byEvent.approval_requested!.json).toMatchObject({ hook: 'asked', approval: { id: asked.approvalId, gate: 'deploy', status: 'pending' }, call: { arguments: { notify: '[EMAIL ***@example.com]' } } });
    expect(byEvent.approval_decided!.json).toMatchObject({ hook: 'decided', approval: { status: 'rejected', decided_by: 'olivia', reason: 'Not this week.' } });
    expect(byEvent.denied!.json).toMatchObject({ hook: 'denied', call: { tool: 'train_model' }, decision: { decision: 'DENY', rule_source: 'agent_allowlist' } });
    expect(byEvent.after_tool_call!.json).toMatchObject({ hook: 'ran', outcome: 'succeeded', result: { found: 'ops' }, call: { tool: 'lookup' } });
    const failed = await a.securityEvents.ofType('hook.failed', 5);
    expect(failed).toHaveLength(1);
    expect(JSON.parse(failed[0]!.detailJson!)).toMatchObject({ hook: 'dead', event: 'denied', action: 'webhook', reason: expect.stringMatching(/could not be reached/) });
  });
});
