import { newDecisionId } from './decision-id';
import { enforced } from './errors';
import { AuditUnavailable, type DecisionMeta, type Recorder } from './recorder';
import type { CallHooks, HookPass, ToolCallFinished } from './call-hooks';
import { drive, isPromise, type Step } from './steps';
import { EMPTY_GATES, type CompiledGate, type GateSet } from './gates';
import { contextOf, decideContext, gateOfCall, type DecisionSnapshot } from './authorize';
import {
  PRIORITY,
  type ApprovalState,
  type CheckInput,
  type CheckResult,
  type FlagValues,
  type HttpContext,
  type PermissionContext,
  type PermissionRule,
  type PluginRuleSource,
  type PluginSource,
  type RuleSource,
  type ToolContext,
  ruleSourceOf,
} from './types';
import { isBuiltInSource } from './types';
import { brand } from '@/lib/errors';

/**
 * What the engine needs from the outside world. The engine itself does no I/O: the application wires these ports to
 * the flag service, the approval store and the denial recorder, and tests or benchmarks wire them to plain data.
 */
export interface EnginePorts {
  /** effective flag values; must be cheap (cached by the caller, also with an asynchronous store) */
  flagValues(): FlagValues;
  /**
   * The store answers asynchronously (PostgreSQL): the ports below may return promises, and the engine must be used
   * through checkAsync(), decideAsync() and enforceAsync() (check() and decide() refuse with EngineIsAsync).
   */
  async?: boolean;
  /**
   * approval state of this exact call; called for tool calls only, with the gate that applies (if any). Return
   * undefined when the call cannot need an approval. Must not write: check() is pure.
   */
  approvalState?(context: ToolContext, gate: CompiledGate | undefined): Step<ApprovalState | undefined>;
  /**
   * The audit trail: every decision is offered to it (a DENY is always written; the others when decision_log_all is
   * on). It must not return (or resolve) before the row is committed; when it fails, the decision fails closed.
   */
  recorder?: Recorder;
  /** create or reuse the pending approval of this exact call; returns its id */
  requestApproval?(context: PermissionContext & ToolContext, result: CheckResult): Step<string>;
  /**
   * mark an approved approval consumed by this call's principal (who really asks: the trail names them); false when it
   * was not approved any more (another call used it)
   */
  consumeApproval?(approvalId: string, context: PermissionContext & ToolContext): Step<boolean>;
  /** the lifecycle hooks (config/hooks.yaml, registered TypeScript hooks) around tool calls; see call-hooks.ts */
  callHooks?: CallHooks;
  /** every decision taken (decide, decideAsync, commit), with how long deciding and recording it took (metrics) */
  observe?(kind: CheckInput['kind'], result: CheckResult, seconds: number): void;
}

/**
 * The configuration a decision is taken under, fixed once per decision: the built-in sources bound to one version of
 * the configuration files, the gates, the flag values and the policy revision they make. The application returns the
 * same frozen object while nothing changes; a reload makes a new one, so a decision under way keeps the one it started
 * with and its audit row names the revision it was really decided under.
 */
export interface ConfigSnapshot {
  /** the built-in sources of this configuration (registered plugin sources are added by the engine) */
  readonly sources: readonly RuleSource[];
  readonly gates: GateSet;
  readonly flags: FlagValues;
  /** the policy revision of this configuration (lib/audit/revisions.ts), written to the decision's audit row */
  readonly revision?: string;
}

/** A snapshot with the engine's registry applied (every source a decision asks, in trace order): authorize.ts's. */
export type { DecisionSnapshot };

/**
 * A call ready to be decided: its input after the `before_tool_call` hooks (the rewritten arguments) and what the
 * hooks did. Made by prepare() (which may wait for webhook and shell hooks, outside any transaction) and decided by
 * commit() (synchronous, inside the caller's transaction).
 */
export interface PreparedCall {
  readonly input: CheckInput;
  readonly hooks?: HookPass;
  /** the decision's id, given before the hooks ran so that what they were told joins the audit row */
  readonly decisionId?: string;
  /**
   * the configuration the hooks were asked under: the call is decided under the same one after them (a reload while a
   * webhook answered does not make a call half one configuration's and half another's)
   */
  readonly snapshot?: DecisionSnapshot;
}

