/**
 * What every application has whatever its database: the configuration files (watched, guarded by the policy tests),
 * the active compliance profiles, the policy and gates in force, the policy revision, and the metrics around the
 * engine. SwarmApp (lib/app.ts, SQLite) and PgSwarmApp (lib/pg-app.ts, PostgreSQL) build their stores on it.
 */
import { join, resolve as resolvePath } from 'node:path';
import type { TxRunner, TxSteps } from '@/db/dialect';
import { codeGateSpecs, DEFAULT_APPROVAL_TTL_SECONDS } from './approvals/gates';
import { CallBinding, loadBindingKey } from './approvals/binding';
import type { ApprovalEvent, ApprovalListener } from './approvals/store';
import { recordApprovalTransition, type TransitionRecorder } from './audit/approval-events';
import type { NotificationService } from './notifications/service';
import { queueIn } from './notifications/store';
import { revisionOf, type RevisionContent } from './audit/revisions';
import { EMPTY_AGENTS, parseAgents, type AgentsConfig } from './config/agents';
import { WatchedFile, type WatchedFileStatus } from './config/watched-file';
import { PLATFORM_TOOLS } from './agents/platform-tools';
import type { AuditEvent, ConfigSnapshot, PermissionEngine, Principal, RuleSource, ToolContext } from './permissions';
import { builtInSources, DEFAULT_FLAG_VALUES } from './config/sources';
import { assertPolicyTests, NO_POLICY_TESTS, parsePolicyTests, policyTestFiles, type PolicyConfig, type PolicyTests } from './config/policy-tests';
import type { CompiledGate, GateSet, GateSpec } from './permissions/gates';
import { EMPTY_POLICY, parsePolicy, type CompiledPolicy } from './permissions/policy';
import { archivableBefore } from './audit/trail/archive';
import { processMetrics } from './ops/metrics';
import { NO_NOTIFICATIONS, parseNotifications, type NotificationConfig } from './notifications/config';
import { NO_HOOKS, parseHooks, type HooksConfig } from './hooks/config';
import type { HookRunner, TypeScriptHook } from './hooks/runner';
import { parseTrustedProxies, TRUSTED_PROXIES_ENV, type TrustedProxies } from './http/client-address';
import { activeProfiles, gatesWithProfiles, lockedFlagDefaults, profileTestFiles, withProfileRules, type ActiveProfiles } from './profiles/load';

export interface AppOptions {
  /** SWARM_DB: a SQLite file path, or a postgres:// URL (PgSwarmApp) */
  dbPath: string;
  /** folder with agents.yaml and permission_policies.yaml (default ./config) */
  configDir?: string;
  /** policy file (default <configDir>/permission_policies.yaml) */
  policyFile?: string;
  env?: Readonly<Record<string, string | undefined>>;
  /** compliance profiles, comma-separated (default: SWARM_PROFILE, else `profile:` in <configDir>/swarm.yaml) */
  profile?: string;
  /** SQLite only: the synchronous mode of the file (default SWARM_DB_SYNC, else normal) */
  sync?: 'normal' | 'full';
  /** poll the config files for changes (servers: yes; one-shot CLI commands: no) */
  watchConfig?: boolean;
  /** SQLite only: checkpoint the WAL on a worker thread (long-lived processes: the server, the demo) */
  backgroundCheckpoints?: boolean;
  /**
   * SQLite only: another process of the same server checkpoints the WAL and keeps the search index and daily counts
   * (the decision listener's worker processes, lib/server/workers.ts): the writes leave checkpoints to it, as with
   * backgroundCheckpoints, without a thread or timers of this process's own
   */
  checkpointsElsewhere?: boolean;
  /** expire due approval requests every second and record them (the server; on PostgreSQL one server at a time) */
  sweepApprovals?: boolean;
  /**
   * send the queued notifications (config/notifications.yaml) from this process (default: when it sweeps approvals).
   * Every process queues what it sees; any number may deliver, a claim keeps each row to one of them.
   */
  deliverNotifications?: boolean;
  /**
   * refuse to start when the policy tests fail (servers: yes; one-shot CLI commands read the database and must work
   * while someone fixes a policy). Reloads are always refused when their tests fail.
   */
  enforcePolicyTests?: boolean;
  /**
   * a long-lived server: record configuration loads, server start and stop, and sign checkpoints of the audit chains
   * on a timer and at shutdown (getApp: yes; the CLI and tests: no)
   */
  server?: boolean;
  /**
   * sign the heads of the audit chains when closing, if this process can read the signing key (the CLI: what a
   * command recorded is under a checkpoint when it exits, not only once a server signs it)
   */
  signOnClose?: boolean;
}

