/**
 * The application: the database, the stores, the configuration files and the permission engine, wired once.
 * Route handlers, the CLI, the demo team and the tests all start here; only the options differ.
 */
import { join, resolve as resolvePath } from 'node:path';
import { openDatabase, SERVER_WAL_AUTOCHECKPOINT_PAGES, type Db, type SyncMode } from '@/db/client';
import { parseDbLocation } from '@/db/location';
import { startCheckpointer, type Checkpointer } from '@/db/checkpointer';
import { ApprovalStore, approvalRequestOf, type ApprovalEvent } from './approvals/store';
import { codeGateSpecs, DEFAULT_APPROVAL_TTL_SECONDS } from './approvals/gates';
import { DenialStore } from './audit/denials';
import { AuditRecorder } from './audit/recorder';
import { RevisionStore, type RevisionContent } from './audit/revisions';
import { Checkpointer as AuditCheckpointer, keyDirFor, loadOrCreateSigningKey } from './audit/checkpoints';
import { SecurityEventQueries } from './audit/security-events';
import { catchUpIfBehind } from './audit/denial-rollup';
import { catchUpSearchIndex } from './audit/denial-search';
import { AuthStore } from './auth/store';
import { randomPassword } from './auth/secrets';
import { EMPTY_AGENTS, parseAgents, type AgentsConfig } from './config/agents';
import { WatchedFile } from './config/watched-file';
import { FlagService } from './flags/service';
import { PLATFORM_TOOLS } from './agents/platform-tools';
import { PermissionEngine, type RuleSource } from './permissions';
import { builtInSources } from './config/sources';
import { assertPolicyTests, NO_POLICY_TESTS, parsePolicyTests, policyTestFiles, type PolicyConfig, type PolicyTests } from './config/policy-tests';
import type { GateSet, GateSpec } from './permissions/gates';
import { EMPTY_POLICY, parsePolicy, type CompiledPolicy } from './permissions/policy';
import { approvalDenial, approvalSecurityEvent } from './audit/approval-events';
import { AppError } from './errors';
import { DEFAULT_FLAG_VALUES } from './config/sources';
import { observeDecision, processMetrics, timedRecorder } from './ops/metrics';
import type { WatchedFileStatus } from './config/watched-file';
import { NO_NOTIFICATIONS, parseNotifications, type NotificationConfig } from './notifications/config';
import { NotificationService } from './notifications/service';
import { NO_HOOKS, parseHooks, type HooksConfig } from './hooks/config';
import { HookRunner, type TypeScriptHook } from './hooks/runner';
import { SqliteRateCounter } from './hooks/rates';
import { activeProfiles, gatesWithProfiles, lockedFlagDefaults, profileTestFiles, withProfileRules, type ActiveProfiles } from './profiles/load';

export interface AppOptions {
  dbPath: string;
  /** folder with agents.yaml and permission_policies.yaml (default ./config) */
  configDir?: string;
  /** policy file (default <configDir>/permission_policies.yaml) */
  policyFile?: string;
  env?: Readonly<Record<string, string | undefined>>;
  /** compliance profiles, comma-separated (default: SWARM_PROFILE, else `profile:` in <configDir>/swarm.yaml) */
  profile?: string;
  sync?: SyncMode;
  /** poll the config files for changes (servers: yes; one-shot CLI commands: no) */
  watchConfig?: boolean;
  /** checkpoint the WAL on a worker thread (long-lived processes: the server, the demo) */
  backgroundCheckpoints?: boolean;
  /** expire due approval requests every second and record them (the server) */
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
}

export interface StartupReport {
  /** set when this start created the first admin */
  createdAdmin?: { username: string; password: string; generated: boolean };
}