/** How an engine is built: where its configuration comes from, and its ports, fixed for its lifetime. */
export interface EngineOptions {
  /**
   * The configuration in force as a snapshot, asked once at the start of every decision (the application's; see
   * ConfigSnapshot). Without it the engine builds one from `sources`, `gates` and the flagValues port.
   */
  config?: () => ConfigSnapshot;
  /** the default sources, installed at the first check and again after markUninitialized() (without `config`) */
  sources?: () => RuleSource[];
  /** the gates in force, read at every decision (without `config`) */
  gates?: () => GateSet;
  ports?: EnginePorts;
}

/** An entry of the registry: a registered source, or the built-in source of that name in each decision's snapshot. */
type RegistryEntry = { readonly name: string; readonly source?: RuleSource };

const EMPTY_FLAGS: FlagValues = new Map();
const NO_PORTS: EnginePorts = { flagValues: () => EMPTY_FLAGS };
const NO_SOURCES = (): RuleSource[] => [];
const NO_GATES = (): GateSet => EMPTY_GATES;

/**
 * The permission engine: a registry of rule sources and the resolution of their rules.
 *
 * `check` is the pure question; `decide` also records what must be recorded (denials before they are returned,
 * pending approvals for ASK, consumption of a used approval); `enforce` is `decide` that throws.
 */
export class PermissionEngine {
  private registry: readonly RegistryEntry[] = [];
  /** bumped at every change of the registry: a snapshot made before it is not reused */
  private registryVersion = 0;
  private initialized = false;
  private readonly config: () => ConfigSnapshot;
  private readonly ports: EnginePorts;
  private memo: { config: ConfigSnapshot; version: number; snapshot: DecisionSnapshot } | undefined;

  constructor(options: EngineOptions = {}) {
    this.ports = options.ports ?? NO_PORTS;
    this.config = options.config ?? configOf(options.sources ?? NO_SOURCES, options.gates ?? NO_GATES, () => this.ports.flagValues());
  }

  /**
   * Add a plugin source. Its rules are attributed to its name (and each rule's `id`): a plugin cannot write a rule
   * in the name of a built-in source, so its name may not be one.
   */
  registerSource(plugin: PluginRuleSource): void {
    this.ensureInitialized(this.config());
    if (!plugin || typeof plugin.name !== 'string' || plugin.name === '' || typeof plugin.rules !== 'function') {
      throw new TypeError('A rule source is an object with a non-empty name and a rules(context) function.');
    }
    if (isBuiltInSource(plugin.name)) throw new Error(`"${plugin.name}" is the name of a built-in rule source; a plugin source needs a name of its own.`);
    if (this.registry.some((s) => s.name === plugin.name)) {
      throw new Error(`A rule source named "${plugin.name}" is already registered.`);
    }
    this.setRegistry([...this.registry, { name: plugin.name, source: pluginSource(plugin) }]);
  }

  unregisterSource(name: string): boolean {
    this.ensureInitialized(this.config());
    const before = this.registry.length;
    this.setRegistry(this.registry.filter((s) => s.name !== name));
    return this.registry.length !== before;
  }

  /** Clear the registry. It stays empty (no lazy defaults) until markUninitialized() or registerSource(). */
  resetSources(): void {
    this.setRegistry([]);
    this.initialized = true;
  }

  /** The next check installs the default sources again, replacing the registry. */
  markUninitialized(): void {
    this.initialized = false;
    this.registryVersion++;
  }

  /** The sources a decision taken now would ask, in trace order. */
  listSources(): readonly RuleSource[] {
    return this.snapshot().sources;
  }

  private setRegistry(entries: readonly RegistryEntry[]): void {
    this.registry = entries;
    this.registryVersion++;
  }

  private ensureInitialized(config: ConfigSnapshot): void {
    if (this.initialized) return;
    // The built-in sources by name: each decision asks the one of its own snapshot.
    this.registry = config.sources.map((s) => ({ name: s.name }));
    this.registryVersion++;
    this.initialized = true;
  }

  /**
   * The snapshot a decision is taken under: the configuration in force now with the registry applied, frozen. The
   * same object while neither changes, so a decision costs no allocation for it.
   */
  snapshot(): DecisionSnapshot {
    const config = this.config();
    this.ensureInitialized(config);
    const memo = this.memo;
    if (memo && memo.config === config && memo.version === this.registryVersion) return memo.snapshot;
    const builtIn = new Map(config.sources.map((s) => [s.name, s]));
    const sources: RuleSource[] = [];
    for (const entry of this.registry) {
      const source = entry.source ?? builtIn.get(entry.name);
      if (source) sources.push(source);
    }
    const snapshot: DecisionSnapshot = Object.freeze({ sources: Object.freeze(sources), gates: config.gates, flags: config.flags, revision: config.revision });
    this.memo = { config, version: this.registryVersion, snapshot };
    return snapshot;
  }

