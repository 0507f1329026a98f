/**
 * The hook runner: implements the engine's CallHooks port with the hooks of config/hooks.yaml and the TypeScript
 * hooks registered in code (registerHook).
 *
 * - before_tool_call hooks run in order until one blocks: block, rewrite and rate_limit locally, webhook and shell by
 *   asking, TypeScript hooks by calling them (synchronously: they run inside the decision). A hook's `match` and `when`
 *   see the arguments as the hooks before it left them.
 * - The other events (after_tool_call, approval_requested, approval_decided, denied) are reported after the decision,
 *   never awaited by it: webhooks with retries and the circuit breaker, shell and TypeScript hooks as they are. A
 *   report that fails for good is recorded as a `hook.failed` security event.
 * - Shell hooks run only while the flag plugin_shell_hooks_enabled is on, TypeScript hooks only while hooks_enabled is
 *   on; turning a flag off stops them at the next call (their outcome says `skipped`).
 *
 * Rate limits are counted in the database (lib/hooks/rates.ts): one window per hook, agent and tool for every process.
 * A call that passes a rate limit is counted even if a later hook blocks it or the decision then denies or asks. On
 * SQLite the count is synchronous and the pass stays so; a counter that answers with a promise (PostgreSQL, `async`)
 * is awaited, and a synchronous decision refuses a rate-limited call with HookWouldWait instead.
 */
import { hashArguments } from '@/lib/approvals/canonical';
import { maskArguments } from '@/lib/audit/redact';
import { conditionVars } from '@/lib/permissions/condition';
import { compilePolicy, ruleMatches, type CompiledRule } from '@/lib/permissions/policy';
import type { BeforeToolCall, CallHooks, HookEventName, HookOutcome, HookPass, ToolCallFinished } from '@/lib/permissions/call-hooks';
import { HookWouldWait } from '@/lib/permissions/call-hooks';
import type { CheckResult, FlagValues, PermissionContext, ToolContext } from '@/lib/permissions/types';
import { processMetrics } from '@/lib/ops/metrics';
import { SHELL_HOOKS_FLAG, TS_HOOKS_FLAG, type CompiledHook, type HooksConfig, type Rewrite } from './config';
import type { RateCounter, RateTake } from './rates';
import { applyRewrite, changedKeys } from './rewrite';
import { CircuitBreaker, hookAnswerSchema, HookFailure, parseAnswer, postHook, runShellHook, type HookAnswer } from './transport';
import { messageOf } from '@/lib/errors';

/** The JSON a hook receives (webhook body, shell stdin, TypeScript argument). */
export interface HookEvent {
  event: HookEventName;
  hook: string;
  time: string;
  decision_id?: string | null;
  call?: { agent: string; tool: string; arguments: unknown; tool_call_id: string | null; principal: { kind: string; id: string; role: string } };
  /** before_tool_call: the decision before the hooks (ALLOW or ASK); denied: the denial */
  decision?: { decision: string; rule_source: string; reason: string };
  /** after_tool_call */
  outcome?: 'succeeded' | 'failed';
  result?: unknown;
  error?: string;
  /** approval_requested, approval_decided */
  approval?: Record<string, unknown>;
}

/** A hook written in TypeScript, registered with registerHook() while the flag hooks_enabled is on. */
export interface TypeScriptHook {
  id: string;
  event: HookEventName;
  match?: { agent?: string | string[]; tool?: string | string[] };
  /**
   * before_tool_call: answer synchronously (nothing, or allow, block or rewrite); the hook runs inside the decision.
   * Other events: anything, a promise included; it is not awaited.
   */
  run(event: HookEvent): HookAnswer | void | Promise<unknown>;
}

interface Registered {
  hook: TypeScriptHook;
  rule: CompiledRule;
}

