/**
 * The composition root: one application on either database. The configuration files (watched, guarded by the policy
 * tests), the active compliance profiles, the policy and gates in force, the policy revision, every store (one per
 * concern, over the dialect port db/dialect.ts), the engine and the decision service are built here, once.
 *
 * What differs between the databases is a DatabaseSide, built by lib/server/sqlite.ts or lib/server/postgres.ts: the
 * decision path's narrow ports (token lookup, approval ports, chain append, rate counter, commit strategy) and the
 * background work of a process (checkpoints, the sweeper, the signer). Route handlers, pages, the CLI, the demo team
 * and the tests all start here through openApp(), createApp() or getApp() (lib/server/open.ts); only the options differ.
 * This module knows neither side: each side's module builds an App of its own.
 */
import { APPROVALS_CHANNEL, ApprovalWaits } from '@/lib/approvals/wait';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve as resolvePath } from 'node:path';
import type pg from 'pg';
import type { Db } from '@/db/client';
import type { PostgresDatabase, SqliteDatabase, TxRunner, TxSteps } from '@/db/dialect';
import { parseDbLocation } from '@/db/location';
import { SqlApprovalStore } from '@/lib/approvals/store';
import type { AuditRecorder, RecorderOptions } from '@/lib/audit/trail/recorder';
import type { PgAuditRecorder } from '@/lib/audit/trail/pg-recorder';
import { SqlDenialStore, type DenialStore } from '@/lib/audit/denials/store';
import { SqlRevisionStore, type RevisionStore } from '@/lib/audit/revisions';
import { SqlSecurityEventQueries, type SecurityEventQueries } from '@/lib/audit/security-events';
import type { VerifyOptions, VerifyReport } from '@/lib/audit/trail/verify';
import { SqlAuthStore, type AuthStore } from '@/lib/auth/store';
import { SqlLoginAttempts, type LoginAttempts } from '@/lib/auth/attempts';
import { randomPassword, sha256 } from '@/lib/auth/secrets';
import type { SqliteTokenPrincipals } from '@/lib/auth/tokens-sqlite';
import type { PostgresTokenPrincipals } from '@/lib/auth/tokens-postgres';
import { DecisionService, type DecisionServiceOptions } from '@/lib/decisions/service';
import { FlagService } from '@/lib/flags/service';
import { SqlFlagStore } from '@/lib/flags/store';
import type { FlagOverride } from '@/lib/flags/resolve';
import { HookRunner, type TypeScriptHook } from '@/lib/hooks/runner';
import type { RateCounter } from '@/lib/hooks/rates';
import { NotificationService } from '@/lib/notifications/service';
import { SqlNotificationStore } from '@/lib/notifications/store';
import type { Leadership } from '@/lib/ops/leader';
import { observeDecision } from '@/lib/ops/metrics';
import type { ReportTrail } from '@/lib/reports/reader';
import { PermissionEngine, type EnginePorts } from '@/lib/permissions';
import { codeGateSpecs, DEFAULT_APPROVAL_TTL_SECONDS } from '@/lib/approvals/gates';
import { CallBinding, loadBindingKey } from '@/lib/approvals/binding';
import type { TrailProof } from '@/lib/approvals/trail';
import { CredentialSeal, type SealCheck } from '@/lib/auth/seal';
import type { ApprovalEvent, ApprovalListener } from '@/lib/approvals/store';
import { recordApprovalTransition } from '@/lib/audit/approval-events';
import { queueIn } from '@/lib/notifications/store';
import { revisionOf, type RevisionContent } from '@/lib/audit/revisions';
import { EMPTY_AGENTS, parseAgents, type AgentsConfig } from '@/lib/config/agents';
import { WatchedFile, type WatchedFileStatus } from '@/lib/config/watched-file';
import { PLATFORM_TOOLS } from '@/lib/agents/platform-tools';
import type { AuditEvent, ConfigSnapshot, Principal, RuleSource, ToolContext } from '@/lib/permissions';
import { builtInSources, DEFAULT_FLAG_VALUES } from '@/lib/config/sources';
import { assertPolicyTests, NO_POLICY_TESTS, parsePolicyTests, policyTestFiles, type PolicyConfig, type PolicyTests } from '@/lib/config/policy-tests';
import type { CompiledGate, GateSet, GateSpec } from '@/lib/permissions/gates';
import { EMPTY_POLICY, parsePolicy, type CompiledPolicy } from '@/lib/permissions/policy';
import { archivableBefore } from '@/lib/audit/trail/archive';
import { checkpointRefusedEvent, keyDirFor, openCheckpointWithAny, parseVerifierKeys, trustedVerifierKeys, type SignerOptions } from '@/lib/audit/trail/checkpoints';
import { keyFolderRecord, readSignedHeads, witnessTargets } from '@/lib/audit/trail/witness';
import { processMetrics } from '@/lib/ops/metrics';
import { NO_NOTIFICATIONS, parseNotifications, type NotificationConfig } from '@/lib/notifications/config';
import { NO_HOOKS, parseHooks, type HooksConfig } from '@/lib/hooks/config';
import { NO_MCP, parseMcpConfig, type McpConfig } from '@/lib/mcp/config';
import { allowedCommandsOnDisk } from '@/lib/mcp/allowed-commands';
import { McpPins, pinsContent, type PinsContent } from '@/lib/mcp/pins/service';
import type { PinMap } from '@/lib/mcp/pins/store';
import type { PinDirectory } from '@/lib/permissions/sources';
import { NO_SSO, parseSsoConfig, type SsoConfig } from '@/lib/sso/config';
import { SsoService } from '@/lib/sso/service';
import { AgentTokens } from '@/lib/oauth/agent-tokens';
import { parseTrustedProxies, TRUSTED_PROXIES_ENV, type TrustedProxies } from '@/lib/http/client-address';
import { activeProfiles, gatesWithProfiles, lockedFlagDefaults, profileTestFiles, withProfileRules, type ActiveProfiles } from '@/lib/profiles/load';
import { repeatWithoutOverlap } from './repeat';
import { ChangeControl, RulesUnavailable } from '@/lib/change-control/service';
import type { RuleFile, RuleTexts } from '@/lib/change-control/files';