  /**
   * Build the context the sources see: the input plus flag values and, for tool calls, the approval state.
   * Built field by field rather than by spreading: this runs on every decision, and the spread dominated its cost.
   */
  /** The context of this call: the gate that covers it, and the approval state of this exact call from the store. */
  private contextFor(input: CheckInput, snap: DecisionSnapshot): PermissionContext {
    const gate = gateOfCall(snap, input);
    const approval = input.kind === 'tool' ? this.ports.approvalState?.(input, gate) : undefined;
    if (isPromise(approval)) throw new EngineIsAsync('check');
    return contextOf(snap, input, approval, gate);
  }

  /** contextFor(), waiting for the approval state when the store answers asynchronously. */
  private *contextSteps(input: CheckInput, snap: DecisionSnapshot): Generator<unknown, PermissionContext, unknown> {
    const gate = gateOfCall(snap, input);
    const approval = input.kind === 'tool' ? ((yield this.ports.approvalState?.(input, gate)) as ApprovalState | undefined) : undefined;
    return contextOf(snap, input, approval, gate);
  }

  /** The decision of the snapshot's sources for this context (authorize.ts); `decisionId` when it is being taken. */
  private evaluate(context: PermissionContext, snap: DecisionSnapshot, decisionId?: string): CheckResult {
    return decideContext(snap, context, decisionId);
  }

  /** The decision for this context, with the winning rule and the trace. Records nothing. */
  check(input: CheckInput): CheckResult {
    if (this.ports.async) throw new EngineIsAsync('check');
    const snap = this.snapshot();
    return this.evaluate(this.contextFor(input, snap), snap);
  }

  /** check(), with a store that answers asynchronously (it reads the call's approval state). Records nothing. */
  async checkAsync(input: CheckInput): Promise<CheckResult> {
    const snap = this.snapshot();
    const context = drive(this.contextSteps(input, snap));
    return this.evaluate(isPromise(context) ? await context : context, snap);
  }

  /**
   * The `before_tool_call` hooks of a tool call, run when the call would be allowed or would ask (a DENY is final):
   * they may block it or rewrite its arguments. Synchronous unless a webhook or shell hook of this call has to be
   * waited for. Calls no hook applies to (and HTTP requests) pass through without a second evaluation. `sync`: the
   * caller cannot wait (it holds a transaction); a call whose hooks would wait is refused with HookWouldWait.
   */
  prepare(input: CheckInput, options: { sync?: boolean } = {}): PreparedCall | Promise<PreparedCall> {
    return this.prepareWith(input, options.sync === true);
  }

  private prepareWith(input: CheckInput, sync: boolean): PreparedCall | Promise<PreparedCall> {
    const hooks = this.ports.callHooks;
    if (input.kind !== 'tool' || !hooks || !hooks.appliesBefore(input.agent, input.tool)) return { input };
    const snap = this.snapshot();
    const context = this.ports.async ? drive(this.contextSteps(input, snap)) : this.contextFor(input, snap);
    if (isPromise(context)) return context.then((c) => this.prepareFrom(input, c as PermissionContext & ToolContext, snap, sync));
    return this.prepareFrom(input, context as PermissionContext & ToolContext, snap, sync);
  }

  private prepareFrom(input: CheckInput, context: PermissionContext & ToolContext, snap: DecisionSnapshot, sync: boolean): PreparedCall | Promise<PreparedCall> {
    // The hooks hear of the decision as the sources see it, with the id its audit row will carry (a DENY is final:
    // no hook runs, and the call is decided under this snapshot with that id).
    const result = this.evaluate(context, snap, newDecisionId());
    if (result.decision === 'DENY') return { input, decisionId: result.decisionId, snapshot: snap };
    const pass = this.ports.callHooks!.before({ context, result }, { sync });
    return isPromise<HookPass>(pass) ? pass.then((p) => preparedOf(input, p, result.decisionId, snap)) : preparedOf(input, pass, result.decisionId, snap);
  }