export interface HookRunnerOptions {
  hooks: () => HooksConfig;
  flags: () => FlagValues;
  /** where shell hooks run (the configuration folder) */
  cwd: string;
  /** argument keys the active compliance profiles mask in reports (as the audit trail masks them) */
  maskKeys?: ReadonlySet<string>;
  /** a report to a hook failed for good: recorded as `hook.failed` */
  onFailure(failure: { hook: string; event: HookEventName; action: string; reason: string; target?: string }): void;
  /** where rate_limit windows are counted (the database, so that every process counts the same window) */
  rates: RateCounter;
  /** the first retry of a before_tool_call webhook waits this long (default 200 ms), of a report 1 s */
  backoffMs?: { before: number; report: number };
  clock?: () => number;
}

type Call = PermissionContext & ToolContext;

export class HookRunner implements CallHooks {
  private readonly registered: Registered[] = [];
  private readonly breakers = new Map<string, CircuitBreaker>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly clock: () => number;

  constructor(private readonly options: HookRunnerOptions) {
    this.clock = options.clock ?? Date.now;
  }

  /**
   * Register a TypeScript hook. Refused while the flag hooks_enabled is off; turning the flag off later stops it at
   * once. Returns the function that unregisters it.
   */
  register(hook: TypeScriptHook): () => void {
    if (this.options.flags().get(TS_HOOKS_FLAG) !== true) {
      throw new Error(`registerHook("${hook.id}") is refused: the flag ${TS_HOOKS_FLAG} is off.`);
    }
    if (this.all().some((h) => h.id === hook.id)) throw new Error(`A hook with the id "${hook.id}" already exists.`);
    const rule = compilePolicy([{ id: hook.id, decision: 'ALLOW', priority: 0, match: { agent: hook.match?.agent, tool: hook.match?.tool } }]).rules[0]!;
    const entry = { hook, rule };
    this.registered.push(entry);
    return () => {
      const i = this.registered.indexOf(entry);
      if (i >= 0) this.registered.splice(i, 1);
    };
  }

  /** Every hook in force: the file's, then the registered ones, for /transparency. */
  all(): { id: string; event: HookEventName; action: string; origin: string }[] {
    return [
      ...this.options.hooks().hooks.map((h) => ({ id: h.id, event: h.event, action: h.action, origin: h.position })),
      ...this.registered.map((r) => ({ id: r.hook.id, event: r.hook.event, action: 'typescript', origin: 'registerHook' })),
    ];
  }

  /** A before_tool_call hook may have to be waited for (webhook, shell, a rate limit counted asynchronously): the decision listener leaves such calls to Next.js. */
  beforeMayWait(): boolean {
    const config = this.options.hooks();
    if (config.beforeMayWait) return true;
    return this.options.rates.async === true && (config.byEvent.get('before_tool_call') ?? []).some((h) => h.action === 'rate_limit');
  }

  appliesBefore(agent: string, tool: string): boolean {
    const config = this.options.hooks();
    const before = config.byEvent.get('before_tool_call');
    if (before && (config.beforeTools === 'any' || config.beforeTools.has(tool))) {
      for (const h of before) if (nameMatches(h.rule, agent, tool)) return true;
    }
    for (const r of this.registered) if (r.hook.event === 'before_tool_call' && nameMatches(r.rule, agent, tool)) return true;
    return false;
  }

  before(call: BeforeToolCall, options: { sync: boolean }): HookPass | Promise<HookPass> {
    const hooks = this.hooksFor('before_tool_call');
    const { context } = call;
    if (options.sync) {
      // Nothing runs when something would have to wait: refuse before the first hook counts or rewrites anything.
      for (const h of hooks) {
        if ('action' in h && this.waits(h) && nameMatches(h.rule, context.agent, context.tool)) {
          throw new HookWouldWait(h.id);
        }
      }
    }
    const pass: HookPass = { arguments: context.arguments, outcomes: [] };
    return this.runFrom(hooks, 0, call, pass);
  }

  /** This hook has to be waited for: a webhook, a shell hook while they may run, a rate limit counted asynchronously. */
  private waits(h: CompiledHook): boolean {
    return h.action === 'webhook' || (h.action === 'shell' && this.flagOn(SHELL_HOOKS_FLAG)) || (h.action === 'rate_limit' && this.options.rates.async === true);
  }