export interface AppOptions {
  /** SWARM_DB: a SQLite file path, or a postgres:// URL */
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

/** Revisions whose content a row may still have to store (a handful: one per configuration change). */
const KEEP_REVISIONS = 64;

/** The background work of an application, for the readiness check. */
export interface BackgroundStatus {
  /** SQLite's WAL checkpointer thread ('off' on PostgreSQL and in one-shot commands) */
  checkpointer: 'alive' | 'stopped' | 'off';
  /** the approval sweeper ('standby' on PostgreSQL while another server leads) */
  sweeper: 'alive' | 'stalled' | 'standby' | 'off';
  closed: boolean;
}

/** The engine's ports that depend on the database: approvals and the recorder, and whether they answer with promises. */
export type SidePorts = Pick<EnginePorts, 'async' | 'approvalState' | 'recorder' | 'requestApproval' | 'consumeApproval'>;

/**
 * What differs between the databases (lib/server/sqlite.ts, lib/server/postgres.ts): the decision path's narrow ports,
 * synchronous on SQLite so that a group of decisions commits inside one transaction without yielding, and the
 * background work of a process. A side is built for one application and reads it only once its stores exist.
 */
export interface DatabaseSide {
  readonly database: SqliteDatabase | PostgresDatabase;
  /** SQLite: the connection (Drizzle); undefined on PostgreSQL */
  readonly db: Db | undefined;
  /** PostgreSQL: the pool; undefined on SQLite */
  readonly pool: pg.Pool | undefined;
  /** the one writer of the audit trail (the chain append of every row) */
  readonly recorder: AuditRecorder | PgAuditRecorder;
  /** the decision path's token lookup */
  readonly tokens: SqliteTokenPrincipals | PostgresTokenPrincipals;
  /** the rate counter of the rate_limit hooks */
  readonly rates: RateCounter;
  /** its last words are asynchronous: under NEXT_MANUAL_SIG_HANDLE it handles SIGTERM and SIGINT itself */
  readonly handlesSignals: boolean;
  /** the flag overrides, read at once (SQLite opens synchronously; PostgreSQL's are read by start(), asynchronously) */
  initialOverrides?(): Map<string, FlagOverride>;
  /** the MCP pins in force, read at once (SQLite; PostgreSQL's are read by start()) */
  initialPins?(): PinMap;
  /** record an event nothing waits for (a reload, a hook's failure): on SQLite at once, on PostgreSQL in the background (a failure logged) */
  recordEvent(event: AuditEvent): void;
  enginePorts(approvals: SqlApprovalStore): SidePorts;
  /** the decision service's options beyond the engine (SQLite: the connection its groups commit in) */
  decisionOptions?(): Omit<DecisionServiceOptions, 'engine'>;
  /** the background work, once every store exists (awaited on PostgreSQL, where opening is asynchronous anyway) */
  start(): void | Promise<void>;
  checkpointAudit(): string[] | Promise<string[]>;
  auditCheckpoints(): { chain: string; note: string }[] | Promise<{ chain: string; note: string }[]>;
  databaseReady(): Promise<{ ok: true } | { ok: false; detail: string }>;
  verifyAudit(verifierKey: string | undefined, options: VerifyOptions): Promise<VerifyReport>;
  /** the trail as the compliance report reads it (lib/reports/reader.ts) */
  reportTrail(): ReportTrail;
  /** the folder of the audit signing key this process reads checkpoints' keys from (none: not configured) */
  verifierKeyDir(): string | undefined;
  /** the size of the write-ahead log, bytes (none on PostgreSQL: no log of this process's to measure) */
  walBytes?(): number;
  /** where one server at a time sweeps the approvals (PostgreSQL's advisory lock); none: every process sweeps (SQLite) */
  readonly sweeperLead?: Leadership;
  backgroundStatus(): Omit<BackgroundStatus, 'sweeper'>;
  close(): void | Promise<void>;
}

/** How often the sweeper looks for expired and unused tokens (a scan of api_tokens; an expired token is refused anyway). */
const TOKEN_SWEEP_EVERY_MS = 10_000;

export class App<S extends DatabaseSide = DatabaseSide> {
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
  /** config/mcp.yaml: the upstream MCP servers the gateway puts behind the engine (lib/mcp) */
  readonly mcpFile: WatchedFile<McpConfig>;
  /** config/sso.yaml: OpenID Connect providers for people, roles from their groups, and whether passwords still work */
  readonly ssoFile: WatchedFile<SsoConfig>;
  /** config/policy_tests.yaml and <policy file>.test.yaml: a reload whose tests fail is refused */
  readonly testFiles: WatchedFile<PolicyTests>[];
  /** the active compliance profiles: their rules, gates, tests, locked flags, retention, masking and control mapping */
  readonly profiles: ActiveProfiles;
  /**
   * SWARM_TRUSTED_PROXIES: the proxies whose X-Forwarded-For hops the decision listener believes (none by default).
   * Parsed here, so that every process of the server refuses to start on an entry that is not a CIDR.
   */
  readonly trustedProxies: TrustedProxies;
  /** what differs between the databases: the decision path's ports and the background work */
  readonly side: S;
  /** the database through the dialect port, for the stores written once for both databases */
  readonly database: S['database'];
  /** the one writer of the audit trail: denials, security events, allowed decisions when decision_log_all is on */
  readonly recorder: S['recorder'];
  /** the decision path's token lookup: cached, forgotten when tokens or users change */
  readonly tokens: S['tokens'];
  readonly flags: FlagService;
  readonly revisions: RevisionStore;
  readonly denials: DenialStore;
  readonly securityEvents: SecurityEventQueries;
  /** queues notifications where events are seen and delivers them in the background (lib/notifications) */
  readonly notifications: NotificationService;
  readonly approvals: SqlApprovalStore;
  /** requests waiting for an approval's outcome (GET /api/v1/approvals/{id}?wait=), woken by its transitions */
  readonly approvalWaits: ApprovalWaits;
  /** runs the hooks of config/hooks.yaml and those registered in code (registerHook) around every tool call */
  readonly hooks: HookRunner;
  readonly auth: AuthStore;
  /** failed sign-ins, locks and the attempt under way per user name, shared with every process on the database */
  readonly loginAttempts: LoginAttempts;
  /** single sign-on for people (config/sso.yaml, lib/sso) */
  readonly sso: SsoService;
  /** access tokens of the company's identity provider, for agents (config/sso.yaml agent_tokens) */
  readonly agentTokens: AgentTokens;
  readonly engine: PermissionEngine;
  /** the one way to ask for a decision: authorize, decide, decideGroup (lib/decisions/service.ts) */
  readonly decisions: DecisionService;
  /** policy change control: proposals, votes, activations on every server, drift (lib/change-control) */
  readonly changeControl: ChangeControl;
  /** the MCP gateway's pins of upstream tool definitions, in force on every process (lib/mcp/pins) */
  readonly mcpPins: McpPins;
  private readonly withProfiles = new WeakMap<CompiledPolicy, CompiledPolicy>();
  private revisionMemo: { key: readonly unknown[]; revision: string } | undefined;
  /** the content of the revisions this process computed, for the recorder to store beside the first row naming one */
  private readonly revisionContents = new Map<string, RevisionContent>();
  private builtInsMemo: { agents: AgentsConfig; policy: CompiledPolicy; pins: PinMap; sources: readonly RuleSource[] } | undefined;
  private snapshotMemo: ConfigSnapshot | undefined;
  private bindingMemo: CallBinding | undefined;
  private sealMemo: CredentialSeal | undefined;
  private proofMemo: TrailProof | undefined;
  /** why no decision is taken now (the active revision cannot be used: ChangeControl), else undefined */
  rulesRefusal: string | undefined;
  /** the flags' store (its overrides are sealed: App.sealLegacyCredentials seals those of an older database) */
  private readonly flagStore: SqlFlagStore;
  /** the rows already reported as unverified by this process (each is recorded once) */
  private readonly unverifiedRows = new Set<string>();
  private sweepTimer: NodeJS.Timeout | undefined;
  /** when the approval sweeper last ran (seconds since the epoch), for the readiness check */
  private lastSweepAt = 0;
  /** when the sweeper last swept the tokens (ms), at most every TOKEN_SWEEP_EVERY_MS */
  private lastTokenSweepMs = 0;