export class SwarmApp {
  readonly db: Db;
  readonly denials: DenialStore;
  readonly approvals: ApprovalStore;
  readonly flags: FlagService;
  readonly auth: AuthStore;
  /** the gates declared in code (requireApproval on the platform's tools), merged with config/gates.yaml */
  readonly codeGates: readonly GateSpec[] = codeGateSpecs(PLATFORM_TOOLS);
  readonly agentsFile: WatchedFile<AgentsConfig>;
  readonly policyFile: WatchedFile<CompiledPolicy>;
  readonly gatesFile: WatchedFile<GateSet>;
  /** config/notifications.yaml: channels (their URLs and secrets resolved from the environment) and what they hear */
  readonly notificationsFile: WatchedFile<NotificationConfig>;
  /** queues notifications where events are seen and delivers them in the background (lib/notifications) */
  readonly notifications: NotificationService;
  /** config/hooks.yaml: lifecycle hooks that block, rewrite, rate-limit or report tool calls */
  readonly hooksFile: WatchedFile<HooksConfig>;
  /** runs the hooks of config/hooks.yaml and those registered in code (registerHook) around every tool call */
  readonly hooks: HookRunner;
  /** config/policy_tests.yaml and <policy file>.test.yaml: a reload whose tests fail is refused */
  readonly testFiles: WatchedFile<PolicyTests>[];
  readonly securityEvents: SecurityEventQueries;
  /** the one writer of the audit trail: denials, security events, allowed decisions when decision_log_all is on */
  readonly recorder: AuditRecorder;
  readonly revisions: RevisionStore;
  readonly engine: PermissionEngine;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** the SQLite file (SWARM_DB as a path) */
  readonly dbFile: string;
  /** the active compliance profiles: their rules, gates, tests, locked flags, retention, masking and control mapping */
  readonly profiles: ActiveProfiles;
  /**
   * Set while the decision listener runs a group of decisions inside one transaction: nothing may wait for I/O then,
   * so a call whose hooks would (webhook, shell) is refused with HookWouldWait instead of holding the database.
   */
  decisionsHoldTransaction = false;
  private readonly withProfiles = new WeakMap<CompiledPolicy, CompiledPolicy>();
  private readonly checkpointer: Checkpointer | undefined;
  private rollupTimer: NodeJS.Timeout | undefined;
  private searchTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  /** when the approval sweeper last ran (seconds since the epoch), for the readiness check */
  private lastSweepAt = 0;
  private auditTimer: NodeJS.Timeout | undefined;
  private auditCheckpointer: AuditCheckpointer | undefined;
  private revisionMemo: { key: readonly unknown[]; revision: string } | undefined;
  private closed = false;

  constructor(readonly options: AppOptions) {
    // A URL the product cannot use is refused here, before anything starts (never a file named after it).
    const where = parseDbLocation(options.dbPath);
    if (where.kind === 'postgres') {
      throw new Error(
        `SWARM_DB names a PostgreSQL database (${where.shown}). This version runs its server on SQLite (a file path); on PostgreSQL it migrates (npx swarm db migrate), copies a trail (npx swarm db copy) and verifies it (npx swarm audit verify --db URL).`,
      );
    }
    this.dbFile = where.path;
    this.env = options.env ?? process.env;
    const configDir = resolvePath(/*turbopackIgnore: true*/ options.configDir ?? (this.env.SWARM_CONFIG_DIR || 'config'));
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
    this.db = openDatabase({
      path: this.dbFile,
      sync: options.sync ?? (this.env.SWARM_DB_SYNC === 'full' ? 'full' : 'normal'),
      walAutocheckpointPages: options.backgroundCheckpoints ? SERVER_WAL_AUTOCHECKPOINT_PAGES : undefined,
    });
    this.checkpointer = options.backgroundCheckpoints ? startCheckpointer(this.dbFile) : undefined;
    if (options.backgroundCheckpoints) {
      // Long-lived processes keep the explorer's daily counts close to the audit table, so the first summary after a
      // quiet spell does not pay for a large catch-up. Best effort: summaries stay exact either way.
      this.rollupTimer = setInterval(() => {
        try {
          catchUpIfBehind(this.db);
        } catch (error) {
          console.error('Counting denials into the daily table failed; summaries read the audit table meanwhile.', error);
        }
      }, 60_000);
      this.rollupTimer.unref();
      // The free-text index of the denials follows the writes within a second (lib/audit/denial-search.ts); searches
      // scan the rows it does not hold yet, so they stay exact meanwhile.
      this.searchTimer = setInterval(() => {
        try {
          catchUpSearchIndex(this.db.$client);
        } catch (error) {
          console.error('Indexing new denials for search failed; searches scan them meanwhile.', error);
        }
      }, 1_000);
      this.searchTimer.unref();
    }
    this.denials = new DenialStore(this.db);
    this.securityEvents = new SecurityEventQueries(this.db);
    this.revisions = new RevisionStore(this.db);
    this.flags = new FlagService(this.db, this.env, undefined, this.profiles.locks);
    this.recorder = new AuditRecorder(this.db.$client, {
      revision: () => this.currentRevision(),
      logAllDecisions: () => this.flags.values().get('decision_log_all') === true,
      maskKeys: this.profiles.maskKeys,
    });
    this.notifications = new NotificationService({
      db: this.db,
      config: () => this.notificationsFile.current,
      env: this.env,
      maskKeys: this.profiles.maskKeys,
      origin: this.env.SWARM_PROCESS || 'app',
    });
    this.approvals = new ApprovalStore(this.db, (event) => {
      this.recordApproval(event);
      // Queued in the same transaction as the request (never sent here: the deliverer sends it in the background).
      this.notifications.onApproval(event);
    });
    this.hooks = new HookRunner({
      hooks: () => this.hooksFile.current,
      flags: () => this.flags.values(),
      cwd: configDir,
      maskKeys: this.profiles.maskKeys,
      rates: new SqliteRateCounter(this.db.$client),
      onFailure: (f) =>
        this.recorder.record({ kind: 'hook', type: 'hook.failed', actor: 'system', outcome: 'failed', target: f.target ?? null, detail: { hook: f.hook, event: f.event, action: f.action, reason: f.reason } }),
    });
    this.auth = new AuthStore(this.db, (e) =>
      this.recorder.record({ kind: 'auth', type: e.type, actor: e.by, outcome: 'succeeded', target: e.target, detail: e.detail }),
    );
    this.engine = this.buildEngine();
    if (options.sweepApprovals) this.startSweeper();
    if (options.deliverNotifications ?? options.sweepApprovals) this.notifications.startDelivery();
    if (options.server) this.startServerAudit();
  }

