/**
 * The application on PostgreSQL (SWARM_DB=postgres://…): the same configuration, engine and rules as the SQLite
 * application (AppBase), with stores that several servers share on one database. Opening it is asynchronous: it
 * connects, applies the migrations (once, whichever server starts first) and loads the flag overrides.
 *
 * What runs on one server at a time (the approval sweeper with the notification checks, the signing of checkpoints)
 * is led through PostgreSQL advisory locks (lib/ops/leader.ts); a server that dies gives the lead up with its session.
 */
import type pg from 'pg';
import { DatabaseUnavailable, migratePostgres, openPool } from '@/db/pg/client';
import { PostgresDatabase } from '@/db/dialect';
import { parseDbLocation, redactedUrl } from '@/db/location';
import { approvalRequestOf, SqlApprovalStore } from './approvals/store';
import { consumerOf } from './approvals/rules';
import { checkpointRefusedEvent, hasSigningKey, keyDirFor, loadSigningKey, trustedVerifierKeys } from './audit/checkpoints';
import { witnessTargets } from './audit/witness';
import { PgCheckpointer } from './audit/pg-checkpoints';
import { SqlDenialStore, type DenialStore } from './audit/denials/store';
import { PgAuditRecorder } from './audit/pg-recorder';
import { SqlRevisionStore, type RevisionStore } from './audit/revisions';
import { SqlSecurityEventQueries, type SecurityEventQueries } from './audit/security-events';
import { SqlAuthStore, type AuthStore } from './auth/store';
import { SqlLoginAttempts, type LoginAttempts } from './auth/attempts';
import { PostgresTokenPrincipals } from './auth/tokens-postgres';
import { randomPassword } from './auth/secrets';
import { FlagService } from './flags/service';
import { SqlFlagStore } from './flags/store';
import { HookRunner } from './hooks/runner';
import { DecisionService } from './decisions/service';
import type { VerifyOptions, VerifyReport } from './audit/verify';
import { verifyAuditPg } from './audit/pg-chain';
import { PgRateCounter } from './hooks/pg-rates';
import { NotificationService } from './notifications/service';
import { SqlNotificationStore } from './notifications/store';
import { Leadership, LEADER_LOCKS } from './ops/leader';
import { observeDecision, timedAsyncRecorder } from './ops/metrics';
import { PermissionEngine } from './permissions';
import { AppBase, type AppOptions, type StartupReport } from './app-base';
import type { BackgroundStatus } from './app';

export class PgSwarmApp extends AppBase {
  readonly kind = 'postgres' as const;
  /**
   * Its last words (the stop, a final checkpoint) are asynchronous: under NEXT_MANUAL_SIG_HANDLE it handles SIGTERM and
   * SIGINT itself and exits once they are written (startServerAudit).
   */
  readonly handlesSignals = true;
  readonly pool: pg.Pool;
  /** SWARM_DB, for messages: without its password */
  readonly shownUrl: string;
  readonly flags: FlagService;
  /** the database through the dialect port, for the stores written once for both databases */
  readonly database: PostgresDatabase;
  readonly approvals: SqlApprovalStore;
  readonly auth: AuthStore;
  /** the decision path's token lookup: cached, forgotten on every server when tokens or users change (within a second) */
  readonly tokens: PostgresTokenPrincipals;
  /** failed sign-ins, locks and the attempt under way per user name, shared by the servers */
  readonly loginAttempts: LoginAttempts;
  readonly recorder: PgAuditRecorder;
  readonly revisions: RevisionStore;
  readonly denials: DenialStore;
  readonly securityEvents: SecurityEventQueries;
  readonly notifications: NotificationService;
  readonly hooks: HookRunner;
  readonly engine: PermissionEngine;
  /** the one way to ask for a decision: authorize, decide, decideGroup (lib/decisions/service.ts) */
  readonly decisions: DecisionService;
  private readonly sweeperLead: Leadership | undefined;
  private readonly signerLead: Leadership | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private lastSweepAt = 0;
  private auditTimer: NodeJS.Timeout | undefined;
  private checkpointer: PgCheckpointer | undefined;
  private closed: Promise<void> | undefined;