  /** The hooks of an event in the order they run: the file's, then the registered ones. */
  private hooksFor(event: HookEventName): (CompiledHook | Registered)[] {
    const file = this.options.hooks().byEvent.get(event) ?? [];
    const ts = this.registered.filter((r) => r.hook.event === event);
    return ts.length === 0 ? (file as CompiledHook[]) : [...file, ...ts];
  }

  /** The hooks from `i` on; synchronous until a hook has to be waited for. */
  private runFrom(hooks: readonly (CompiledHook | Registered)[], i: number, call: BeforeToolCall, pass: HookPass): HookPass | Promise<HookPass> {
    for (; i < hooks.length; i++) {
      const h = hooks[i]!;
      const context: Call = pass.arguments === call.context.arguments ? call.context : { ...call.context, arguments: pass.arguments };
      const applies = this.applies(h, context);
      if (applies === false) continue;
      const unsure = typeof applies === 'string' ? ` (its condition could not be evaluated for this call: ${applies}; a hook that cannot tell applies)` : '';
      const before = pass.outcomes.length;
      if (!('action' in h)) {
        this.runTypeScriptBefore(h, context, call.result, pass);
      } else if (h.action === 'block') {
        this.outcome(pass, { hook: h.id, action: 'block', outcome: 'blocked', reason: h.block! });
      } else if (h.action === 'rewrite') {
        this.rewrite(pass, h.id, 'rewrite', h.rewrite!, call.context.arguments);
      } else if (h.action === 'rate_limit') {
        const counting = this.rateLimit(h, context, pass);
        if (counting) {
          const next = i + 1;
          return counting.then(() => {
            this.noteUnsure(pass, before, unsure);
            return pass.blocked ? pass : this.runFrom(hooks, next, call, pass);
          });
        }
      } else if (h.action === 'shell' && !this.flagOn(SHELL_HOOKS_FLAG)) {
        this.outcome(pass, { hook: h.id, action: 'shell', outcome: 'skipped', reason: `the flag ${SHELL_HOOKS_FLAG} is off` });
      } else {
        const next = i + 1;
        return this.ask(h, context, call.result).then(
          ({ answer, ms }) => {
            this.applyAnswer(pass, h, answer, ms, call.context.arguments);
            return pass.blocked ? pass : this.runFrom(hooks, next, call, pass);
          },
          (error: unknown) => {
            this.failedBefore(pass, h, error);
            return pass.blocked ? pass : this.runFrom(hooks, next, call, pass);
          },
        );
      }
      this.noteUnsure(pass, before, unsure);
      if (pass.blocked) return pass;
    }
    return pass;
  }

  /** The outcome a hook added (after `before` outcomes) says that its condition could not be evaluated, if so. */
  private noteUnsure(pass: HookPass, before: number, unsure: string): void {
    if (!unsure || pass.outcomes.length <= before) return;
    const o = pass.outcomes[pass.outcomes.length - 1]!;
    o.reason = `${o.reason ?? ''}${unsure}`;
    if (pass.blocked?.hook === o.hook) pass.blocked.reason = o.reason;
  }

  /**
   * Does the hook apply to this call: true, false, or the error of a `when` that cannot be evaluated for it (a missing
   * argument, say), in which case it applies: a guard that cannot tell stays on guard, and says why.
   */
  private applies(h: CompiledHook | Registered, c: Call): boolean | string {
    if (!ruleMatches(h.rule, { kind: 'tool', agent: c.agent, tool: c.tool, role: c.principal.role, arguments: c.arguments, annotations: c.annotations })) return false;
    if (!h.rule.condition) return true;
    try {
      return h.rule.condition.evaluate(conditionVars(c));
    } catch (error) {
      return error instanceof Error ? error.message.split('\n')[0]! : String(error);
    }
  }

