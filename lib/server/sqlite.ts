/**
 * The application's SQLite side (lib/server/app.ts: DatabaseSide): the file, opened synchronously, and the decision
 * path's ports that answer at once (the chain append, the token lookup, the approval ports, the rate counter), so that
 * a group of decisions commits inside one transaction without yielding; and a process's background work (the WAL
 * checkpointer thread, the search index and daily counts, the approval sweeper, the signer of checkpoints).
 */
import { statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { openDatabase, SERVER_WAL_AUTOCHECKPOINT_PAGES, type Db } from '@/db/client';
import { parseDbLocation } from '@/db/location';
import { startCheckpointer, type Checkpointer } from '@/db/checkpointer';
import { SqliteDatabase } from '@/db/dialect';
import type { SecurityEventRow } from '@/db/schema';
import { approvalRequestOf, LEGACY_APPROVALS, type SqlApprovalStore } from '@/lib/approvals/store';
import { SqliteApprovalPorts } from '@/lib/approvals/sqlite-ports';
import { consumerOf } from '@/lib/approvals/rules';
import { AuditRecorder } from '@/lib/audit/trail/recorder';
import { SqliteCheckpointer as AuditCheckpointer, hasSigningKey, keyDirFor, loadOrCreateSigningKey } from '@/lib/audit/trail/checkpoints';
import { eventListQuery } from '@/lib/audit/security-events';
import type { VerifyOptions, VerifyReport } from '@/lib/audit/trail/verify';
import { verifyAuditInParallel, type ParallelVerifyReport } from '@/lib/audit/trail/verify-parallel';
import { SqliteTokenPrincipals } from '@/lib/auth/tokens-sqlite';
import { OVERRIDES_QUERY, overridesOf } from '@/lib/flags/store';
import { ACCEPTED_QUERY, pinsOf, type PinMap, type PinRow } from '@/lib/mcp/pins/store';
import type { FlagOverride } from '@/lib/flags/resolve';
import { sqliteTrail, type ReportTrail } from '@/lib/reports/reader';
import { SqliteRateCounter } from '@/lib/hooks/rates';
import { timedRecorder } from '@/lib/ops/metrics';
import type { AuditEvent } from '@/lib/permissions';
import { App, type AppOptions, type BackgroundStatus, type DatabaseSide, type SidePorts } from './app';
import { messageOf } from '@/lib/errors';

/** A SQLite application, opened at once (tests, the demo team, SQLite-only tools). */
export function createApp(options: AppOptions): App<SqliteSide> {
  // A URL the product cannot use is refused here, before anything starts (never a file named after it).
  const where = parseDbLocation(options.dbPath);
  if (where.kind === 'postgres') {
    throw new Error(`SWARM_DB names a PostgreSQL database (${where.shown}): open it with openApp(), which is asynchronous.`);
  }
  const app = new App<SqliteSide>(options, (a) => new SqliteSide(a, where.path));
  app.side.start();
  return app;
}

/**
 * Verify the audit chains of a SQLite file (and the checkpoints and witnesses given) on a read-only connection of its
 * own, as the file is (no migrations, no writes), long chains on every core (lib/audit/trail/verify-parallel.ts).
 */
export async function verifySqliteFile(file: string, verifierKey: string | undefined, options: VerifyOptions): Promise<ParallelVerifyReport> {
  const sqlite = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return await verifyAuditInParallel(sqlite, verifierKey, options);
  } finally {
    sqlite.close();
  }
}

export class SqliteSide implements DatabaseSide {
  readonly kind = 'sqlite' as const;
  readonly handlesSignals = false;
  readonly pool = undefined;
  readonly db: Db;
  /** the SQLite file (SWARM_DB as a path) */
  readonly dbFile: string;
  readonly database: SqliteDatabase;
  readonly recorder: AuditRecorder;
  /** the decision path's token lookup: synchronous, cached while auth_generation stays the same */
  readonly tokens: SqliteTokenPrincipals;
  readonly rates: SqliteRateCounter;
  /** the engine's approval ports, synchronous (the state of a call, request, consume): the store's rules, at once */
  approvalPorts: SqliteApprovalPorts | undefined;
  private readonly checkpointer: Checkpointer | undefined;
  private rollupTimer: NodeJS.Timeout | undefined;
  private searchTimer: NodeJS.Timeout | undefined;
  private auditTimer: NodeJS.Timeout | undefined;
  private auditCheckpointer: AuditCheckpointer | undefined;
  private closed = false;