  /** `side` builds what differs for this application (see openApp, createApp). */
  constructor(
    readonly options: AppOptions,
    side: (app: App<S>) => S,
  ) {
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
    this.mcpFile = new WatchedFile(
      join(configDir, 'mcp.yaml'),
      // Only a process that connects to the upstreams (the gateway's) needs their secrets; the others only read the file.
      // A revision's text (from the database) starts only the commands this server's disk allows.
      (text, file, origin) =>
        parseMcpConfig(text, file, this.env, { secrets: options.server ? 'required' : 'optional', ...(origin === 'revision' ? { allowedCommands: this.allowedMcpCommands() } : {}) }),
      NO_MCP,
    );
    this.ssoFile = new WatchedFile(
      join(configDir, 'sso.yaml'),
      // Only a server signs people in (and needs the client secrets); a command or a page only shows the file.
      (text, file) => parseSsoConfig(text, file, this.env, { secrets: options.server ? 'required' : 'optional' }),
      NO_SSO,
    );
    this.testFiles = [...policyTestFiles(configDir, this.policyFile.path), ...profileTestFiles(configDir, this.profiles)].map(
      (f) => new WatchedFile(f, parsePolicyTests, NO_POLICY_TESTS),
    );
    if (options.enforcePolicyTests) assertPolicyTests(this.policyConfig(), this.policyTests());
    this.guardReloads();
    if (options.watchConfig) {
      for (const f of this.configFiles()) f.watch();
    }
    this.side = side(this);
    const database = (this.database = this.side.database);
    this.recorder = this.side.recorder;
    this.tokens = this.side.tokens;
    this.flagStore = new SqlFlagStore(database, this.credentials);
    this.flags = new FlagService(this.flagStore, { env: this.env, locks: this.profiles.locks, initial: this.side.initialOverrides?.() });
    this.revisions = new SqlRevisionStore(database);
    this.denials = new SqlDenialStore(database);
    this.securityEvents = new SqlSecurityEventQueries(database);
    this.notifications = new NotificationService({
      store: new SqlNotificationStore(database),
      config: () => this.notificationsFile.current,
      env: this.env,
      maskKeys: this.profiles.maskKeys,
      origin: this.env.SWARM_PROCESS || 'app',
    });
    this.approvalWaits = new ApprovalWaits(database);
    this.approvals = new SqlApprovalStore(database, this.approvalListener(), this.callBinding, this.trailProof);
    this.hooks = new HookRunner({
      hooks: () => this.hooksFile.current,
      flags: () => this.flags.values(),
      cwd: this.configDir,
      maskKeys: this.profiles.maskKeys,
      rates: this.side.rates,
      onFailure: (f) =>
        this.side.recordEvent({ kind: 'hook', type: 'hook.failed', actor: 'system', outcome: 'failed', target: f.target ?? null, detail: { hook: f.hook, event: f.event, action: f.action, reason: f.reason } }),
    });
    this.auth = new SqlAuthStore(
      database,
      this.tokens,
      this.credentials,
      async (e) => {
        await this.recorder.record({ kind: 'auth', type: e.type, actor: e.by, outcome: 'succeeded', target: e.target, detail: e.detail });
      },
      () => this.profiles.tokens ?? {},
    );
    this.loginAttempts = new SqlLoginAttempts(database);
    this.mcpPins = new McpPins(
      {
        database,
        check: this.credentials,
        recorder: this.recorder,
        holdNewTools: () => this.profiles.holdNewMcpTools,
      },
      this.side.initialPins?.(),
    );
    this.sso = new SsoService(this);
    this.agentTokens = new AgentTokens({ ssoFile: this.ssoFile, recorder: this.recorder, hasAgent: (name) => this.agentsFile.current.agents.has(name) });
    // A single sign-on session asks its provider again when due, and ends when the provider's session ended.
    this.auth.setSessionRefresher(this.sso.refresh);
    this.engine = new PermissionEngine({
      config: () => this.configSnapshot(),
      ports: { flagValues: () => this.flags.values(), observe: observeDecision, callHooks: this.hooks, ...this.side.enginePorts(this.approvals) },
    });
    this.decisions = new DecisionService({ engine: this.engine, ...this.side.decisionOptions?.() });
    this.changeControl = new ChangeControl({
      database,
      revisions: this.revisions,
      profiles: this.profiles,
      recorder: this.recorder,
      recordEvent: (event) => this.side.recordEvent(event),
      textsInForce: () => this.ruleTexts(),
      configInForce: () => this.policyConfig(),
      testsInForce: () => this.policyTests(),
      flagValues: () => this.flags.values(),
      revisionContentOf: (texts, pins) => this.revisionContentOfTexts(texts, pins),
      currentRevision: () => this.currentRevision(),
      pin: (texts) => this.pinRules(texts),
      applyMcpPins: async (content, activation) => {
        const { unknown } = await this.mcpPins.applyRevision(content.mcp_pins, { id: activation.activatedBy }, activation.proposalId ? `proposal:${activation.proposalId}` : `activation:${activation.seq}`);
        if (unknown.length > 0) console.error(`Activation ${activation.seq} pins MCP tool definitions this database never saw (${unknown.join(', ')}): they stay held.`);
      },
      allowedMcpCommands: () => this.allowedMcpCommands(),
      seal: () => this.credentials.seal(),
      refuseRules: (reason) => {
        this.rulesRefusal = reason;
      },
    });
    for (const [key, file] of this.ruleFiles()) {
      // Once per version of the file and active revision, whichever process of the server sees it first.
      file.onDrift((disk) => {
        const detail = { file: key, active_revision: this.changeControl.active?.revision ?? null, disk_sha256: disk === null ? null : sha256(disk), missing_on_disk: disk === null };
        void this.changeControl.recordDriftOnce(file.status().path, detail, ['disk_sha256', 'active_revision']);
      });
    }
  }

