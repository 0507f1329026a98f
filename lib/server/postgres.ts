/**
 * The application's PostgreSQL side (lib/server/app.ts: DatabaseSide), SWARM_DB=postgres://…: stores that several
 * servers share on one database. Opening is asynchronous: it connects, applies the migrations (once, whichever server
 * starts first) and loads the flag overrides.
 *
 * What runs on one server at a time (the approval sweeper with the notification checks, the signing of checkpoints)
 * is led through PostgreSQL advisory locks (lib/ops/leader.ts); a server that dies gives the lead up with its session.
 */
import type pg from 'pg';
import { DatabaseUnavailable, migratePostgres, openPool } from '@/db/pg/client';
import { PostgresDatabase } from '@/db/dialect';
import { parseDbLocation } from '@/db/location';
import { approvalRequestOf, type SqlApprovalStore } from '@/lib/approvals/store';
import { consumerOf } from '@/lib/approvals/rules';
import { Checkpointer, hasSigningKey, keyDirFor, loadSigningKey } from '@/lib/audit/trail/checkpoints';
import { PgAuditRecorder } from '@/lib/audit/trail/pg-recorder';
import { verifyTrail, type VerifyOptions, type VerifyReport } from '@/lib/audit/trail/verify';
import { PostgresTokenPrincipals } from '@/lib/auth/tokens-postgres';
import { SqlRateCounter } from '@/lib/hooks/rates';
import { Leadership, LEADER_LOCKS } from '@/lib/ops/leader';
import { timedAsyncRecorder } from '@/lib/ops/metrics';
import type { AuditEvent } from '@/lib/permissions';
import { postgresTrail, type ReportTrail } from '@/lib/reports/reader';
import { App, type AppOptions, type BackgroundStatus, type DatabaseSide, type SidePorts } from './app';
import { repeatWithoutOverlap } from './repeat';