  /** Note what a hook did to the call; `blocks`: a failure that stops the call (the hook could not vouch for it). */
  private outcome(pass: HookPass, { hook, ...what }: Omit<HookOutcome, 'event'>, blocks = false): void {
    const o: HookOutcome = { hook, event: 'before_tool_call', ...what };
    pass.outcomes.push(o);
    processMetrics().hookRuns.inc({ hook: o.hook, event: o.event, outcome: o.outcome });
    if (o.outcome === 'blocked' || blocks) {
      o.blocks = true;
      pass.blocked = { hook: o.hook, reason: o.reason ?? `Blocked by hook "${o.hook}".` };
    }
  }

  private rewrite(pass: HookPass, hook: string, action: HookOutcome['action'], rw: Rewrite, original: Readonly<Record<string, unknown>>, ms?: number): void {
    const r = applyRewrite(pass.arguments, rw);
    this.changed(pass, hook, action, r.arguments, r.changed, original, ms);
  }

  private changed(pass: HookPass, hook: string, action: HookOutcome['action'], args: Readonly<Record<string, unknown>>, changed: string[], original: Readonly<Record<string, unknown>>, ms?: number): void {
    if (changed.length === 0) {
      this.outcome(pass, { hook, action, outcome: 'passed', reason: 'nothing to change', ...(ms === undefined ? {} : { ms }) });
      return;
    }
    pass.arguments = args;
    pass.originalArgumentsSha256 ??= hashArguments(original);
    this.outcome(pass, { hook, action, outcome: 'rewrote', changed, reason: `changed ${changed.join(', ')}`, ...(ms === undefined ? {} : { ms }) });
  }

  /** Count the call in the hook's window; a promise only when the counter answers asynchronously. */
  private rateLimit(h: CompiledHook, c: Call, pass: HookPass): Promise<void> | undefined {
    const { calls, perSeconds } = h.rateLimit!;
    const rates = this.options.rates;
    const took = rates.take({ hook: h.id, agent: c.agent, tool: c.tool }, calls, perSeconds, this.clock() / 1000);
    // The counter says whether it answers with a promise (as mayWait and beforeMayWait read it); one that does not say
    // so answers at once (lib/hooks/rates.ts), so that a synchronous decision counts without waiting.
    if (rates.async === true) return Promise.resolve(took).then((t) => this.rated(h, c, pass, t));
    this.rated(h, c, pass, took as RateTake);
    return undefined;
  }

  private rated(h: CompiledHook, c: Call, pass: HookPass, took: RateTake): void {
    const { calls, perSeconds } = h.rateLimit!;
    if (!took.allowed) {
      this.outcome(pass, {
        hook: h.id,
        action: 'rate_limit',
        outcome: 'blocked',
        reason: `Rate limit of hook "${h.id}": ${calls} call${calls === 1 ? '' : 's'} of ${c.tool} by ${c.agent} per ${perSeconds}s; the next is allowed in ${took.retryInSeconds}s.`,
      });
      return;
    }
    this.outcome(pass, { hook: h.id, action: 'rate_limit', outcome: 'passed', reason: `${took.count} of ${calls} in ${perSeconds}s` });
  }

  private breaker(id: string): CircuitBreaker {
    let b = this.breakers.get(id);
    if (!b) {
      b = new CircuitBreaker(5, 30_000, this.clock);
      this.breakers.set(id, b);
    }
    return b;
  }

  /** Ask a webhook or shell hook about a call (before_tool_call). */
  private async ask(h: CompiledHook, c: Call, before: CheckResult): Promise<{ answer: HookAnswer; ms: number }> {
    const payload = this.payload('before_tool_call', h.id, c, before, false);
    const started = performance.now();
    const text = await this.deliver(h, payload, this.options.backoffMs?.before ?? 200);
    return { answer: parseAnswer(text, `hook "${h.id}"`), ms: Math.round(performance.now() - started) };
  }

  /** Send to a webhook or run a shell hook, through its circuit breaker. */
  private async deliver(h: CompiledHook, payload: HookEvent, backoffMs: number): Promise<string> {
    const breaker = this.breaker(h.id);
    const refused = breaker.refusal();
    if (refused) throw new HookFailure(refused, true);
    try {
      const text = h.action === 'webhook' ? await postHook(h.webhook!, payload.event, payload, backoffMs) : await runShellHook(h.shell!.command, this.options.cwd, payload, { id: h.id, event: payload.event }, h.shell!.timeoutMs);
      breaker.succeeded();
      return text;
    } catch (error) {
      breaker.failed();
      throw error;
    }
  }