  /**
   * The decision, with its consequences: a DENY is recorded before it is returned, an ASK gets (or reuses) a pending
   * approval bound to this exact call, and an ALLOW that used an approval consumes it, exactly once. Synchronous: a
   * call whose hooks would have to wait (webhook, shell) is refused with HookWouldWait; use decideAsync() for it.
   */
  decide(input: CheckInput, meta: DecisionMeta = {}): CheckResult {
    if (this.ports.async) throw new EngineIsAsync('decide');
    return this.commit(this.prepareWith(input, true) as PreparedCall, meta);
  }

  /**
   * decide(), waiting for webhook and shell hooks first (outside any transaction), then deciding: synchronously with a
   * synchronous store, awaiting it with an asynchronous one.
   */
  async decideAsync(input: CheckInput, meta: DecisionMeta = {}): Promise<CheckResult> {
    const p = this.prepare(input);
    const prepared = isPromise<PreparedCall>(p) ? await p : p;
    return this.ports.async ? this.commitAsync(prepared, meta) : this.commit(prepared, meta);
  }

  /**
   * Decide a prepared call and record it: evaluated again on the arguments the hooks let through, under the snapshot the
   * hooks were asked under (the approval state is read again: it may have moved while a webhook answered), a block of a
   * hook turned into a DENY attributed to it.
   */
  commit(prepared: PreparedCall, meta: DecisionMeta = {}): CheckResult {
    if (this.ports.async) throw new EngineIsAsync('decide');
    const started = performance.now();
    const result = drive(this.commitSteps(prepared, meta));
    if (isPromise(result)) throw new Error('A port of this synchronous engine answered with a promise: declare the store async.');
    this.ports.observe?.(prepared.input.kind, result, (performance.now() - started) / 1000);
    return result;
  }

  /** commit(), with a store that answers asynchronously. */
  async commitAsync(prepared: PreparedCall, meta: DecisionMeta = {}): Promise<CheckResult> {
    const started = performance.now();
    const step = drive(this.commitSteps(prepared, meta));
    const result = isPromise<CheckResult>(step) ? await step : step;
    this.ports.observe?.(prepared.input.kind, result, (performance.now() - started) / 1000);
    return result;
  }

  /**
   * The decision and its consequences, written once for both kinds of store (see steps.ts). Taken under one snapshot,
   * whose revision its audit row names, whatever is reloaded while a port is awaited.
   */
  private *commitSteps(prepared: PreparedCall, meta: DecisionMeta): Generator<unknown, CheckResult, unknown> {
    const input = prepared.input;
    const snap = prepared.snapshot ?? this.snapshot();
    for (let attempt = 0; attempt < 3; attempt++) {
      const context = yield* this.contextSteps(input, snap);
      let result = this.evaluate(context, snap, attempt === 0 && prepared.decisionId ? prepared.decisionId : newDecisionId());
      if (prepared.hooks) result = withHooks(result, prepared.hooks);
      if (result.decision === 'DENY') return yield* this.recorded(context, result, snap, meta);
      if (result.decision === 'ASK') {
        if (context.kind !== 'tool') {
          // An ASK has no meaning for an HTTP request: nobody can approve it, so it is refused and recorded.
          return yield* this.recorded(context, { ...result, decision: 'DENY' }, snap, meta);
        }
        if (context.approval?.status === 'pending' && context.approval.id) {
          // This exact call is already waiting for an operator: answer with that request, nothing to write.
          return yield* this.recorded(context, { ...result, approvalId: context.approval.id }, snap, meta);
        }
        if (!this.ports.requestApproval) {
          throw new Error('This engine has no approval store: an ASK decision cannot be turned into a request.');
        }
        const approvalId = (yield this.ports.requestApproval(context, result)) as string;
        return yield* this.recorded(context, { ...result, approvalId }, snap, meta);
      }
      if (context.approval?.status === 'approved' && context.approval.id) {
        // The approval authorises one run. If another caller consumed it first, decide again (it will ask).
        if (!this.ports.consumeApproval || ((yield this.ports.consumeApproval(context.approval.id, context as PermissionContext & ToolContext)) as boolean)) {
          return yield* this.recorded(context, result, snap, meta);
        }
        continue;
      }
      return yield* this.recorded(context, result, snap, meta);
    }
    throw new Error('The approval of this call changed state repeatedly while it was being decided; try again.');
  }

  /** A tool call allowed by this engine finished: the `after_tool_call` hooks hear of it (never awaited). */
  finished(call: ToolCallFinished): void {
    this.ports.callHooks?.finished?.(call);
  }