  /** Connect, migrate, load the flags; then the application is ready. */
  static async open(options: AppOptions): Promise<PgSwarmApp> {
    const where = parseDbLocation(options.dbPath);
    if (where.kind !== 'postgres') throw new Error(`PgSwarmApp needs a postgres:// URL, not ${options.dbPath}.`);
    const env = options.env ?? process.env;
    const pool = openPool({ url: where.url, max: Number(env.SWARM_PG_POOL_MAX) || undefined, applicationName: `swarm-permissions ${env.SWARM_PROCESS || 'app'}` });
    let app: PgSwarmApp;
    try {
      await migratePostgres(pool, where.url);
      app = new PgSwarmApp(options, pool, where.url);
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
    try {
      await app.start();
    } catch (error) {
      // What started (the flag listener, the config watchers, the leaders) stops with the pool: nothing keeps the
      // process alive after a start that failed.
      await app.close().catch(() => undefined);
      throw error;
    }
    return app;
  }

  private constructor(options: AppOptions, pool: pg.Pool, url: string) {
    super(options);
    this.pool = pool;
    this.shownUrl = redactedUrl(url);
    this.database = new PostgresDatabase(pool, url);
    this.flags = new FlagService(new SqlFlagStore(this.database), { env: this.env, locks: this.profiles.locks });
    this.revisions = new SqlRevisionStore(this.database);
    this.recorder = new PgAuditRecorder(pool, {
      revision: () => this.currentRevision(),
      revisionContent: this.contentOfRevision,
      logAllDecisions: () => this.flags.values().get('decision_log_all') === true,
      maskKeys: this.profiles.maskKeys,
    });
    this.wire({
      flagValues: () => this.flags.values(),
      recordEvent: (event) => void this.recorder.record(event).catch((error: unknown) => console.error(`Recording ${event.kind} event failed.`, error)),
    });
    this.denials = new SqlDenialStore(this.database);
    this.securityEvents = new SqlSecurityEventQueries(this.database);
    this.notifications = new NotificationService({
      store: new SqlNotificationStore(this.database),
      config: () => this.notificationsFile.current,
      env: this.env,
      maskKeys: this.profiles.maskKeys,
      origin: this.env.SWARM_PROCESS || 'app',
    });
    this.approvals = new SqlApprovalStore(this.database, this.approvalListener(), this.callBinding);
    this.hooks = new HookRunner({
      hooks: () => this.hooksFile.current,
      flags: () => this.flags.values(),
      cwd: this.configDir,
      maskKeys: this.profiles.maskKeys,
      rates: new PgRateCounter(pool),
      onFailure: (f) =>
        void this.recorder
          .record({ kind: 'hook', type: 'hook.failed', actor: 'system', outcome: 'failed', target: f.target ?? null, detail: { hook: f.hook, event: f.event, action: f.action, reason: f.reason } })
          .catch((error: unknown) => console.error('Recording a hook failure failed.', error)),
    });
    this.tokens = new PostgresTokenPrincipals(this.database);
    this.auth = new SqlAuthStore(this.database, this.tokens, async (e) => {
      await this.recorder.record({ kind: 'auth', type: e.type, actor: e.by, outcome: 'succeeded', target: e.target, detail: e.detail });
    });
    this.loginAttempts = new SqlLoginAttempts(this.database);
    this.engine = new PermissionEngine({
        config: () => this.configSnapshot(),
        ports: {
          async: true,
          flagValues: () => this.flags.values(),
          observe: observeDecision,
          approvalState: this.approvalStatePort(this.approvals),
          // The invariant audit_trail_security_events: every denial is written, whatever else is configured.
          recorder: timedAsyncRecorder(this.recorder),
          requestApproval: async (ctx, result) => (await this.approvals.request(approvalRequestOf(ctx, result))).id,
          consumeApproval: (id, ctx) => this.approvals.consume(id, consumerOf(ctx.principal)),
          callHooks: this.hooks,
        },
      });
    this.decisions = new DecisionService({ engine: this.engine });
    if (options.sweepApprovals) this.sweeperLead = new Leadership(pool, LEADER_LOCKS.sweeper);
    if (options.server) this.signerLead = new Leadership(pool, LEADER_LOCKS.checkpoints);
  }

  private async start(): Promise<void> {
    await this.flags.start();
    await this.tokens.start();
    // Rows of a release that kept arguments in clear, bound by an unkeyed hash: re-bound once, by the first server that
    // has the key (nothing to do, and no key needed, when there are none).
    await this.approvals.rebindLegacy().catch((error: unknown) => console.error('Re-binding the approvals of an earlier release failed; they ask again until it succeeds at a start.', error));
    if (this.options.sweepApprovals) this.startSweeper();
    if (this.options.deliverNotifications ?? this.options.sweepApprovals) this.notifications.startDelivery();
    if (this.options.server) await this.startServerAudit();
  }

  /**
   * The sweeper runs on the server that holds the sweeper lock; the others stand by and take over within a second of
   * its end. Every expiry is a conditional update anyway, so a moment of overlap records nothing twice.
   */
  private startSweeper(intervalMs = 1_000): void {
    const lead = this.sweeperLead!;
    this.lastSweepAt = Date.now() / 1000;
    let running = false;
    this.sweepTimer = setInterval(() => {
      if (running) return;
      running = true;
      void (async () => {
        try {
          this.lastSweepAt = Date.now() / 1000;
          if (!(await lead.tryLead())) return;
          await this.approvals.expireDue().catch((error: unknown) => console.error('Expiring due approval requests failed; retrying in a second.', error));
          await this.notifications.tick().catch((error: unknown) => console.error('Checking for notifications failed; retrying in a second.', error));
        } finally {
          running = false;
        }
      })();
    }, intervalMs);
    this.sweepTimer.unref();
  }

  private signingKeyDir(): string {
    if (!this.env.SWARM_AUDIT_KEY_DIR) {
      throw new Error(
        'SWARM_AUDIT_KEY_DIR must name the folder of the audit signing key when SWARM_DB is a PostgreSQL URL (the same key pair on every server: see docs/deployment.md).',
      );
    }
    return keyDirFor(this.options.dbPath, this.env);
  }

  private signer(): PgCheckpointer {
    if (!this.checkpointer) {
      const keyDir = this.signingKeyDir();
      this.checkpointer = new PgCheckpointer(this.pool, loadSigningKey(keyDir), {
        keyDir,
        database: this.options.dbPath,
        witnessDirs: witnessTargets(this.env).dirs,
        witnessUrls: witnessTargets(this.env).urls,
        trustedKeys: trustedVerifierKeys(keyDir, this.env),
        onRefused: (r) => void this.recorder.record(checkpointRefusedEvent(r)).catch((error: unknown) => console.error('Recording a refused checkpoint failed.', error)),
      });
    }
    return this.checkpointer;
  }

  /**
   * A server records its start, every configuration version it loads or refuses, and its stop. The server that holds
   * the checkpoint lock signs the heads of the audit chains every 10 seconds when they moved (every 1,000 rows sooner).
   */
  private async startServerAudit(): Promise<void> {
    this.signer();
    const switched = this.profileSwitch((await this.securityEvents.ofType('server.started', 1))[0]);
    if (switched) await this.recorder.record(switched);
    for (const event of this.startEvents()) await this.recorder.record(event);
    for (const file of this.configFiles()) {
      file.onLoaded(() => void this.recorder.record(this.configLoaded(file)).catch((error: unknown) => console.error('Recording a configuration load failed.', error)));
    }
    const lead = this.signerLead!;
    let ticks = 0;
    let running = false;
    this.auditTimer = setInterval(() => {
      if (running) return;
      running = true;
      void (async () => {
        try {
          if (await lead.tryLead()) await this.signer().checkpoint({ minRows: ++ticks % 5 === 0 ? 1 : 1000 });
        } catch (error) {
          console.error('Signing a checkpoint of the audit trail failed; retrying.', error);
        } finally {
          running = false;
        }
      })();
    }, 2_000);
    this.auditTimer.unref();
    if (process.env.NEXT_MANUAL_SIG_HANDLE) {
      // The Next.js server of `npm start` leaves the signals to this application (lib/server/serve.ts): its stop is
      // recorded and the last checkpoint signed before the process exits.
      // A second signal (the process group's and the listener's both reach it) must not cut the first one's work short.
      const stop = (signal: NodeJS.Signals) => void this.close().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
    }
  }

  /** Sign the heads of the audit chains now (when they moved since the last checkpoint). */
  async checkpointAudit(): Promise<string[]> {
    const notes = await this.signer().checkpoint();
    if (notes.length > 0) {
      await this.recorder.record({ kind: 'audit', type: 'audit.checkpointed', actor: 'system', outcome: 'succeeded', detail: { checkpoints: notes.length } });
      // The event itself goes under a checkpoint too: nothing this call wrote is left waiting for the next signer.
      await this.signer().checkpoint();
    }
    return notes;
  }

  /** The newest signed checkpoint of each chain. */
  auditCheckpoints(): Promise<{ chain: string; note: string }[]> {
    return this.signer().latest();
  }

  /** Nothing to forget: a PostgreSQL transaction stores its revision with its rows or not at all. */
  forgetUncommitted(): void {}

  /** First start: the admin, and SWARM_ADMIN_TOKEN (several servers starting at once create each once). */
  async bootstrap(): Promise<StartupReport> {
    const report: StartupReport = {};
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

  /** Can a statement run now? (readiness: a server that cannot reach its database must not take traffic) */
  async databaseReady(timeoutMs = 2_000): Promise<{ ok: true } | { ok: false; detail: string }> {
    if (this.closed) return { ok: false, detail: 'the application is closed' };
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.pool.query('SELECT 1'),
        new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs))),
      ]);
      return { ok: true };
    } catch (error) {
      return { ok: false, detail: new DatabaseUnavailable(this.options.dbPath, error).message };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Verify the audit chains (and the checkpoints and witnesses given) in one snapshot, read in pages. */
  verifyAudit(verifierKey: string | undefined, options: VerifyOptions = {}): Promise<VerifyReport> {
    return verifyAuditPg(this.pool, verifierKey, options);
  }

  /** No write-ahead log of this process's to measure on PostgreSQL. */
  walBytes(): number | null {
    return null;
  }

  backgroundStatus(now = Date.now() / 1000): BackgroundStatus {
    return {
      checkpointer: 'off',
      sweeper: this.sweepTimer ? (now - this.lastSweepAt > 5 ? 'stalled' : this.sweeperLead?.isLeader() ? 'alive' : 'standby') : 'off',
      closed: this.closed !== undefined,
    };
  }

  /** Stop the background work, record the stop and sign a last checkpoint (when leading), close the pool. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      this.closeConfig();
      if (this.sweepTimer) clearInterval(this.sweepTimer);
      // Not awaited (a hung receiver must not hold the shutdown): a send still in flight leaves its row to its lease.
      void this.notifications.stopDelivery();
      if (this.auditTimer) {
        clearInterval(this.auditTimer);
        try {
          await this.recorder.record({ kind: 'system', type: 'server.stopped', actor: 'system', outcome: 'succeeded', detail: { pid: process.pid } });
          if (this.signerLead?.isLeader()) await this.checkpointer?.checkpoint();
        } catch (error) {
          console.error('Recording the server stop failed.', error);
        }
      } else if (this.options.signOnClose && this.env.SWARM_AUDIT_KEY_DIR && hasSigningKey(keyDirFor(this.options.dbPath, this.env))) {
        // A command's own rows (its audit events) go under a checkpoint before it exits.
        await this.signer()
          .checkpoint()
          .catch((error: unknown) => console.error('Signing a checkpoint of the audit trail failed.', error));
      }
      await this.sweeperLead?.stop();
      await this.signerLead?.stop();
      await this.flags.stop();
      await this.tokens.stop();
      await this.pool.end();
    })();
    return this.closed;
  }
}