  private applyAnswer(pass: HookPass, h: CompiledHook | Registered, answer: HookAnswer, ms: number | undefined, original: Readonly<Record<string, unknown>>): void {
    const id = 'action' in h ? h.id : h.hook.id;
    const action = 'action' in h ? h.action : 'typescript';
    const timing = ms === undefined ? {} : { ms };
    if (answer.decision === 'allow') {
      this.outcome(pass, { hook: id, action, outcome: 'passed', ...(answer.reason ? { reason: answer.reason } : {}), ...timing });
    } else if (answer.decision === 'block') {
      this.outcome(pass, { hook: id, action, outcome: 'blocked', reason: answer.reason || `Blocked by hook "${id}".`, ...timing });
    } else if (answer.arguments) {
      this.changed(pass, id, action, answer.arguments, changedKeys(pass.arguments, answer.arguments), original, ms);
    } else {
      this.rewrite(pass, id, action, { set: Object.entries(answer.set ?? {}), remove: answer.remove ?? [], mask: answer.mask ?? [] }, original, ms);
    }
  }

  /** A webhook or shell hook that could not answer: the call is blocked, unless the hook says on_error: allow. */
  private failedBefore(pass: HookPass, h: CompiledHook, error: unknown): void {
    const why = messageOf(error);
    const blocks = h.onError === 'block';
    this.outcome(pass, {
      hook: h.id,
      action: h.action,
      outcome: 'failed',
      reason: blocks ? `Hook "${h.id}" could not answer (${why}); a call it cannot vouch for is not let through.` : `Let through (on_error: allow): hook "${h.id}" could not answer (${why}).`,
    }, blocks);
  }

  private runTypeScriptBefore(r: Registered, c: Call, before: CheckResult, pass: HookPass): void {
    const id = r.hook.id;
    if (!this.flagOn(TS_HOOKS_FLAG)) {
      this.outcome(pass, { hook: id, action: 'typescript', outcome: 'skipped', reason: `the flag ${TS_HOOKS_FLAG} is off` });
      return;
    }
    const fail = (why: string) => this.outcome(pass, { hook: id, action: 'typescript', outcome: 'failed', reason: `Hook "${id}" ${why}` }, true);
    let answer: HookAnswer | void | Promise<unknown>;
    try {
      answer = r.hook.run(this.payload('before_tool_call', id, c, before, false));
    } catch (error) {
      return fail(`threw (${messageOf(error)}); the call is not let through.`);
    }
    if (answer instanceof Promise) {
      answer.catch(() => undefined);
      return fail('answered with a promise; a before_tool_call hook in TypeScript answers synchronously, so the call is not let through.');
    }
    // The answer is checked as a webhook's is: an answer that is not one (a typo, a "deny") blocks rather than passes.
    const checked = hookAnswerSchema.safeParse(answer ?? { decision: 'allow' });
    if (!checked.success) {
      const why = checked.error.issues.map((i) => `${i.path.join('.') || 'answer'}: ${i.message}`).join('; ');
      return fail(`answered something that is not an answer (${why}); the call is not let through.`);
    }
    this.applyAnswer(pass, r, checked.data, undefined, c.arguments);
  }

  private flagOn(name: string): boolean {
    return this.options.flags().get(name) === true;
  }

  /** The event as a hook receives it. Reports (not before_tool_call) carry the arguments masked, as the audit trail does. */
  private payload(event: HookEventName, hook: string, c: ToolContext, r: CheckResult | undefined, mask: boolean): HookEvent {
    return {
      event,
      hook,
      time: new Date(this.clock()).toISOString(),
      decision_id: r?.decisionId ?? null,
      call: {
        agent: c.agent,
        tool: c.tool,
        arguments: mask ? maskArguments(c.arguments, this.options.maskKeys).value : c.arguments,
        tool_call_id: c.toolCallId ?? null,
        principal: { kind: c.principal.kind, id: c.principal.id, role: c.principal.role },
      },
      ...(r ? { decision: { decision: r.decision, rule_source: r.ruleSource, reason: r.reason } } : {}),
    };
  }