  /**
   * The stdio commands a configuration from the database may start here (lib/mcp/config.ts allowedCommandsOnDisk): read
   * from this server's disk each time a revision is put in force or proposed, never from the database.
   */
  allowedMcpCommands(): ReadonlySet<string> {
    return allowedCommandsOnDisk(this.mcpFile.path, this.env);
  }

  /** The five files a policy revision is made of, by their key in a proposal. */
  private ruleFiles(): [RuleFile, WatchedFile<unknown>][] {
    return [
      ['agents', this.agentsFile],
      ['policy', this.policyFile],
      ['gates', this.gatesFile],
      ['hooks', this.hooksFile],
      ['mcp', this.mcpFile],
    ] as [RuleFile, WatchedFile<unknown>][];
  }

  /** The texts of the rule files in force (null: absent). */
  ruleTexts(): RuleTexts {
    return Object.fromEntries(this.ruleFiles().map(([key, file]) => [key, file.text])) as RuleTexts;
  }

  /**
   * Change control: put an active revision's texts in force instead of the files on disk. The MCP servers first (their
   * secrets must be in this server's environment), so that a text this server cannot use stops the activation before
   * any file changed.
   */
  private pinRules(texts: RuleTexts): void {
    const order: RuleFile[] = ['mcp', 'hooks', 'agents', 'gates', 'policy'];
    const files = new Map(this.ruleFiles());
    for (const key of order) files.get(key)!.pin(texts[key]);
  }