/** Connect, migrate, build the application, load the flags and start its background work; then it is ready. */
export async function openPostgres(options: AppOptions): Promise<App<PostgresSide>> {
  const where = parseDbLocation(options.dbPath);
  if (where.kind !== 'postgres') throw new Error(`A PostgreSQL application needs a postgres:// URL, not ${options.dbPath}.`);
  const env = options.env ?? process.env;
  const pool = openPool({ url: where.url, max: Number(env.SWARM_PG_POOL_MAX) || undefined, applicationName: `swarm-permissions ${env.SWARM_PROCESS || 'app'}` });
  let app: App<PostgresSide>;
  try {
    await migratePostgres(pool, where.url);
    app = new App<PostgresSide>(options, (a) => new PostgresSide(a, pool, where.url));
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
  try {
    await app.side.start();
  } catch (error) {
    // What started (the flag listener, the config watchers, the leaders) stops with the pool: nothing keeps the
    // process alive after a start that failed.
    await app.close().catch(() => undefined);
    throw error;
  }
  return app;
}

export class PostgresSide implements DatabaseSide {
  readonly kind = 'postgres' as const;
  readonly handlesSignals = true;
  readonly db = undefined;
  readonly database: PostgresDatabase;
  readonly recorder: PgAuditRecorder;
  /** the decision path's token lookup: cached, forgotten on every server when tokens or users change (within a second) */
  readonly tokens: PostgresTokenPrincipals;
  readonly rates: SqlRateCounter;
  /** the sweeper runs on the server that holds the sweeper lock; the others stand by */
  readonly sweeperLead: Leadership | undefined;
  private readonly signerLead: Leadership | undefined;
  private auditTimer: NodeJS.Timeout | undefined;
  private checkpointer: Checkpointer | undefined;
  private closed: Promise<void> | undefined;

  constructor(
    private readonly app: App<PostgresSide>,
    readonly pool: pg.Pool,
    url: string,
  ) {
    this.database = new PostgresDatabase(pool, url);
    this.recorder = new PgAuditRecorder(pool, app.recorderOptions());
    this.tokens = new PostgresTokenPrincipals(this.database, this.app.credentials);
    this.rates = new SqlRateCounter(this.database);
    if (app.options.sweepApprovals) this.sweeperLead = new Leadership(pool, LEADER_LOCKS.sweeper);
    if (app.options.server) this.signerLead = new Leadership(pool, LEADER_LOCKS.checkpoints);
  }

  recordEvent(event: AuditEvent): void {
    void this.recorder.record(event).catch((error: unknown) => console.error(`Recording a ${event.kind} event failed.`, error));
  }

  enginePorts(approvals: SqlApprovalStore): SidePorts {
    return {
      async: true,
      approvalState: this.app.approvalStatePort(approvals),
      // The invariant audit_trail_security_events: every denial is written, whatever else is configured.
      recorder: timedAsyncRecorder(this.recorder),
      requestApproval: async (ctx, result) => (await approvals.request(approvalRequestOf(ctx, result))).id,
      consumeApproval: (id, ctx) => approvals.consume(id, consumerOf(ctx.principal)),
    };
  }

  async start(): Promise<void> {
    const { app } = this;
    await app.flags.start();
    await app.mcpPins.start();
    await this.tokens.start();
    // Rows of a release that kept arguments in clear, bound by an unkeyed hash: re-bound once, by the first server that
    // has the key (nothing to do, and no key needed, when there are none).
    await app.approvals.rebindLegacy().catch((error: unknown) => console.error('Re-binding the approvals of an earlier release failed; they ask again until it succeeds at a start.', error));
    if (app.options.sweepApprovals) app.startSweeper();
    if (app.options.deliverNotifications ?? app.options.sweepApprovals) app.notifications.startDelivery();
    if (app.options.server) await this.startServerAudit();
  }

  private signingKeyDir(): string {
    if (!this.app.env.SWARM_AUDIT_KEY_DIR) {
      throw new Error(
        'SWARM_AUDIT_KEY_DIR must name the folder of the audit signing key when SWARM_DB is a PostgreSQL URL (the same key pair on every server: see docs/deployment.md).',
      );
    }
    return keyDirFor(this.app.options.dbPath, this.app.env);
  }

  private signer(): Checkpointer {
    if (!this.checkpointer) {
      const keyDir = this.signingKeyDir();
      this.checkpointer = new Checkpointer(this.database, loadSigningKey(keyDir), this.app.signerOptions(keyDir, this.app.options.dbPath));
    }
    return this.checkpointer;
  }

  /**
   * A server records its start, every configuration version it loads or refuses, and its stop. The server that holds
   * the checkpoint lock signs the heads of the audit chains every 10 seconds when they moved (every 1,000 rows sooner).
   */
  private async startServerAudit(): Promise<void> {
    const { app } = this;
    this.signer();
    const switched = app.profileSwitch((await app.securityEvents.ofType('server.started', 1))[0]);
    if (switched) await this.recorder.record(switched);
    for (const event of app.startEvents()) await this.recorder.record(event);
    for (const file of app.configFiles()) file.onLoaded(() => this.recordEvent(app.configLoaded(file)));
    const lead = this.signerLead!;
    let ticks = 0;
    this.auditTimer = repeatWithoutOverlap(2_000, async () => {
      try {
        if (await lead.tryLead()) await this.signer().checkpoint({ minRows: ++ticks % 5 === 0 ? 1 : 1000 });
      } catch (error) {
        console.error('Signing a checkpoint of the audit trail failed; retrying.', error);
      }
    });
    if (process.env.NEXT_MANUAL_SIG_HANDLE) {
      // The Next.js server of `npm start` leaves the signals to this application (lib/server/serve.ts): its stop is
      // recorded and the last checkpoint signed before the process exits.
      // A second signal (the process group's and the listener's both reach it) must not cut the first one's work short.
      const stop = (signal: NodeJS.Signals) => void this.close().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
    }
  }

  async checkpointAudit(): Promise<string[]> {
    const notes = await this.signer().checkpoint();
    if (notes.length > 0) {
      await this.recorder.record({ kind: 'audit', type: 'audit.checkpointed', actor: 'system', outcome: 'succeeded', detail: { checkpoints: notes.length } });
      // The event itself goes under a checkpoint too: nothing this call wrote is left waiting for the next signer.
      await this.signer().checkpoint();
    }
    return notes;
  }

  auditCheckpoints(): Promise<{ chain: string; note: string }[]> {
    return this.signer().latest();
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
      return { ok: false, detail: new DatabaseUnavailable(this.app.options.dbPath, error).message };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Verify the audit chains (and the checkpoints and witnesses given) in one snapshot, read in pages. */
  verifyAudit(verifierKey: string | undefined, options: VerifyOptions): Promise<VerifyReport> {
    return verifyTrail(this.database, verifierKey, options);
  }

  reportTrail(): ReportTrail {
    return postgresTrail(this.database);
  }

  /** Every server's signing key lives in SWARM_AUDIT_KEY_DIR: none when it is not set. */
  verifierKeyDir(): string | undefined {
    return this.app.env.SWARM_AUDIT_KEY_DIR ? keyDirFor(this.app.options.dbPath, this.app.env) : undefined;
  }

  backgroundStatus(): Omit<BackgroundStatus, 'sweeper'> {
    return { checkpointer: 'off', closed: this.closed !== undefined };
  }

  /** Stop the background work, record the stop and sign a last checkpoint (when leading), close the pool. */
  close(): Promise<void> {
    const { app } = this;
    this.closed ??= (async () => {
      app.closeConfig();
      app.stopSweeper();
      // Not awaited (a hung receiver must not hold the shutdown): a send still in flight leaves its row to its lease.
      void app.notifications.stopDelivery();
      if (this.auditTimer) {
        clearInterval(this.auditTimer);
        try {
          await this.recorder.record({ kind: 'system', type: 'server.stopped', actor: 'system', outcome: 'succeeded', detail: { pid: process.pid } });
          if (this.signerLead?.isLeader()) await this.checkpointer?.checkpoint();
        } catch (error) {
          console.error('Recording the server stop failed.', error);
        }
      } else if (app.options.signOnClose && app.env.SWARM_AUDIT_KEY_DIR && hasSigningKey(keyDirFor(app.options.dbPath, app.env))) {
        // A command's own rows (its audit events) go under a checkpoint before it exits.
        await this.signer()
          .checkpoint()
          .catch((error: unknown) => console.error('Signing a checkpoint of the audit trail failed.', error));
      }
      // Checkpoints still on their way to a witness server read the rows they carry from the pool (at most 30 s each).
      if (this.checkpointer?.guard.delivers) await this.checkpointer.guard.delivered();
      await this.sweeperLead?.stop();
      await this.signerLead?.stop();
      await app.flags.stop();
      await app.mcpPins.stop();
      await this.tokens.stop();
      await this.pool.end();
    })();
    return this.closed;
  }
}
