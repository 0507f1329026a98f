/**
 * Readiness: can this server do its job right now? The database takes a write (a write transaction opened and rolled
 * back), every configuration file loaded without error, the WAL checkpointer thread and the approval sweeper are
 * running (on PostgreSQL: a statement answers within two seconds, and the sweeper runs here or stands by while another
 * server leads). `GET /api/v1/ready` answers 200 when all hold, 503 naming what does not.
 */
import type { App, SwarmApp } from '@/lib/app';
import type { PgSwarmApp } from '@/lib/pg-app';

export interface ReadyCheck {
  name: 'database' | 'configuration' | 'checkpointer' | 'sweeper';
  ok: boolean;
  /** what is wrong (or 'off' when this process does not run it) */
  detail?: string;
}

export interface Readiness {
  ready: boolean;
  checks: ReadyCheck[];
  /** the failed checks in one sentence */
  reason?: string;
}

function databaseWritable(app: SwarmApp): ReadyCheck {
  const sqlite = app.db.$client;
  try {
    if (app.backgroundStatus().closed) return { name: 'database', ok: false, detail: 'the application is closed' };
    if (sqlite.inTransaction) {
      // Someone is writing on this connection right now (the listener's group commit): it is writable.
      return { name: 'database', ok: true };
    }
    // Take the write lock and give it back: fails on a read-only file, a full disk's lock, or query_only.
    sqlite.exec('BEGIN IMMEDIATE');
    sqlite.exec('ROLLBACK');
    return { name: 'database', ok: true };
  } catch (error) {
    if (sqlite.inTransaction) {
      try {
        sqlite.exec('ROLLBACK');
      } catch {
        // nothing to roll back
      }
    }
    return { name: 'database', ok: false, detail: `the database is not writable: ${error instanceof Error ? error.message : String(error)}` };
  }
}

async function databaseReachable(app: PgSwarmApp): Promise<ReadyCheck> {
  if (app.backgroundStatus().closed) return { name: 'database', ok: false, detail: 'the application is closed' };
  const r = await app.databaseReachable();
  return r.ok ? { name: 'database', ok: true } : { name: 'database', ok: false, detail: r.detail };
}

export async function readiness(app: App): Promise<Readiness> {
  const checks: ReadyCheck[] = [app.kind === 'sqlite' ? databaseWritable(app) : await databaseReachable(app)];
  const broken = app.configStatus().filter((s) => s.error !== null);
  checks.push(
    broken.length === 0
      ? { name: 'configuration', ok: true }
      : { name: 'configuration', ok: false, detail: broken.map((s) => `${s.path}: ${s.error!.split('\n')[0]}`).join('; ') },
  );
  const bg = app.backgroundStatus();
  checks.push(
    bg.checkpointer === 'stopped'
      ? { name: 'checkpointer', ok: false, detail: 'the WAL checkpointer thread has stopped' }
      : { name: 'checkpointer', ok: true, ...(bg.checkpointer === 'off' ? { detail: 'off' } : {}) },
  );
  checks.push(
    bg.sweeper === 'stalled'
      ? { name: 'sweeper', ok: false, detail: 'the approval sweeper has not run for more than 5 seconds' }
      : { name: 'sweeper', ok: true, ...(bg.sweeper === 'off' || bg.sweeper === 'standby' ? { detail: bg.sweeper === 'off' ? 'off' : 'standby: another server leads' } : {}) },
  );
  const failed = checks.filter((c) => !c.ok);
  return { ready: failed.length === 0, checks, ...(failed.length ? { reason: failed.map((c) => `${c.name}: ${c.detail}`).join('; ') } : {}) };
}
