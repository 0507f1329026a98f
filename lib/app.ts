/**
 * The application on SQLite: the database, the stores, the configuration files and the permission engine, wired once.
 * Route handlers, the CLI, the demo team and the tests all start here; only the options differ. The same product on
 * PostgreSQL is PgSwarmApp (lib/pg-app.ts); what both share is AppBase (lib/app-base.ts).
 */
import { statSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { VerifyOptions, VerifyReport } from './audit/verify';
import { verifyAuditInParallel } from './audit/verify-parallel';
import { openDatabase, SERVER_WAL_AUTOCHECKPOINT_PAGES, type Db } from '@/db/client';
import { parseDbLocation } from '@/db/location';
import { startCheckpointer, type Checkpointer } from '@/db/checkpointer';
import { approvalRequestOf, LEGACY_APPROVALS, SqlApprovalStore } from './approvals/store';
import { SqliteApprovalPorts } from './approvals/sqlite-ports';
import { consumerOf } from './approvals/rules';
import { SqlDenialStore, type DenialStore } from './audit/denials/store';
import { AuditRecorder } from './audit/recorder';
import { SqlRevisionStore, type RevisionStore } from './audit/revisions';
import { Checkpointer as AuditCheckpointer, checkpointRefusedEvent, hasSigningKey, keyDirFor, loadOrCreateSigningKey, trustedVerifierKeys } from './audit/checkpoints';
import { witnessTargets } from './audit/witness';
import { eventListQuery, SqlSecurityEventQueries, type SecurityEventQueries } from './audit/security-events';
import { SqlAuthStore, type AuthStore } from './auth/store';
import { SqlLoginAttempts, type LoginAttempts } from './auth/attempts';
import { SqliteTokenPrincipals } from './auth/tokens-sqlite';
import { randomPassword } from './auth/secrets';
import { FlagService } from './flags/service';
import { OVERRIDES_QUERY, overridesOf, SqlFlagStore } from './flags/store';
import { SqliteDatabase } from '@/db/dialect';
import type { SecurityEventRow } from '@/db/schema';
import { PermissionEngine } from './permissions';
import { observeDecision, timedRecorder } from './ops/metrics';
import { NotificationService } from './notifications/service';
import { SqlNotificationStore } from './notifications/store';
import { HookRunner } from './hooks/runner';
import { DecisionService } from './decisions/service';
import { SqliteRateCounter } from './hooks/rates';
import { AppBase, type AppOptions, type StartupReport } from './app-base';
import type { PgSwarmApp } from './pg-app';

export type { AppOptions, StartupReport } from './app-base';

export class SwarmApp extends AppBase {
  readonly kind = 'sqlite' as const;
  /** Its last words (the stop, a final checkpoint) are written synchronously at exit: the server's signals end it. */
  readonly handlesSignals = false;
  readonly db: Db;
  /** the database through the dialect port, for the stores written once for both databases */
  readonly database: SqliteDatabase;
  readonly denials: DenialStore;
  readonly approvals: SqlApprovalStore;
  /** the engine's approval ports, synchronous (the state of a call, request, consume): the store's rules, at once */
  readonly approvalPorts: SqliteApprovalPorts;
  readonly flags: FlagService;
  readonly auth: AuthStore;
  /** the decision path's token lookup: synchronous, cached while auth_generation stays the same */
  readonly tokens: SqliteTokenPrincipals;
  /** failed sign-ins, locks and the attempt under way per user name, shared with every process on the file */
  readonly loginAttempts: LoginAttempts;
  /** queues notifications where events are seen and delivers them in the background (lib/notifications) */
  readonly notifications: NotificationService;
  /** runs the hooks of config/hooks.yaml and those registered in code (registerHook) around every tool call */
  readonly hooks: HookRunner;
  readonly securityEvents: SecurityEventQueries;
  /** the one writer of the audit trail: denials, security events, allowed decisions when decision_log_all is on */
  readonly recorder: AuditRecorder;
  readonly revisions: RevisionStore;
  readonly engine: PermissionEngine;
  /** the SQLite file (SWARM_DB as a path) */
  readonly dbFile: string;
  /** the one way to ask for a decision: authorize, decide, decideGroup (lib/decisions/service.ts) */
  readonly decisions: DecisionService;
  private readonly checkpointer: Checkpointer | undefined;
  private rollupTimer: NodeJS.Timeout | undefined;
  private searchTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  /** when the approval sweeper last ran (seconds since the epoch), for the readiness check */
  private lastSweepAt = 0;
  private auditTimer: NodeJS.Timeout | undefined;
  private auditCheckpointer: AuditCheckpointer | undefined;
  private closed = false;

  constructor(options: AppOptions) {
    // A URL the product cannot use is refused here, before anything starts (never a file named after it).
    const where = parseDbLocation(options.dbPath);
    if (where.kind === 'postgres') {
      throw new Error(`SWARM_DB names a PostgreSQL database (${where.shown}): open it with openApp() (lib/pg-app.ts), which is asynchronous.`);
    }
    super(options);
    this.dbFile = where.path;
    this.db = openDatabase({
      path: this.dbFile,
      sync: options.sync ?? (this.env.SWARM_DB_SYNC === 'full' ? 'full' : 'normal'),
      walAutocheckpointPages: options.backgroundCheckpoints || options.checkpointsElsewhere ? SERVER_WAL_AUTOCHECKPOINT_PAGES : undefined,
    });
    this.checkpointer = options.backgroundCheckpoints ? startCheckpointer(this.dbFile) : undefined;
    if (options.backgroundCheckpoints) {
      // Long-lived processes keep the explorer's daily counts close to the audit table, so the first summary after a
      // quiet spell does not pay for a large catch-up. Best effort: summaries stay exact either way.
      this.rollupTimer = setInterval(() => {
        this.denials
          .catchUpDailyCounts()
          .catch((error: unknown) => console.error('Counting denials into the daily table failed; summaries read the audit table meanwhile.', error));
      }, 60_000);
      this.rollupTimer.unref();
      // The free-text index of the denials follows the writes within a second (lib/audit/denials/search.ts); searches
      // scan the rows it does not hold yet, so they stay exact meanwhile.
      this.searchTimer = setInterval(() => {
        this.denials.catchUpSearch().catch((error: unknown) => console.error('Indexing new denials for search failed; searches scan them meanwhile.', error));
      }, 1_000);
      this.searchTimer.unref();
    }
    this.database = new SqliteDatabase(this.db.$client);
    this.denials = new SqlDenialStore(this.database);
    this.securityEvents = new SqlSecurityEventQueries(this.database);
    this.revisions = new SqlRevisionStore(this.database);
    // Opened synchronously: the overrides are read now, and the service hears of later changes from its store.
    this.flags = new FlagService(new SqlFlagStore(this.database), {
      env: this.env,
      locks: this.profiles.locks,
      initial: overridesOf(this.database.allSync(OVERRIDES_QUERY)),
    });
    void this.flags.start().catch((error: unknown) => console.error('Listening for flag changes failed; the overrides are read again every few seconds.', error));
    this.recorder = new AuditRecorder(this.db.$client, {
      revision: () => this.currentRevision(),
      revisionContent: this.contentOfRevision,
      logAllDecisions: () => this.flags.values().get('decision_log_all') === true,
      maskKeys: this.profiles.maskKeys,
    });
    this.wire({
      flagValues: () => this.flags.values(),
      recordEvent: (event) => this.recorder.record(event),
    });
    this.notifications = new NotificationService({
      store: new SqlNotificationStore(this.database),
      config: () => this.notificationsFile.current,
      env: this.env,
      maskKeys: this.profiles.maskKeys,
      origin: this.env.SWARM_PROCESS || 'app',
    });
    this.approvals = new SqlApprovalStore(this.database, this.approvalListener(), this.callBinding);
    this.approvalPorts = new SqliteApprovalPorts(this.database, this.approvals, this.approvalListener(), this.callBinding);
    try {
      // Rows of a release that kept arguments in clear, bound by an unkeyed hash: re-bound once, now (nothing to do,
      // and no key needed, when there are none).
      if (this.database.allSync(LEGACY_APPROVALS).length > 0) this.database.transactionSync((tx) => this.approvals.rebindSteps(tx));
    } catch (error) {
      console.error('Re-binding the approvals of an earlier release failed; they ask again until it succeeds at a start.', error);
    }
    this.hooks = new HookRunner({
      hooks: () => this.hooksFile.current,
      flags: () => this.flags.values(),
      cwd: this.configDir,
      maskKeys: this.profiles.maskKeys,
      rates: new SqliteRateCounter(this.db.$client),
      onFailure: (f) =>
        this.recorder.record({ kind: 'hook', type: 'hook.failed', actor: 'system', outcome: 'failed', target: f.target ?? null, detail: { hook: f.hook, event: f.event, action: f.action, reason: f.reason } }),
    });
    this.tokens = new SqliteTokenPrincipals(this.db.$client);
    this.auth = new SqlAuthStore(this.database, this.tokens, (e) => {
      this.recorder.record({ kind: 'auth', type: e.type, actor: e.by, outcome: 'succeeded', target: e.target, detail: e.detail });
    });
    this.loginAttempts = new SqlLoginAttempts(this.database);
    this.engine = this.newEngine();
    this.decisions = new DecisionService({
      engine: this.engine,
      sqlite: this.db.$client,
      pinTokens: () => this.tokens.pinGeneration(),
      afterRollback: () => this.forgetUncommitted(),
    });
    if (options.sweepApprovals) this.startSweeper();
    if (options.deliverNotifications ?? options.sweepApprovals) this.notifications.startDelivery();
    if (options.server) this.startServerAudit();
  }

  /**
   * After a transaction of several decisions was rolled back (a batch, a group commit): what was remembered inside it
   * may not be stored, so the policy revision in force is stored again with the next row that names it.
   */
  forgetUncommitted(): void {
    this.recorder.forgetStoredRevisions();
  }

  /**
   * A server records its start, every configuration version it loads or refuses, and its stop; and it signs the heads
   * of the audit chains every 10 seconds when they moved (every 1,000 rows sooner), and at shutdown.
   */
  private startServerAudit(): void {
    this.signer();
    // Opened synchronously: the last start is read at once, through the same statement as the event queries.
    const [lastStart] = this.database.allSync<SecurityEventRow>(eventListQuery(this.database, { type: 'server.started' }, 1));
    const switched = this.profileSwitch(lastStart);
    if (switched) this.recorder.record(switched);
    for (const event of this.startEvents()) this.recorder.record(event);
    for (const file of this.configFiles()) file.onLoaded(() => this.recorder.record(this.configLoaded(file)));
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

  private signer(): AuditCheckpointer {
    if (!this.auditCheckpointer) {
      const keyDir = keyDirFor(this.dbFile, this.env);
      this.auditCheckpointer = new AuditCheckpointer(this.db.$client, loadOrCreateSigningKey(keyDir), {
        keyDir,
        database: this.dbFile,
        witnessDirs: witnessTargets(this.env).dirs,
        witnessUrls: witnessTargets(this.env).urls,
        trustedKeys: trustedVerifierKeys(keyDir, this.env),
        onRefused: (r) => this.recorder.record(checkpointRefusedEvent(r)),
      });
    }
    return this.auditCheckpointer;
  }

  /** Sign the heads of the audit chains now (when they moved since the last checkpoint). */
  checkpointAudit(): string[] {
    const notes = this.signer().checkpoint();
    if (notes.length > 0) {
      this.recorder.record({ kind: 'audit', type: 'audit.checkpointed', actor: 'system', outcome: 'succeeded', detail: { checkpoints: notes.length } });
      // The event itself goes under a checkpoint too: nothing this call wrote is left waiting for the next signer.
      this.signer().checkpoint();
    }
    return notes;
  }

  /** The newest signed checkpoint of each chain. */
  auditCheckpoints(): { chain: string; note: string }[] {
    return this.signer().latest();
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
      this.approvals.expireDue().catch((error: unknown) => console.error('Expiring due approval requests failed; retrying in a second.', error));
      // Requests nearing their expiry and denial bursts (config/notifications.yaml): a query or two, queued only.
      this.notifications.tick().catch((error: unknown) => console.error('Checking for notifications failed; retrying in a second.', error));
    }, intervalMs);
    this.sweepTimer.unref();
  }

  private newEngine(): PermissionEngine {
    return new PermissionEngine({
      config: () => this.configSnapshot(),
      ports: {
        flagValues: () => this.flags.values(),
        observe: observeDecision,
        approvalState: this.approvalStatePort(this.approvalPorts),
        // The invariant audit_trail_security_events: every denial is written, whatever else is configured.
        recorder: timedRecorder(this.recorder),
        requestApproval: (ctx, result) => this.approvalPorts.request(approvalRequestOf(ctx, result)).id,
        consumeApproval: (id, ctx) => this.approvalPorts.consume(id, consumerOf(ctx.principal)),
        callHooks: this.hooks,
      },
    });
  }

  /**
   * First start (no admin yet, even if other users were added first): create the admin (SWARM_ADMIN_PASSWORD or a
   * random password, returned to be printed once), and make
   * sure SWARM_ADMIN_TOKEN, when set, is a valid admin token.
   */
  async bootstrap(): Promise<StartupReport> {
    const report: StartupReport = {};
    if (!(await this.auth.hasAdmin())) {
      const given = this.env.SWARM_ADMIN_PASSWORD;
      const password = given && given.length > 0 ? given : randomPassword();
      await this.auth.createUser('admin', 'admin', password);
      report.createdAdmin = { username: 'admin', password, generated: !given };
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
   * The background work this application was started with: the WAL checkpointer thread and the approval sweeper
   * ('off' when not configured, as for one-shot CLI commands).
   */
  backgroundStatus(now = Date.now() / 1000): BackgroundStatus {
    return {
      checkpointer: this.checkpointer ? (this.checkpointer.alive() ? 'alive' : 'stopped') : 'off',
      // The sweeper ticks every second; five seconds without a tick means its timer is gone or the loop is blocked.
      sweeper: this.sweepTimer ? (now - this.lastSweepAt <= 5 ? 'alive' : 'stalled') : 'off',
      closed: this.closed,
    };
  }

  /**
   * Readiness of the database: it takes a write (the write lock taken and given back: fails on a read-only file, a full
   * disk's lock, or query_only).
   */
  async databaseReady(): Promise<{ ok: true } | { ok: false; detail: string }> {
    const sqlite = this.db.$client;
    if (this.closed) return { ok: false, detail: 'the application is closed' };
    // Someone is writing on this connection right now (the listener's group commit): it is writable.
    if (sqlite.inTransaction) return { ok: true };
    try {
      sqlite.exec('BEGIN IMMEDIATE');
      sqlite.exec('ROLLBACK');
      return { ok: true };
    } catch (error) {
      if (sqlite.inTransaction) {
        try {
          sqlite.exec('ROLLBACK');
        } catch {
          // nothing to roll back
        }
      }
      return { ok: false, detail: `the database is not writable: ${error instanceof Error ? error.message : String(error)}` };
    }
  }

  /**
   * Verify the audit chains (and the checkpoints and witnesses given) on a read-only connection of its own, long chains
   * on every core (lib/audit/verify-parallel.ts).
   */
  async verifyAudit(verifierKey: string | undefined, options: VerifyOptions = {}): Promise<VerifyReport> {
    const sqlite = new Database(this.dbFile, { readonly: true, fileMustExist: true });
    try {
      return await verifyAuditInParallel(sqlite, verifierKey, options);
    } finally {
      sqlite.close();
    }
  }

  /** The size of the write-ahead log, bytes (0 when checkpointed and truncated). */
  walBytes(): number | null {
    try {
      return statSync(`${this.dbFile}-wal`).size;
    } catch {
      return 0;
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.closeConfig();
    void this.flags.stop();
    if (this.rollupTimer) clearInterval(this.rollupTimer);
    if (this.searchTimer) clearInterval(this.searchTimer);
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    void this.notifications.stopDelivery();
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
    else if (this.options.signOnClose && hasSigningKey(keyDirFor(this.dbFile, this.env))) {
      // A command's own rows (its audit events) go under a checkpoint before it exits.
      try {
        this.signer().checkpoint();
      } catch (error) {
        console.error('Signing a checkpoint of the audit trail failed.', error);
      }
    }
    void this.checkpointer?.stop();
    this.db.$client.close();
  }
}

/** The background work of an application, for the readiness check. */
export interface BackgroundStatus {
  /** SQLite's WAL checkpointer thread ('off' on PostgreSQL and in one-shot commands) */
  checkpointer: 'alive' | 'stopped' | 'off';
  /** the approval sweeper ('standby' on PostgreSQL while another server leads) */
  sweeper: 'alive' | 'stalled' | 'standby' | 'off';
  closed: boolean;
}

/** An application on either database. Route handlers, pages and the CLI take this and await what they read. */
export type App = SwarmApp | PgSwarmApp;

/** A SQLite application (tests, the demo team, SQLite-only tools). */
export function createApp(options: AppOptions): SwarmApp {
  return new SwarmApp(options);
}

/**
 * The application SWARM_DB names: PostgreSQL for a postgres:// URL (asynchronous: it connects, migrates and loads
 * the flag overrides), SQLite otherwise.
 */
export async function openApp(options: AppOptions): Promise<App> {
  if (parseDbLocation(options.dbPath).kind === 'postgres') {
    const { PgSwarmApp } = await import('./pg-app');
    return PgSwarmApp.open(options);
  }
  return new SwarmApp(options);
}

const GLOBAL_KEY = Symbol.for('swarm-permissions.app');
const SQLITE_KEY = Symbol.for('swarm-permissions.sqlite-app');
type GlobalWithApp = typeof globalThis & { [GLOBAL_KEY]?: Promise<App>; [SQLITE_KEY]?: SwarmApp };

function serverOptions(): AppOptions {
  return {
    dbPath: process.env.SWARM_DB ?? 'data/swarm.db',
    watchConfig: true,
    backgroundCheckpoints: true,
    sweepApprovals: true,
    enforcePolicyTests: true,
    server: true,
  };
}

/**
 * The server's one application, from the environment (SWARM_DB, SWARM_CONFIG_DIR, SWARM_POLICY_FILE). On SQLite it
 * is opened at once; on PostgreSQL the first request waits for the connection, and a start that failed (the database
 * unreachable) is tried again by the next request rather than remembered.
 */
export function getApp(): Promise<App> {
  const g = globalThis as GlobalWithApp;
  if (!g[GLOBAL_KEY]) {
    const options = serverOptions();
    if (parseDbLocation(options.dbPath).kind === 'sqlite') {
      const app = new SwarmApp(options);
      g[SQLITE_KEY] = app;
      // Nothing but SQLite statements: done before the next I/O event, so before the first request is read.
      g[GLOBAL_KEY] = app.bootstrap().then(() => app);
    } else {
      const opening = (async () => {
        const app = await openApp(options);
        await app.bootstrap();
        return app;
      })();
      g[GLOBAL_KEY] = opening;
      opening.catch(() => {
        if (g[GLOBAL_KEY] === opening) delete g[GLOBAL_KEY];
      });
    }
  }
  return g[GLOBAL_KEY];
}

/** The server's application when SWARM_DB is a SQLite file, synchronously (tests and SQLite-only tools). */
export function getSqliteApp(): SwarmApp {
  if (parseDbLocation(process.env.SWARM_DB ?? 'data/swarm.db').kind !== 'sqlite') throw new Error('SWARM_DB is not a SQLite file.');
  // (a start that fails is reported to getApp()'s callers)
  getApp().catch(() => undefined);
  return (globalThis as GlobalWithApp)[SQLITE_KEY]!;
}
