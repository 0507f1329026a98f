/**
 * Readiness: can this server do its job right now? The database takes a write (a write transaction opened and rolled
 * back), every configuration file loaded without error, the WAL checkpointer thread and the approval sweeper are
 * running (on PostgreSQL: a statement answers within two seconds, and the sweeper runs here or stands by while another
 * server leads). `GET /api/v1/ready` answers 200 when all hold, 503 naming what does not.
 */
import type { App } from '@/lib/app';

export interface ReadyCheck {
  name: 'database' | 'configuration' | 'rules' | 'checkpointer' | 'sweeper';
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

export async function readiness(app: App): Promise<Readiness> {
  const database = await app.databaseReady();
  const checks: ReadyCheck[] = [database.ok ? { name: 'database', ok: true } : { name: 'database', ok: false, detail: database.detail }];
  const broken = app.configStatus().filter((s) => s.error !== null);
  checks.push(
    broken.length === 0
      ? { name: 'configuration', ok: true }
      : { name: 'configuration', ok: false, detail: broken.map((s) => `${s.path}: ${s.error!.split('\n')[0]}`).join('; ') },
  );
  // The rules in force could not be used (an active revision changed in the database): nothing is decided.
  checks.push(app.rulesRefusal === undefined ? { name: 'rules', ok: true } : { name: 'rules', ok: false, detail: `no decision is taken: ${app.rulesRefusal}` });
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