  /**
   * Start policy change control where a profile asks for it: seed the first activation from the files on disk, put
   * the newest activation in force, and (a server) hear of every later one. Idempotent.
   */
  startChangeControl(): Promise<void> {
    return this.changeControl.start({ watch: this.options.watchConfig === true });
  }

  /** SQLite: the connection (Drizzle); undefined on PostgreSQL. */
  get db(): S['db'] {
    return this.side.db;
  }

  /** PostgreSQL: the pool; undefined on SQLite. */
  get pool(): S['pool'] {
    return this.side.pool;
  }

  /**
   * The key approvals are bound with (lib/approvals/binding.ts: SWARM_APPROVAL_KEY, or the key folder's), loaded when
   * a call is first bound: a process that never decides a gated call never needs it. A failure is thrown again at the
   * next call (nothing is bound with a key that could not be had).
   */
  readonly callBinding = (): CallBinding => (this.bindingMemo ??= CallBinding.ofKey(loadBindingKey(this.options.dbPath, this.env)));

  /**
   * What proves an approval's events are all still in the chain (lib/approvals/trail.ts): the trusted keys open the
   * newest checkpoint, and the key folder says the newest head it signed. Read when a gated call would use an approval.
   */
  readonly trailProof = (): TrailProof => {
    if (!this.proofMemo) {
      let keyDir: string | undefined;
      try {
        keyDir = keyDirFor(this.options.dbPath, this.env);
      } catch {
        keyDir = undefined; // PostgreSQL without a key folder: no key to open a checkpoint with, nothing remembered
      }
      // Read again until there is a key (a SQLite installation makes its key at its first checkpoint).
      let ring: ReturnType<typeof parseVerifierKeys> = [];
      const keys = () => (ring.length > 0 || keyDir === undefined ? ring : (ring = parseVerifierKeys(trustedVerifierKeys(keyDir, this.env) ?? '')));
      const dbPath = this.options.dbPath;
      this.proofMemo = {
        open: (note) => {
          const opened = openCheckpointWithAny(note, keys());
          return opened.ok ? { size: opened.body.size, headHash: opened.body.headHash } : undefined;
        },
        signedSize: () => (keyDir === undefined ? undefined : readSignedHeads(keyDir, dbPath).get('security_events')?.size),
      };
    }
    return this.proofMemo;
  };

  /**
   * How users, tokens and sessions are checked (lib/auth/seal.ts): the seal's key is derived from the same installation
   * secret as the approval binding, loaded when first needed; a row that fails is not used, and recorded once
   * (`auth.unverified`) with what it claimed to be.
   */
  readonly credentials: SealCheck = {
    seal: () => (this.sealMemo ??= CredentialSeal.ofSecret(loadBindingKey(this.options.dbPath, this.env))),
    unverified: (table, id, what) => {
      const key = `${table}:${id}`;
      if (this.unverifiedRows.has(key)) return;
      this.unverifiedRows.add(key);
      console.error(`Not used: ${what} (${table} row ${id}) does not carry its seal: it was written or changed behind the product's back.`);
      // After the present turn: a row may be read while the application is still being built (the overrides are).
      queueMicrotask(() => {
        try {
          this.side.recordEvent({ kind: 'auth', type: 'auth.unverified', actor: 'system', outcome: 'refused', target: `${table}#${id}`, detail: { table, row: id, what } });
        } catch (error) {
          console.error('Recording a row without its seal failed.', error);
        }
      });
    },
  };