  constructor(
    private readonly app: App<SqliteSide>,
    file: string,
  ) {
    const options = app.options;
    this.dbFile = file;
    this.db = openDatabase({
      path: file,
      sync: options.sync ?? (app.env.SWARM_DB_SYNC === 'full' ? 'full' : 'normal'),
      walAutocheckpointPages: options.backgroundCheckpoints || options.checkpointsElsewhere ? SERVER_WAL_AUTOCHECKPOINT_PAGES : undefined,
    });
    this.checkpointer = options.backgroundCheckpoints ? startCheckpointer(file) : undefined;
    this.database = new SqliteDatabase(this.db.$client);
    this.recorder = new AuditRecorder(this.db.$client, app.recorderOptions());
    this.tokens = new SqliteTokenPrincipals(this.db.$client, this.app.credentials);
    this.rates = new SqliteRateCounter(this.database);
  }

  /** Opened synchronously: the overrides are read now, and the flag service hears of later changes from its store. */
  initialOverrides(): Map<string, FlagOverride> {
    return overridesOf(this.database.allSync(OVERRIDES_QUERY), this.app.credentials);
  }

  /** Opened synchronously: the MCP pins in force are read now, and the pin service hears of later changes. */
  initialPins(): PinMap {
    return pinsOf(this.database.allSync<PinRow>(ACCEPTED_QUERY).map((r) => ({ ...r, id: Number(r.id), at: Number(r.at) })), this.app.credentials);
  }

  recordEvent(event: AuditEvent): void {
    this.recorder.record(event);
  }

  enginePorts(approvals: SqlApprovalStore): SidePorts {
    const ports = (this.approvalPorts = new SqliteApprovalPorts(this.database, approvals, this.app.approvalListener(), this.app.callBinding, this.app.trailProof));
    return {
      approvalState: this.app.approvalStatePort(ports),
      // The invariant audit_trail_security_events: every denial is written, whatever else is configured.
      recorder: timedRecorder(this.recorder),
      requestApproval: (ctx, result) => ports.request(approvalRequestOf(ctx, result)).id,
      consumeApproval: (id, ctx) => ports.consume(id, consumerOf(ctx.principal)),
    };
  }

  decisionOptions() {
    // After a rolled-back group of decisions, what was remembered inside it may not be stored: the revision in force is
    // stored again with the next row that names it (on PostgreSQL a transaction stores it with its rows or not at all).
    return { sqlite: this.db.$client, pinTokens: () => this.tokens.pinGeneration(), afterRollback: () => this.recorder.forgetStoredRevisions() };
  }

  start(): void {
    const { app } = this;
    const options = app.options;
    void app.flags.start().catch((error: unknown) => console.error('Listening for flag changes failed; the overrides are read again every few seconds.', error));
    void app.mcpPins.start({ loaded: true }).catch((error: unknown) => console.error('Listening for MCP pin changes failed; the pins are read again every few seconds.', error));
    try {
      // Rows of a release that kept arguments in clear, bound by an unkeyed hash: re-bound once, now (nothing to do,
      // and no key needed, when there are none).
      if (this.database.allSync(LEGACY_APPROVALS).length > 0) this.database.transactionSync((tx) => app.approvals.rebindSteps(tx));
    } catch (error) {
      console.error('Re-binding the approvals of an earlier release failed; they ask again until it succeeds at a start.', error);
    }
    if (options.backgroundCheckpoints) {
      // Long-lived processes keep the explorer's daily counts close to the audit table, so the first summary after a
      // quiet spell does not pay for a large catch-up. Best effort: summaries stay exact either way.
      this.rollupTimer = setInterval(() => {
        app.denials
          .catchUpDailyCounts()
          .catch((error: unknown) => console.error('Counting denials into the daily table failed; summaries read the audit table meanwhile.', error));
      }, 60_000);
      this.rollupTimer.unref();
      // The free-text index of the denials follows the writes within a second (lib/audit/denials/search.ts); searches
      // scan the rows it does not hold yet, so they stay exact meanwhile.
      this.searchTimer = setInterval(() => {
        app.denials.catchUpSearch().catch((error: unknown) => console.error('Indexing new denials for search failed; searches scan them meanwhile.', error));
      }, 1_000);
      this.searchTimer.unref();
    }
    if (options.sweepApprovals) app.startSweeper();
    if (options.deliverNotifications ?? options.sweepApprovals) app.notifications.startDelivery();
    if (options.server) this.startServerAudit();
  }