  /**
   * Offer the decision to the audit trail, with the revision of the snapshot it was taken under; a decision that cannot
   * be recorded is refused (AuditUnavailable). The result is frozen from here on: what was recorded is what is answered.
   */
  private *recorded(context: PermissionContext, built: CheckResult, snap: DecisionSnapshot, meta: DecisionMeta): Generator<unknown, CheckResult, unknown> {
    const result = Object.freeze(built);
    const recorder = this.ports.recorder;
    if (!recorder) return result;
    try {
      // A synchronous recorder throws here; an asynchronous one rejects, and the rejection is thrown in at the yield.
      yield recorder.record({
        kind: context.kind,
        context: context as PermissionContext & (ToolContext | HttpContext),
        result,
        ip: meta.ip,
        background: meta.background,
        revision: snap.revision,
      });
    } catch (error) {
      throw new AuditUnavailable(error);
    }
    if (result.decision === 'DENY') this.ports.callHooks?.decided?.(context, result);
    return result;
  }

  /** decide(), throwing PermissionDenied for DENY and ApprovalRequired for ASK. */
  enforce(input: CheckInput): CheckResult {
    return enforced(this.decide(input));
  }

  /** decideAsync(), throwing PermissionDenied for DENY and ApprovalRequired for ASK. */
  async enforceAsync(input: CheckInput): Promise<CheckResult> {
    return enforced(await this.decideAsync(input));
  }
}

/** A synchronous method of an engine whose store answers asynchronously (PostgreSQL). */
export class EngineIsAsync extends Error {
  static readonly kind = 'EngineIsAsync';
  readonly code = 'ENGINE_IS_ASYNC';
  constructor(method: 'check' | 'decide') {
    super(`This engine's store answers asynchronously: use ${method}Async() instead of ${method}().`);
    brand(this, EngineIsAsync);
  }
}

function preparedOf(input: CheckInput, pass: HookPass, decisionId: string | undefined, snapshot: DecisionSnapshot): PreparedCall {
  const rewritten = pass.arguments === input.arguments ? input : ({ ...input, arguments: pass.arguments } as CheckInput);
  return { input: rewritten, hooks: pass, decisionId, snapshot };
}

/** The result with what the hooks did: their outcomes, the arguments they changed, and a block as the winning DENY. */
function withHooks(evaluated: CheckResult, pass: HookPass): CheckResult {
  const changedBy = pass.outcomes.filter((o) => o.outcome === 'rewrote').map((o) => o.hook);
  const result: CheckResult =
    changedBy.length > 0
      ? { ...evaluated, hooks: pass.outcomes, arguments: pass.arguments, argumentsChangedBy: changedBy, originalArgumentsSha256: pass.originalArgumentsSha256 }
      : { ...evaluated, hooks: pass.outcomes };
  if (!pass.blocked || result.decision === 'DENY') return result;
  // The hook's refusal outranks what the sources said (they said ALLOW or ASK: hooks run on nothing else).
  const rule: PermissionRule = { decision: 'DENY', priority: PRIORITY.hook, attribution: { source: 'hook', id: pass.blocked.hook }, reason: pass.blocked.reason };
  return { ...result, decision: 'DENY', rule, trace: [...result.trace, rule], ruleSource: ruleSourceOf(rule.attribution), reason: rule.reason, approvalId: undefined };
}

/**
 * A snapshot source for an engine built from parts (tests, benchmarks, the policy tests' candidate configurations):
 * the default sources once, the gates and flag values as they are at each decision; the same object while they are.
 */
function configOf(sources: () => RuleSource[], gates: () => GateSet, flags: () => FlagValues): () => ConfigSnapshot {
  let builtIns: readonly RuleSource[] | undefined;
  let last: ConfigSnapshot | undefined;
  return () => {
    builtIns ??= Object.freeze([...sources()]);
    const g = gates();
    const f = flags();
    if (!last || last.gates !== g || last.flags !== f || last.sources !== builtIns) last = Object.freeze({ sources: builtIns, gates: g, flags: f });
    return last;
  };
}

/** A plugin source as the engine runs it: each of its rules attributed to the plugin's name and the rule's id. */
function pluginSource(plugin: PluginRuleSource): RuleSource {
  const attributedTo = plugin.name as PluginSource;
  return {
    name: plugin.name,
    attributedTo,
    rules: (context) =>
      plugin.rules(context).map((r) => ({ decision: r.decision, priority: r.priority, reason: r.reason, attribution: r.id === undefined ? { source: attributedTo } : { source: attributedTo, id: r.id } })),
  };
}