export interface StartupReport {
  /** set when this start created the first admin */
  createdAdmin?: { username: string; password: string; generated: boolean };
}

/** What the shared parts need from an application's stores. */
interface Wiring {
  flagValues(): ReadonlyMap<string, boolean>;
  /** record a security event (a failure is logged, never thrown: the file's reload itself already happened) */
  recordEvent(event: AuditEvent): void;
}

/** Revisions whose content a row may still have to store (a handful: one per configuration change). */
const KEEP_REVISIONS = 64;

export abstract class AppBase {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly configDir: string;
  /** the gates declared in code (requireApproval on the platform's tools), merged with config/gates.yaml */
  readonly codeGates: readonly GateSpec[] = codeGateSpecs(PLATFORM_TOOLS);
  readonly agentsFile: WatchedFile<AgentsConfig>;
  readonly policyFile: WatchedFile<CompiledPolicy>;
  readonly gatesFile: WatchedFile<GateSet>;
  /** config/notifications.yaml: channels (their URLs and secrets resolved from the environment) and what they hear */
  readonly notificationsFile: WatchedFile<NotificationConfig>;
  /** config/hooks.yaml: lifecycle hooks that block, rewrite, rate-limit or report tool calls */
  readonly hooksFile: WatchedFile<HooksConfig>;
  /** config/policy_tests.yaml and <policy file>.test.yaml: a reload whose tests fail is refused */
  readonly testFiles: WatchedFile<PolicyTests>[];
  /** the active compliance profiles: their rules, gates, tests, locked flags, retention, masking and control mapping */
  readonly profiles: ActiveProfiles;
  /**
   * SWARM_TRUSTED_PROXIES: the proxies whose X-Forwarded-For hops the decision listener believes (none by default).
   * Parsed here, so that every process of the server refuses to start on an entry that is not a CIDR.
   */
  readonly trustedProxies: TrustedProxies;
  abstract readonly engine: PermissionEngine;
  abstract readonly hooks: HookRunner;
  /** the one writer of the audit trail (the engine's recorder) */
  abstract readonly recorder: TransitionRecorder;
  abstract readonly notifications: NotificationService;
  private readonly withProfiles = new WeakMap<CompiledPolicy, CompiledPolicy>();
  private revisionMemo: { key: readonly unknown[]; revision: string } | undefined;
  /** the content of the revisions this process computed, for the recorder to store beside the first row naming one */
  private readonly revisionContents = new Map<string, RevisionContent>();
  private builtInsMemo: { agents: AgentsConfig; policy: CompiledPolicy; sources: readonly RuleSource[] } | undefined;
  private snapshotMemo: ConfigSnapshot | undefined;
  private bindingMemo: CallBinding | undefined;
  private wiring: Wiring | undefined;

  constructor(readonly options: AppOptions) {
    this.env = options.env ?? process.env;
    this.trustedProxies = parseTrustedProxies(this.env[TRUSTED_PROXIES_ENV]);
    const configDir = resolvePath(/*turbopackIgnore: true*/ options.configDir ?? (this.env.SWARM_CONFIG_DIR || 'config'));
    this.configDir = configDir;
    this.profiles = activeProfiles(this.env, configDir, options.profile);
    this.agentsFile = new WatchedFile(join(configDir, 'agents.yaml'), parseAgents, EMPTY_AGENTS);
    this.policyFile = new WatchedFile(
      resolvePath(/*turbopackIgnore: true*/ options.policyFile ?? (this.env.SWARM_POLICY_FILE || join(configDir, 'permission_policies.yaml'))),
      parsePolicy,
      EMPTY_POLICY,
    );
    this.gatesFile = new WatchedFile(
      join(configDir, 'gates.yaml'),
      (text, file) => gatesWithProfiles(this.codeGates, this.profiles, { text, file }),
      gatesWithProfiles(this.codeGates, this.profiles),
    );
    this.notificationsFile = new WatchedFile(join(configDir, 'notifications.yaml'), (text, file) =>
      // Only a process that sends needs the channels' URLs and secrets; the others queue (see parseNotifications).
      parseNotifications(text, file, this.env, { secrets: (options.deliverNotifications ?? options.sweepApprovals) ? 'required' : 'optional' }),
      NO_NOTIFICATIONS,
    );
    this.hooksFile = new WatchedFile(
      join(configDir, 'hooks.yaml'),
      // A server refuses a webhook hook whose URL or secret is not in its environment; a one-shot command keeps it,
      // and the hook fails (and blocks) if it runs there.
      (text, file) => parseHooks(text, file, this.env, { secrets: options.server || options.enforcePolicyTests ? 'required' : 'optional' }),
      NO_HOOKS,
    );
    this.testFiles = [...policyTestFiles(configDir, this.policyFile.path), ...profileTestFiles(configDir, this.profiles)].map(
      (f) => new WatchedFile(f, parsePolicyTests, NO_POLICY_TESTS),
    );
    if (options.enforcePolicyTests) assertPolicyTests(this.policyConfig(), this.policyTests());
    this.guardReloads();
    if (options.watchConfig) {
      for (const f of this.configFiles()) f.watch();
    }
  }