  // ---- reports: events after the fact, never awaited by a decision ----

  decided(context: PermissionContext, result: CheckResult): void {
    if (context.kind !== 'tool' || !this.has('denied')) return;
    this.report('denied', context, (h) => this.payload('denied', h, context, result, true));
  }

  finished(call: ToolCallFinished): void {
    if (!this.has('after_tool_call')) return;
    this.report('after_tool_call', call.context, (h) => ({
      ...this.payload('after_tool_call', h, call.context, undefined, true),
      decision_id: call.decisionId ?? null,
      outcome: call.outcome,
      ...(call.outcome === 'succeeded' ? { result: maskArguments(call.result ?? null, this.options.maskKeys).value } : { error: call.error }),
    }));
  }

  /** An approval was requested or decided (approved, rejected, expired). */
  approval(event: 'approval_requested' | 'approval_decided', context: ToolContext, approval: Record<string, unknown>, decisionId: string | null): void {
    if (!this.has(event)) return;
    this.report(event, context, (h) => ({ ...this.payload(event, h, context, undefined, true), decision_id: decisionId, approval }));
  }

  private has(event: HookEventName): boolean {
    return (this.options.hooks().byEvent.get(event)?.length ?? 0) > 0 || this.registered.some((r) => r.hook.event === event);
  }

  /**
   * Report an event to the hooks that listen to it, after the current turn (so after the transaction that recorded
   * it). Failures after the retries are recorded; nothing is thrown to the caller.
   */
  private report(event: HookEventName, c: ToolContext, payloadOf: (hook: string) => HookEvent): void {
    const hooks = this.hooksFor(event);
    const call = c as Call;
    const work = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      const runs: Promise<unknown>[] = [];
      // One hook's report: skipped while its flag is off, else sent, its failure recorded.
      const run = (hook: string, action: string, flag: string | undefined, send: () => unknown) => {
        if (flag !== undefined && !this.flagOn(flag)) {
          processMetrics().hookRuns.inc({ hook, event, outcome: 'skipped' });
          return;
        }
        runs.push(
          Promise.resolve()
            .then(send)
            .then(
              () => processMetrics().hookRuns.inc({ hook, event, outcome: 'delivered' }),
              (error: unknown) => this.reportFailed(hook, event, action, error, c),
            ),
        );
      };
      for (const h of hooks) {
        if (this.applies(h, call) === false) continue;
        if ('action' in h) run(h.id, h.action, h.action === 'shell' ? SHELL_HOOKS_FLAG : undefined, () => this.deliver(h, payloadOf(h.id), this.options.backoffMs?.report ?? 1_000));
        else run(h.hook.id, 'typescript', TS_HOOKS_FLAG, () => h.hook.run(payloadOf(h.hook.id)));
      }
      await Promise.all(runs);
    });
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }

  private reportFailed(hook: string, event: HookEventName, action: string, error: unknown, c: ToolContext): void {
    processMetrics().hookRuns.inc({ hook, event, outcome: 'failed' });
    try {
      this.options.onFailure({ hook, event, action, reason: messageOf(error), target: `${c.agent} ${c.tool}` });
    } catch (recordError) {
      console.error(`Recording the failure of hook "${hook}" failed`, recordError);
    }
  }

  /** Wait for the reports under way (a one-shot command before it exits; tests). */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }
}

/** By agent and tool name only: what the call itself carries (role, arguments, MCP annotations) is tested per call. */
export function nameMatches(rule: CompiledRule, agent: string, tool: string): boolean {
  return ruleMatches({ ...rule, roles: undefined, args: undefined, annotations: undefined }, { kind: 'tool', agent, tool, role: 'admin' });
}