  /**
   * The policy revision in force: the content hash of the configuration files and the flag values. Recomputed only
   * when a file version or the flag values change. Pure: its content is stored by the recorder, in the transaction of
   * the first row that names it (revisionContent), so a decision that records nothing writes nothing.
   */
  currentRevision(): string {
    const flags = this.flags.values();
    const key = [this.agentsFile.current, this.policyFile.current, this.gatesFile.current, this.hooksFile.current, this.mcpFile.current, flags, this.mcpPins.inForce()] as const;
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

  /** What the audit recorder reads from the application, on either database (lib/audit/trail/recorder.ts). */
  recorderOptions(): RecorderOptions {
    return {
      revision: () => this.currentRevision(),
      revisionContent: this.contentOfRevision,
      logAllDecisions: () => this.flags.values().get('decision_log_all') === true,
      decisionSampleRate: () => this.profiles.decisionLog?.sample ?? 0,
      maskKeys: this.profiles.maskKeys,
    };
  }

  /**
   * The configuration in force as one frozen snapshot (the engine's `config`): the built-in sources bound to this
   * version of the files, the gates, the flag values and their revision. The same object until something changes; a
   * decision keeps the one it started with, whatever is reloaded meanwhile.
   */
  configSnapshot(): ConfigSnapshot {
    // Corruption fails closed: no rules, no decision (never the rules of an older revision).
    if (this.rulesRefusal !== undefined) throw new RulesUnavailable(this.rulesRefusal);
    const flags = this.flags.values();
    const gates = this.gatesFile.current;
    const revision = this.currentRevision();
    const sources = this.builtInsFor(this.agentsFile.current, this.policy, this.mcpPins.inForce());
    const memo = this.snapshotMemo;
    if (memo && memo.revision === revision && memo.flags === flags && memo.gates === gates && memo.sources === sources) return memo;
    this.snapshotMemo = Object.freeze({ sources, gates, flags, revision });
    return this.snapshotMemo;
  }

  /**
   * The built-in sources bound to one version of the agents and policy files and of the MCP pins (their memos live as
   * long as it does).
   */
  private builtInsFor(agents: AgentsConfig, policy: CompiledPolicy, pins: PinMap): readonly RuleSource[] {
    const memo = this.builtInsMemo;
    if (memo && memo.agents === agents && memo.policy === policy && memo.pins === pins) return memo.sources;
    const directory: PinDirectory = { pinned: (server, tool) => pins.get(server)?.get(tool)?.sha256 };
    const sources = Object.freeze(builtInSources(() => agents, () => policy, () => directory));
    this.builtInsMemo = { agents, policy, pins, sources };
    return sources;
  }

  private revisionContent(flags: ReadonlyMap<string, boolean>): RevisionContent {
    return this.revisionContentOf(this.ruleTexts(), flags);
  }

  /**
   * The content a revision of these texts has now: with the flag values and the profiles in force, and the MCP pins in
   * force (or `pins`: those a proposal to accept a tool's new definition would put in force).
   */
  revisionContentOfTexts(texts: RuleTexts, pins?: PinsContent): RevisionContent {
    return this.revisionContentOf(texts, this.flags.values(), pins);
  }

  /** The content of a revision of these texts, with these flag values, the active profiles and the MCP pins. */
  private revisionContentOf(texts: RuleTexts, flags: ReadonlyMap<string, boolean>, pins: PinsContent | undefined = pinsContent(this.mcpPins.inForce())): RevisionContent {
    return {
      files: {
        agents: texts.agents,
        policy: texts.policy,
        gates: texts.gates,
        policy_file: this.policyFile.path,
        // Absent rather than null without a hooks file, so that the revisions of a configuration without hooks stay.
        ...(texts.hooks !== null ? { hooks: texts.hooks } : {}),
        // Likewise for the MCP gateway's servers (their tool names and how an ASK is answered are part of the policy).
        ...(texts.mcp !== null ? { mcp: texts.mcp } : {}),
      },
      flags: Object.fromEntries([...flags].sort(([a], [b]) => (a < b ? -1 : 1))),
      ...(this.profiles.sources.length > 0 ? { profiles: this.profiles.sources.map((p) => ({ name: p.name, folder: p.folder, texts: p.texts })) } : {}),
      // Absent without pins, so that the revisions of a configuration without MCP tools stay as they were.
      ...(pins !== undefined && Object.keys(pins).length > 0 ? { mcp_pins: pins } : {}),
    };
  }

  /**
   * Switching compliance profiles is a security event: the profiles of this start are compared with those of the
   * previous server start recorded in the trail.
   */
  profileSwitch(previous: { detailJson: string | null } | undefined): AuditEvent | undefined {
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
  startEvents(): AuditEvent[] {
    return [
      { kind: 'system', type: 'server.started', actor: 'system', outcome: 'succeeded', detail: { pid: process.pid, revision: this.currentRevision(), profiles: [...this.profiles.names] } },
      ...this.configFiles().map((file) => this.configLoaded(file)),
    ];
  }

  configLoaded(file: WatchedFile<unknown>): AuditEvent {
    return { kind: 'config', type: 'config.loaded', actor: 'system', outcome: 'succeeded', target: file.status().path, detail: { revision: this.currentRevision() } };
  }

  /**
   * What the signer of checkpoints is given on either database: the key folder and the database it keeps the signed
   * heads of, the witnesses (SWARM_AUDIT_WITNESSES), the pinned key ring; a refused head is recorded.
   */
  signerOptions(keyDir: string, database: string): SignerOptions {
    const { dirs, urls } = witnessTargets(this.env);
    const trustedKeys = trustedVerifierKeys(keyDir, this.env);
    return { keyDir, database, witnessDirs: dirs, witnessUrls: urls, trustedKeys, onRefused: (r) => this.side.recordEvent(checkpointRefusedEvent(r)) };
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
    return { agents: this.agentsFile.current, gates: this.gatesFile.current, hooks: this.hooksFile.current, flags, ...over, policy: this.combinedPolicy(over.policy ?? this.policyFile.current) };
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

  configFiles(): WatchedFile<unknown>[] {
    return [this.agentsFile, this.policyFile, this.gatesFile, this.hooksFile, this.notificationsFile, this.mcpFile, this.ssoFile, ...this.testFiles] as WatchedFile<unknown>[];
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
        this.side.recordEvent({ kind: 'config', type: 'config.refused', actor: 'system', outcome: 'refused', target: file.status().path, detail: { error, revision_in_force: this.currentRevision() } });
      });
    }
  }