  /**
   * The key approvals are bound with (lib/approvals/binding.ts: SWARM_APPROVAL_KEY, or the key folder's), loaded when
   * a call is first bound: a process that never decides a gated call never needs it. A failure is thrown again at the
   * next call (nothing is bound with a key that could not be had).
   */
  readonly callBinding = (): CallBinding => (this.bindingMemo ??= CallBinding.ofKey(loadBindingKey(this.options.dbPath, this.env)));

  /** Called by the subclass once its stores exist. */
  protected wire(wiring: Wiring): void {
    this.wiring = wiring;
  }

  private get wired(): Wiring {
    if (!this.wiring) throw new Error('The application is not wired to its stores yet.');
    return this.wiring;
  }

  /**
   * The policy revision in force: the content hash of the configuration files and the flag values. Recomputed only
   * when a file version or the flag values change. Pure: its content is stored by the recorder, in the transaction of
   * the first row that names it (revisionContent), so a decision that records nothing writes nothing.
   */
  currentRevision(): string {
    const flags = this.wired.flagValues();
    const key = [this.agentsFile.current, this.policyFile.current, this.gatesFile.current, this.hooksFile.current, flags] as const;
    const memo = this.revisionMemo;
    if (memo && memo.key.every((k, i) => k === key[i])) return memo.revision;
    const content = this.revisionContent(flags);
    const revision = revisionOf(content);
    if (!this.revisionContents.has(revision)) {
      this.revisionContents.set(revision, content);
      if (this.revisionContents.size > KEEP_REVISIONS) this.revisionContents.delete(this.revisionContents.keys().next().value!);
    }
    this.revisionMemo = { key, revision };
    return revision;
  }

  /** The content of a revision this process computed (for the recorder, which stores it once). */
  readonly contentOfRevision = (revision: string): RevisionContent | undefined => this.revisionContents.get(revision);

  /**
   * The configuration in force as one frozen snapshot (the engine's `config`): the built-in sources bound to this
   * version of the files, the gates, the flag values and their revision. The same object until something changes; a
   * decision keeps the one it started with, whatever is reloaded meanwhile.
   */
  configSnapshot(): ConfigSnapshot {
    const flags = this.wired.flagValues();
    const gates = this.gatesFile.current;
    const revision = this.currentRevision();
    const sources = this.builtInsFor(this.agentsFile.current, this.policy);
    const memo = this.snapshotMemo;
    if (memo && memo.revision === revision && memo.flags === flags && memo.gates === gates && memo.sources === sources) return memo;
    this.snapshotMemo = Object.freeze({ sources, gates, flags, revision });
    return this.snapshotMemo;
  }

  /** The built-in sources bound to one version of the agents and policy files (their memos live as long as it does). */
  private builtInsFor(agents: AgentsConfig, policy: CompiledPolicy): readonly RuleSource[] {
    const memo = this.builtInsMemo;
    if (memo && memo.agents === agents && memo.policy === policy) return memo.sources;
    const sources = Object.freeze(builtInSources(() => agents, () => policy));
    this.builtInsMemo = { agents, policy, sources };
    return sources;
  }