  /**
   * The policy revision in force: the content hash of the configuration files and the flag values, its content kept
   * once in policy_revisions. Recomputed only when a file version or the flag values change.
   */
  currentRevision(): string {
    const flags = this.flags.values();
    const key = [this.agentsFile.current, this.policyFile.current, this.gatesFile.current, this.hooksFile.current, flags] as const;
    const memo = this.revisionMemo;
    if (memo && memo.key.every((k, i) => k === key[i])) return memo.revision;
    const content: RevisionContent = {
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
    const revision = this.revisions.remember(content);
    this.revisionMemo = { key, revision };
    return revision;
  }

  /**
   * After a transaction of several decisions was rolled back (a batch, a group commit): what was remembered inside it
   * may not be stored, so the policy revision in force is stored again with the next row that names it.
   */
  forgetUncommitted(): void {
    this.revisionMemo = undefined;
    this.revisions.forget();
  }

  /**
   * A server records its start, every configuration version it loads or refuses, and its stop; and it signs the heads
   * of the audit chains every 10 seconds when they moved (every 1,000 rows sooner), and at shutdown.
   */
  private startServerAudit(): void {
    const key = loadOrCreateSigningKey(keyDirFor(this.dbFile, this.env));
    this.auditCheckpointer = new AuditCheckpointer(this.db.$client, key);
    this.recordProfileSwitch();
    this.recorder.record({
      kind: 'system',
      type: 'server.started',
      actor: 'system',
      outcome: 'succeeded',
      detail: { pid: process.pid, revision: this.currentRevision(), profiles: [...this.profiles.names] },
    });
    for (const file of this.configFiles()) {
      this.recorder.record({ kind: 'config', type: 'config.loaded', actor: 'system', outcome: 'succeeded', target: file.status().path, detail: { revision: this.currentRevision() } });
      file.onLoaded(() =>
        this.recorder.record({ kind: 'config', type: 'config.loaded', actor: 'system', outcome: 'succeeded', target: file.status().path, detail: { revision: this.currentRevision() } }),
      );
    }
    let ticks = 0;
    this.auditTimer = setInterval(() => {
      try {
        this.auditCheckpointer?.checkpoint({ minRows: ++ticks % 5 === 0 ? 1 : 1000 });
      } catch (error) {
        console.error('Signing a checkpoint of the audit trail failed; retrying.', error);
      }
    }, 2_000);
    this.auditTimer.unref();
    process.once('exit', () => this.close());
  }

  /**
   * Switching compliance profiles is a security event: the profiles of this start are compared with those of the
   * previous server start recorded in the trail.
   */
  private recordProfileSwitch(): void {
    const previous = this.securityEvents.ofType('server.started', 1)[0];
    const before = previous ? ((JSON.parse(previous.detailJson ?? '{}') as { profiles?: string[] }).profiles ?? []) : [];
    const now = [...this.profiles.names];
    if (!previous && now.length === 0) return;
    if (before.length === now.length && before.every((n, i) => n === now[i])) return;
    this.recorder.record({
      kind: 'config',
      type: 'profile.switched',
      actor: 'system',
      outcome: 'succeeded',
      target: now.join(',') || '(none)',
      detail: { from: before, to: now, selected_by: this.profiles.selectedBy },
    });
  }

  private signer(): AuditCheckpointer {
    this.auditCheckpointer ??= new AuditCheckpointer(this.db.$client, loadOrCreateSigningKey(keyDirFor(this.dbFile, this.env)));
    return this.auditCheckpointer;
  }

  /** Sign the heads of the audit chains now (when they moved since the last checkpoint). */
  checkpointAudit(): string[] {
    const notes = this.signer().checkpoint();
    if (notes.length > 0) this.recorder.record({ kind: 'audit', type: 'audit.checkpointed', actor: 'system', outcome: 'succeeded', detail: { checkpoints: notes.length } });
    return notes;
  }

  /**
   * The cut-off of an archive, checked against the retention of the active profiles: rows younger than the longest
   * retention minimum stay in the live trail. Throws AppError naming the profile and its basis.
   */
  archivableBefore(before: number, now = Date.now() / 1000): number {
    const r = this.profiles.retention;
    if (r && before > now - r.minDays * 86_400) {
      const limit = new Date((now - r.minDays * 86_400) * 1000).toISOString().slice(0, 10);
      throw new AppError(
        'CONFLICT',
        `The compliance profile ${r.profile} keeps audit rows ${r.minDays} days in the live trail (${r.basis}); archive only rows before ${limit}.`,
      );
    }
    return before;
  }

  /** The newest signed checkpoint of each chain. */
  auditCheckpoints(): { chain: string; note: string }[] {
    return this.signer().latest();
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

  private configFiles(): WatchedFile<unknown>[] {
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
        this.recorder.record({ kind: 'config', type: 'config.refused', actor: 'system', outcome: 'refused', target: file.status().path, detail: { error, revision_in_force: this.currentRevision() } });
      });
    }
  }

  /** The gates in force: code declarations merged with config/gates.yaml. */
  get gates(): GateSet {
    return this.gatesFile.current;
  }

  /**
   * Expire due approval requests within a second of their expiry, each recorded as a `hitl:<gate>` denial at the time
   * it expired. Several servers may sweep the same database: every expiry is a conditional update, so each is
   * recorded once.
   */
  private startSweeper(intervalMs = 1000): void {
    this.lastSweepAt = Date.now() / 1000;
    this.sweepTimer = setInterval(() => {
      this.lastSweepAt = Date.now() / 1000;
      try {
        this.approvals.expireDue();
      } catch (error) {
        console.error('Expiring due approval requests failed; retrying in a second.', error);
      }
      try {
        // Requests nearing their expiry and denial bursts (config/notifications.yaml): a query or two, queued only.
        this.notifications.tick();
      } catch (error) {
        console.error('Checking for notifications failed; retrying in a second.', error);
      }
    }, intervalMs);
    this.sweepTimer.unref();
  }

  /** The five default sources, in the order the trace lists them. */
  defaultSources(): RuleSource[] {
    return builtInSources(() => this.agentsFile.current, () => this.policy);
  }

  /** A policy ASK rule may match calls of this tool: the engine then needs the call's approval state. */
  private policyMayAsk(tool: string): boolean {
    const p = this.policy;
    return p.askAnyTool || p.askTools.has(tool);
  }

  /** This application's engine: built once, wired to this application's files and stores. */
  private buildEngine(): PermissionEngine {
    const engine = this.newEngine();
    // Metrics (lib/ops/metrics.ts): every decision, by decision and rule-source family, and how long it took.
    // Every decision ends in commit() or commitAsync() (decide() and decideAsync() alike); the time a webhook hook took
    // is not in it.
    const commit = engine.commit.bind(engine);
    engine.commit = (prepared, meta) => {
      const started = performance.now();
      const result = commit(prepared, meta);
      observeDecision(prepared.input.kind, result, (performance.now() - started) / 1000);
      return result;
    };
    const commitAsync = engine.commitAsync.bind(engine);
    engine.commitAsync = async (prepared, meta) => {
      const started = performance.now();
      const result = await commitAsync(prepared, meta);
      observeDecision(prepared.input.kind, result, (performance.now() - started) / 1000);
      return result;
    };
    return engine;
  }

  private newEngine(): PermissionEngine {
    return new PermissionEngine({
      sources: () => this.defaultSources(),
      gates: () => this.gatesFile.current,
      ports: {
        flagValues: () => this.flags.values(),
        approvalState: (ctx, gate) =>
          gate || this.policyMayAsk(ctx.tool)
            ? this.approvals.stateFor(ctx.agent, ctx.tool, ctx.arguments, gate?.expiresInSeconds ?? DEFAULT_APPROVAL_TTL_SECONDS)
            : undefined,
        // The invariant audit_trail_security_events: every denial is written, whatever else is configured.
        recorder: timedRecorder(this.recorder),
        requestApproval: (ctx, result) => this.approvals.request(approvalRequestOf(ctx, result)).id,
        consumeApproval: (id) => this.approvals.consume(id),
        callHooks: this.hooks,
      },
    });
  }

  /**
   * Every approval transition is a security event; a rejected or expired request is also an ASK that turned into a
   * denial, recorded in permission_denials attributed to its gate, with the decision id of the call that asked.
   */
  private recordApproval(e: ApprovalEvent): void {
    this.reportApprovalToHooks(e);
    this.recorder.record(approvalSecurityEvent(e));
    const denial = approvalDenial(e, this.profiles.maskKeys);
    if (denial) this.recorder.appendDenial(denial);
  }

  /** approval_requested and approval_decided hooks hear of the request and of its end (approved, rejected, expired). */
  private reportApprovalToHooks(e: ApprovalEvent): void {
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

  /**
   * First start (no admin yet, even if other users were added first): create the admin (SWARM_ADMIN_PASSWORD or a
   * random password, returned to be printed once), and make
   * sure SWARM_ADMIN_TOKEN, when set, is a valid admin token.
   */
  bootstrap(): StartupReport {
    const report: StartupReport = {};
    if (!this.auth.hasAdmin()) {
      const given = this.env.SWARM_ADMIN_PASSWORD;
      const password = given && given.length > 0 ? given : randomPassword();
      this.auth.createUser('admin', 'admin', password);
      report.createdAdmin = { username: 'admin', password, generated: !given };
    }
    const token = this.env.SWARM_ADMIN_TOKEN;
    if (token) {
      const admin = this.auth.findUser('admin') ?? this.auth.createUser('admin', 'admin');
      if (admin.role !== 'admin') throw new Error('SWARM_ADMIN_TOKEN is set but user "admin" is not an admin.');
      this.auth.ensureToken(token, { username: 'admin' }, 'SWARM_ADMIN_TOKEN');
    }
    return report;
  }

  /** The configuration files in force and the error that kept the last good version of each, if any. */
  configStatus(): WatchedFileStatus[] {
    return this.configFiles().map((f) => f.status());
  }

  /**
   * The background work this application was started with: the WAL checkpointer thread and the approval sweeper
   * ('off' when not configured, as for one-shot CLI commands).
   */
  backgroundStatus(now = Date.now() / 1000): { checkpointer: 'alive' | 'stopped' | 'off'; sweeper: 'alive' | 'stalled' | 'off'; closed: boolean } {
    return {
      checkpointer: this.checkpointer ? (this.checkpointer.alive() ? 'alive' : 'stopped') : 'off',
      // The sweeper ticks every second; five seconds without a tick means its timer is gone or the loop is blocked.
      sweeper: this.sweepTimer ? (now - this.lastSweepAt <= 5 ? 'alive' : 'stalled') : 'off',
      closed: this.closed,
    };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const f of this.configFiles()) f.close();
    if (this.rollupTimer) clearInterval(this.rollupTimer);
    if (this.searchTimer) clearInterval(this.searchTimer);
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.notifications.stopDelivery();
    if (this.auditTimer) {
      clearInterval(this.auditTimer);
      // A server's last words: its stop, and a checkpoint that covers everything it wrote.
      try {
        this.recorder.record({ kind: 'system', type: 'server.stopped', actor: 'system', outcome: 'succeeded', detail: { pid: process.pid } });
        this.auditCheckpointer?.checkpoint();
      } catch (error) {
        console.error('Recording the server stop failed.', error);
      }
    }
    void this.checkpointer?.stop();
    this.db.$client.close();
  }
}

export function createApp(options: AppOptions): SwarmApp {
  return new SwarmApp(options);
}

const GLOBAL_KEY = Symbol.for('swarm-permissions.app');
type GlobalWithApp = typeof globalThis & { [GLOBAL_KEY]?: SwarmApp };

/** The server's one application, from the environment (SWARM_DB, SWARM_CONFIG_DIR, SWARM_POLICY_FILE). */
export function getApp(): SwarmApp {
  const g = globalThis as GlobalWithApp;
  if (!g[GLOBAL_KEY]) {
    const app = createApp({
      dbPath: process.env.SWARM_DB ?? 'data/swarm.db',
      watchConfig: true,
      backgroundCheckpoints: true,
      sweepApprovals: true,
      enforcePolicyTests: true,
      server: true,
    });
    app.bootstrap();
    g[GLOBAL_KEY] = app;
  }
  return g[GLOBAL_KEY];
}