  /** The gates in force: code declarations merged with config/gates.yaml. */
  get gates(): GateSet {
    return this.gatesFile.current;
  }


  /** A policy ASK rule may match calls of this tool: the engine then needs the call's approval state. */
  private policyMayAsk(tool: string): boolean {
    const p = this.policy;
    return p.askAnyTool || p.askTools.has(tool);
  }

  /**
   * The engine's approvalState port over a store: read only for a gated call, or one a policy ASK rule may match (the
   * other calls need no read at all).
   */
  approvalStatePort<S>(store: { stateFor(agent: string, tool: string, args: unknown, ttlSeconds: number, principal: Principal): S }) {
    return (ctx: ToolContext, gate: CompiledGate | undefined): S | undefined =>
      gate || this.policyMayAsk(ctx.tool) ? store.stateFor(ctx.agent, ctx.tool, ctx.arguments, gate?.expiresInSeconds ?? DEFAULT_APPROVAL_TTL_SECONDS, ctx.principal) : undefined;
  }


  /**
   * The approval store's listener, the same on both databases. Inside the transition's transaction: its audit rows
   * (recordApprovalTransition, through the engine's recorder) and its notification, queued (never sent here: the
   * deliverer sends it in the background), so that they commit with the transition or neither does. Once it has
   * committed: the approval_requested and approval_decided hooks.
   */
  approvalListener(): ApprovalListener {
    return {
      inTransaction: (event, tx) => this.recordApproval(event, tx),
      afterCommit: (event) => {
        this.approvalWaits.wake();
        this.reportApprovalToHooks(event);
      },
    };
  }