  private revisionContent(flags: ReadonlyMap<string, boolean>): RevisionContent {
    return {
      files: {
        agents: this.agentsFile.text,
        policy: this.policyFile.text,
        gates: this.gatesFile.text,
        policy_file: this.policyFile.path,
        // Absent rather than null without a hooks file, so that the revisions of a configuration without hooks stay.
        ...(this.hooksFile.text !== null ? { hooks: this.hooksFile.text } : {}),
      },
      flags: Object.fromEntries([...flags].sort(([a], [b]) => (a < b ? -1 : 1))),
      ...(this.profiles.sources.length > 0 ? { profiles: this.profiles.sources.map((p) => ({ name: p.name, folder: p.folder, texts: p.texts })) } : {}),
    };
  }

  /**
   * Switching compliance profiles is a security event: the profiles of this start are compared with those of the
   * previous server start recorded in the trail.
   */
  protected profileSwitch(previous: { detailJson: string | null } | undefined): AuditEvent | undefined {
    const before = previous ? ((JSON.parse(previous.detailJson ?? '{}') as { profiles?: string[] }).profiles ?? []) : [];
    const now = [...this.profiles.names];
    if (!previous && now.length === 0) return undefined;
    if (before.length === now.length && before.every((n, i) => n === now[i])) return undefined;
    return {
      kind: 'config',
      type: 'profile.switched',
      actor: 'system',
      outcome: 'succeeded',
      target: now.join(',') || '(none)',
      detail: { from: before, to: now, selected_by: this.profiles.selectedBy },
    };
  }

  /** The events of a server's start: its start, then each configuration file it loaded. */
  protected startEvents(): AuditEvent[] {
    return [
      { kind: 'system', type: 'server.started', actor: 'system', outcome: 'succeeded', detail: { pid: process.pid, revision: this.currentRevision(), profiles: [...this.profiles.names] } },
      ...this.configFiles().map((file) => this.configLoaded(file)),
    ];
  }

  protected configLoaded(file: WatchedFile<unknown>): AuditEvent {
    return { kind: 'config', type: 'config.loaded', actor: 'system', outcome: 'succeeded', target: file.status().path, detail: { revision: this.currentRevision() } };
  }

  /**
   * The cut-off of an archive, checked against the retention of the active profiles: rows younger than the longest
   * retention minimum stay in the live trail. Throws AppError naming the profile and its basis.
   */
  archivableBefore(before: number, now = Date.now() / 1000): number {
    return archivableBefore(this.profiles.retention, before, now);
  }

  /** The configuration in force, as the policy tests see it. */
  policyConfig(over: Partial<PolicyConfig> = {}): PolicyConfig {
    const flags = lockedFlagDefaults(DEFAULT_FLAG_VALUES, this.profiles);
    return { agents: this.agentsFile.current, gates: this.gatesFile.current, flags, ...over, policy: this.combinedPolicy(over.policy ?? this.policyFile.current) };
  }

  /** The policy in force: the operator's file with the active profiles' rules beside it. */
  get policy(): CompiledPolicy {
    return this.combinedPolicy(this.policyFile.current);
  }

  private combinedPolicy(operator: CompiledPolicy): CompiledPolicy {
    let combined = this.withProfiles.get(operator);
    if (!combined) {
      combined = withProfileRules(operator, this.profiles);
      this.withProfiles.set(operator, combined);
    }
    return combined;
  }

  /** Every policy test case in force (all test files). */
  policyTests(replace?: { file: WatchedFile<PolicyTests>; with: PolicyTests }): PolicyTests {
    const parts = this.testFiles.map((f) => (replace && f === replace.file ? replace.with : f.current));
    return { files: parts.flatMap((p) => p.files), cases: parts.flatMap((p) => p.cases) };
  }

  protected configFiles(): WatchedFile<unknown>[] {
    return [this.agentsFile, this.policyFile, this.gatesFile, this.hooksFile, this.notificationsFile, ...this.testFiles] as WatchedFile<unknown>[];
  }

  /**
   * A new version of any configuration file takes effect only if the policy tests pass with it; otherwise it is refused
   * like a malformed file (the last good version stays, /transparency shows why) and the refusal is recorded.
   */
  private guardReloads(): void {
    this.agentsFile.setAcceptor((agents) => assertPolicyTests(this.policyConfig({ agents }), this.policyTests()));
    this.policyFile.setAcceptor((policy) => assertPolicyTests(this.policyConfig({ policy }), this.policyTests()));
    this.gatesFile.setAcceptor((gates) => assertPolicyTests(this.policyConfig({ gates }), this.policyTests()));
    for (const file of this.testFiles) file.setAcceptor((tests) => assertPolicyTests(this.policyConfig(), this.policyTests({ file, with: tests })));
    for (const file of this.configFiles()) {
      file.onRefused((error) => {
        processMetrics().reloadFailures.inc();
        this.wired.recordEvent({ kind: 'config', type: 'config.refused', actor: 'system', outcome: 'refused', target: file.status().path, detail: { error, revision_in_force: this.currentRevision() } });
      });
    }
  }