  /**
   * A server records its start, every configuration version it loads or refuses, and its stop; and it signs the heads
   * of the audit chains every 10 seconds when they moved (every 1,000 rows sooner), and at shutdown.
   */
  private startServerAudit(): void {
    const { app } = this;
    this.signer();
    // Opened synchronously: the last start is read at once, through the same statement as the event queries.
    const [lastStart] = this.database.allSync<SecurityEventRow>(eventListQuery(this.database, { type: 'server.started' }, 1));
    const switched = app.profileSwitch(lastStart);
    if (switched) this.recorder.record(switched);
    for (const event of app.startEvents()) this.recorder.record(event);
    for (const file of app.configFiles()) file.onLoaded(() => this.recorder.record(app.configLoaded(file)));
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
      const keyDir = keyDirFor(this.dbFile, this.app.env);
      this.auditCheckpointer = new AuditCheckpointer(this.database, loadOrCreateSigningKey(keyDir), this.app.signerOptions(keyDir, this.dbFile));
    }
    return this.auditCheckpointer;
  }

  checkpointAudit(): string[] {
    const notes = this.signer().checkpoint();
    if (notes.length > 0) {
      this.recorder.record({ kind: 'audit', type: 'audit.checkpointed', actor: 'system', outcome: 'succeeded', detail: { checkpoints: notes.length } });
      // The event itself goes under a checkpoint too: nothing this call wrote is left waiting for the next signer.
      this.signer().checkpoint();
    }
    return notes;
  }

  auditCheckpoints(): { chain: string; note: string }[] {
    return this.signer().latest();
  }

  backgroundStatus(): Omit<BackgroundStatus, 'sweeper'> {
    return { checkpointer: this.checkpointer ? (this.checkpointer.alive() ? 'alive' : 'stopped') : 'off', closed: this.closed };
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
      return { ok: false, detail: `the database is not writable: ${messageOf(error)}` };
    }
  }

  verifyAudit(verifierKey: string | undefined, options: VerifyOptions): Promise<VerifyReport> {
    return verifySqliteFile(this.dbFile, verifierKey, options);
  }

  reportTrail(): ReportTrail {
    return sqliteTrail(this.db, this.database);
  }

  /** The key folder beside the file (or SWARM_AUDIT_KEY_DIR). */
  verifierKeyDir(): string {
    return keyDirFor(this.dbFile, this.app.env);
  }

  walBytes(): number {
    try {
      return statSync(`${this.dbFile}-wal`).size;
    } catch {
      return 0;
    }
  }

  /**
   * Closes at once (the connection, the timers, the last rows); the promise settles when the background work has
   * stopped too (the flag feed, notification delivery, the WAL checkpointer thread), for whoever removes the file next.
   */
  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    const { app } = this;
    app.closeConfig();
    const stopping: Promise<unknown>[] = [app.flags.stop(), app.mcpPins.stop()];
    if (this.rollupTimer) clearInterval(this.rollupTimer);
    if (this.searchTimer) clearInterval(this.searchTimer);
    app.stopSweeper();
    stopping.push(app.notifications.stopDelivery());
    if (this.auditTimer) {
      clearInterval(this.auditTimer);
      // A server's last words: its stop, and a checkpoint that covers everything it wrote.
      try {
        this.recorder.record({ kind: 'system', type: 'server.stopped', actor: 'system', outcome: 'succeeded', detail: { pid: process.pid } });
        this.auditCheckpointer?.checkpoint();
      } catch (error) {
        console.error('Recording the server stop failed.', error);
      }
    } else if (app.options.signOnClose && hasSigningKey(keyDirFor(this.dbFile, app.env))) {
      // A command's own rows (its audit events) go under a checkpoint before it exits.
      try {
        this.signer().checkpoint();
      } catch (error) {
        console.error('Signing a checkpoint of the audit trail failed.', error);
      }
    }
    if (this.checkpointer) stopping.push(this.checkpointer.stop());
    // the last uses of tokens noted and not yet written (synchronous on SQLite, before the connection closes)
    void this.tokens.lastUse.close();
    // Checkpoints still on their way to a witness server read the rows they carry from this connection (a command's
    // last checkpoint, signed just above): it closes once they are sent; at once when there is no witness server.
    const guard = this.auditCheckpointer?.guard;
    if (guard?.delivers) stopping.push(guard.delivered().finally(() => this.db.$client.close()));
    else this.db.$client.close();
    return Promise.allSettled(stopping).then(() => undefined);
  }
}