  private *recordApproval(event: ApprovalEvent, tx: TxRunner): TxSteps<void> {
    yield* recordApprovalTransition(this.recorder, event, tx, this.profiles.maskKeys);
    // Whoever waits for this request's outcome, on any server, hears of it once it commits (lib/approvals/wait.ts).
    yield* tx.publish(APPROVALS_CHANNEL);
    yield* queueIn(tx, this.notifications.deliveriesFor(event));
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

  /** The configuration files in force and the error that kept the last good version of each, if any. */
  configStatus(): WatchedFileStatus[] {
    return this.configFiles().map((f) => f.status());
  }

  /** Stop watching the configuration files. */
  closeConfig(): void {
    for (const f of this.configFiles()) f.close();
  }

  /**
   * First start (no admin yet, even if other users were added first): create the admin (SWARM_ADMIN_PASSWORD or a
   * random password, returned to be printed once), and make sure SWARM_ADMIN_TOKEN, when set, is a valid admin token.
   * Several servers starting at once on one database create each once.
   */
  async bootstrap(): Promise<StartupReport> {
    const report: StartupReport = {};
    await this.sealLegacyCredentials();
    const peppered = await this.auth.pepperLegacy();
    if (peppered.tokens + peppered.sessions > 0) {
      await this.recorder.record({ kind: 'auth', type: 'auth.sealed', actor: 'system', outcome: 'succeeded', target: null, detail: { peppered } });
    }
    await this.startChangeControl();
    if (!(await this.auth.hasAdmin())) {
      const given = this.env.SWARM_ADMIN_PASSWORD;
      const password = given && given.length > 0 ? given : randomPassword();
      try {
        await this.auth.createUser('admin', 'admin', password);
        report.createdAdmin = { username: 'admin', password, generated: !given };
      } catch (error) {
        // Another server created it at the same moment: theirs stands.
        if (!(await this.auth.hasAdmin())) throw error;
      }
    }
    const token = this.env.SWARM_ADMIN_TOKEN;
    if (token) {
      const admin = (await this.auth.findUser('admin')) ?? (await this.auth.createUser('admin', 'admin'));
      if (admin.role !== 'admin') throw new Error('SWARM_ADMIN_TOKEN is set but user "admin" is not an admin.');
      await this.auth.ensureToken(token, { username: 'admin' }, 'SWARM_ADMIN_TOKEN');
    }
    return report;
  }

  /**
   * The users, tokens and sessions of a database from before credential seals (lib/auth/seal.ts) are sealed once, at
   * the first start that finds no record of it in the key folder (`credentials-sealed.<database>.json`, beside the
   * signed heads: a folder the database's holder cannot write). After that a row without its seal, whenever it was
   * written, is never sealed and never used. Without a key folder (PostgreSQL with SWARM_APPROVAL_KEY alone) nothing
   * is sealed here: such rows stay unusable, and the log says so.
   */
  private async sealLegacyCredentials(): Promise<void> {
    const postgres = parseDbLocation(this.options.dbPath).kind === 'postgres';
    if (postgres && !this.env.SWARM_AUDIT_KEY_DIR) {
      console.error('Credentials from before seals are not sealed: no key folder (SWARM_AUDIT_KEY_DIR) to keep the record in.');
      return;
    }
    const record = keyFolderRecord(keyDirFor(this.options.dbPath, this.env), 'credentials-sealed', this.options.dbPath);
    if (existsSync(record)) return;
    const sealed = { ...(await this.auth.sealLegacy()), overrides: await this.flagStore.sealLegacy() };
    // Votes and activations are append-only: an older release's newest sound activation is carried over as a sealed one.
    const carried = await this.changeControl.carryOverUnsealed();
    mkdirSync(dirname(record), { recursive: true });
    writeFileSync(record, `${JSON.stringify({ sealed_at: new Date().toISOString(), ...sealed })}\n`, { mode: 0o600 });
    if (sealed.users + sealed.tokens + sealed.sessions + sealed.overrides > 0 || carried !== undefined) {
      await this.recorder.record({ kind: 'auth', type: 'auth.sealed', actor: 'system', outcome: 'succeeded', target: null, detail: { ...sealed, ...(carried !== undefined ? { activation: carried } : {}) } });
    }
  }

  /** Sign the heads of the audit chains now (when they moved since the last checkpoint); at once on SQLite. */
  checkpointAudit(): ReturnType<S['checkpointAudit']> {
    return this.side.checkpointAudit() as ReturnType<S['checkpointAudit']>;
  }

  /** The newest signed checkpoint of each chain. */
  auditCheckpoints(): ReturnType<S['auditCheckpoints']> {
    return this.side.auditCheckpoints() as ReturnType<S['auditCheckpoints']>;
  }

  /** Readiness of the database: SQLite takes a write; PostgreSQL runs a statement within two seconds. */
  databaseReady(): Promise<{ ok: true } | { ok: false; detail: string }> {
    return this.side.databaseReady();
  }

  /** Verify the audit chains (and the checkpoints and witnesses given). */
  verifyAudit(verifierKey: string | undefined, options: VerifyOptions = {}): Promise<VerifyReport> {
    return this.side.verifyAudit(verifierKey, options);
  }

  /** The size of the write-ahead log, bytes (0 when checkpointed and truncated; null on PostgreSQL). */
  walBytes(): number | null {
    return this.side.walBytes?.() ?? null;
  }

  /**
   * Expire due approval requests within a second of their expiry, each recorded as a `hitl:<gate>` denial at the time
   * it expired, and check the notifications due (requests nearing their expiry, denial bursts: queued only). Several
   * servers may sweep one database: every expiry is a conditional update, so each is recorded once. Where the side
   * leads the sweep (PostgreSQL), the others stand by and take over within a second of the leader's end.
   */
  startSweeper(intervalMs = 1_000): void {
    const lead = this.side.sweeperLead;
    this.lastSweepAt = Date.now() / 1000;
    this.sweepTimer = repeatWithoutOverlap(intervalMs, async () => {
      this.lastSweepAt = Date.now() / 1000;
      if (lead && !(await lead.tryLead())) return;
      await this.approvals.expireDue().catch((error: unknown) => console.error('Expiring due approval requests failed; retrying in a second.', error));
      await this.notifications.tick().catch((error: unknown) => console.error('Checking for notifications failed; retrying in a second.', error));
      if (Date.now() - this.lastTokenSweepMs >= TOKEN_SWEEP_EVERY_MS) {
        this.lastTokenSweepMs = Date.now();
        await this.sweepTokens().catch((error: unknown) => console.error('Sweeping expired and unused tokens failed; retrying shortly.', error));
        // The back-channel logout tokens' jtis kept past the time their tokens could be taken (lib/sso/service.ts).
        await this.auth.sweepLogoutTokens().catch((error: unknown) => console.error('Sweeping the logout tokens taken failed; retrying shortly.', error));
      }
    });
  }

  /**
   * Mark the tokens past their expiry (token.expired) and disable those unused for the profile's inactive days
   * (token.disabled). The sweeper does it every few seconds (on PostgreSQL only the server that leads the sweep);
   * an expired token is refused from its expiry on anyway (token-cache.ts), this records it. SWARM_ADMIN_TOKEN is
   * never disabled for disuse while the environment names it (see AuthStore.ensureToken).
   */
  sweepTokens(now?: number): ReturnType<AuthStore['sweepTokens']> {
    const adminToken = this.env.SWARM_ADMIN_TOKEN;
    return this.auth.sweepTokens({ now, keep: adminToken ? this.credentials.seal().secretHash(adminToken) : undefined });
  }

  stopSweeper(): void {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
  }

  /** The background work this application was started with, for the readiness check ('off': not configured). */
  backgroundStatus(now = Date.now() / 1000): BackgroundStatus {
    const lead = this.side.sweeperLead;
    // The sweeper ticks every second; five seconds without a tick means its timer is gone or the loop is blocked.
    const sweeper = !this.sweepTimer ? 'off' : now - this.lastSweepAt > 5 ? 'stalled' : !lead || lead.isLeader() ? 'alive' : 'standby';
    return { ...this.side.backgroundStatus(), sweeper };
  }

  /** Stop the background work, record the stop and sign a last checkpoint (a server), close the database. */
  close(): ReturnType<S['close']> {
    void this.changeControl.stop();
    void this.approvalWaits.close();
    return this.side.close() as ReturnType<S['close']>;
  }
}