  /** The gates in force: code declarations merged with config/gates.yaml. */
  get gates(): GateSet {
    return this.gatesFile.current;
  }


  /** A policy ASK rule may match calls of this tool: the engine then needs the call's approval state. */
  protected policyMayAsk(tool: string): boolean {
    const p = this.policy;
    return p.askAnyTool || p.askTools.has(tool);
  }

  /**
   * The engine's approvalState port over a store: read only for a gated call, or one a policy ASK rule may match (the
   * other calls need no read at all).
   */
  protected approvalStatePort<S>(store: { stateFor(agent: string, tool: string, args: unknown, ttlSeconds: number, principal: Principal): S }) {
    return (ctx: ToolContext, gate: CompiledGate | undefined): S | undefined =>
      gate || this.policyMayAsk(ctx.tool) ? store.stateFor(ctx.agent, ctx.tool, ctx.arguments, gate?.expiresInSeconds ?? DEFAULT_APPROVAL_TTL_SECONDS, ctx.principal) : undefined;
  }


  /**
   * The approval store's listener, the same on both databases. Inside the transition's transaction: its audit rows
   * (recordApprovalTransition, through the engine's recorder) and its notification, queued (never sent here: the
   * deliverer sends it in the background), so that they commit with the transition or neither does. Once it has
   * committed: the approval_requested and approval_decided hooks.
   */
  protected approvalListener(): ApprovalListener {
    return {
      inTransaction: (event, tx) => this.recordApproval(event, tx),
      afterCommit: (event) => this.reportApprovalToHooks(event),
    };
  }

  private *recordApproval(event: ApprovalEvent, tx: TxRunner): TxSteps<void> {
    yield* recordApprovalTransition(this.recorder, event, tx, this.profiles.maskKeys);
    yield* queueIn(tx, this.notifications.deliveriesFor(event));
  }

  /** approval_requested and approval_decided hooks hear of the request and of its end (approved, rejected, expired). */
  protected reportApprovalToHooks(e: ApprovalEvent): void {
    // An approval of a two-person gate is decided when the last approval needed is given.
    if (e.type !== 'requested' && e.type !== 'rejected' && e.type !== 'expired' && !(e.type === 'approved' && e.row.status === 'approved')) return;
    const row = e.row;
    const requester = row.requestedBy.startsWith('agent:')
      ? { kind: 'agent' as const, id: row.requestedBy.slice('agent:'.length), role: 'viewer' as const }
      : { kind: 'user' as const, id: row.requestedBy, role: 'viewer' as const };
    this.hooks.approval(
      e.type === 'requested' ? 'approval_requested' : 'approval_decided',
      { kind: 'tool', principal: requester, agent: row.agentName, tool: row.toolName, arguments: JSON.parse(row.argumentsRedacted) as Record<string, unknown>, toolCallId: row.toolCallId ?? undefined },
      {
        id: row.id,
        gate: row.gate,
        status: row.status,
        risk: row.risk,
        requested_by: row.requestedBy,
        requested_at: new Date(row.requestedAt * 1000).toISOString(),
        expires_at: new Date(row.expiresAt * 1000).toISOString(),
        decided_by: row.decidedBy ?? null,
        reason: row.decisionReason ?? null,
      },
      row.decisionId ?? null,
    );
  }

  /**
   * Register a hook written in TypeScript (lib/hooks/runner.ts: TypeScriptHook). Refused while the flag hooks_enabled
   * is off; turning the flag off stops it at once. Returns the function that unregisters it.
   */
  registerHook(hook: TypeScriptHook): () => void {
    return this.hooks.register(hook);
  }

  /** The configuration files in force and the error that kept the last good version of each, if any. */
  configStatus(): WatchedFileStatus[] {
    return this.configFiles().map((f) => f.status());
  }

  /** Stop watching the configuration files. */
  protected closeConfig(): void {
    for (const f of this.configFiles()) f.close();
  }
}
