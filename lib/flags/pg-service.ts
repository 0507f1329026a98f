/**
 * Flags on PostgreSQL, for several servers on one database: the overrides are held in memory (the engine reads flag
 * values on every decision, synchronously), and a change made on any server reaches every other within a second:
 * the change commits with `pg_notify('swarm_flags', …)`, and each server LISTENs on a connection of its own and reloads
 * the overrides when told. A server whose listening connection drops reconnects and reloads, and every server also
 * reloads every few seconds, so a notification lost in a reconnect delays a change, never loses it.
 *
 * The same rules as the SQLite service (invariants, locks of compliance profiles, a reason for every change, the
 * override removed when a flag goes back to its fallback) and the same append-only history (flag_changes), read with
 * the same filters (query.ts).
 */
import { asc, desc, eq, inArray, max, ne, sql } from 'drizzle-orm';
import type pg from 'pg';
import { dedicatedClient, type PgDb } from '@/db/pg/client';
import { flagChanges, flagOverrides } from '@/db/pg/schema';
import type { FlagChangeRow } from '@/db/schema';
import { AppError } from '@/lib/errors';
import { NO_LOCKS, flagNamed, resolveFlags, type FlagLocks, type FlagOverride, type FlagResolution, type ResolvedFlag } from './resolve';
import { HISTORY_LIMIT, historyWhere, refusalReason, type FlagHistoryFilter } from './query';
import { assertOverrideAllowed, assertUnsetAllowed, fallbackValue } from './service';

export const FLAGS_CHANNEL = 'swarm_flags';

export interface PgFlagServiceOptions {
  db: PgDb;
  pool: pg.Pool;
  env?: Readonly<Record<string, string | undefined>>;
  locks?: FlagLocks;
  /** the safety-net reload, ms (default 5,000) */
  resyncMs?: number;
}

export class PgFlagService {
  private overrides = new Map<string, FlagOverride>();
  private cached: FlagResolution | undefined;
  private listener: pg.Client | undefined;
  private retry: NodeJS.Timeout | undefined;
  private resync: NodeJS.Timeout | undefined;
  private stopped = false;
  /** reloads started and the newest one applied: an older reload that ends last never overwrites a newer one */
  private loadsStarted = 0;
  private loadApplied = 0;
  private readonly env: Readonly<Record<string, string | undefined>>;
  readonly locks: FlagLocks;

  constructor(private readonly options: PgFlagServiceOptions) {
    this.env = options.env ?? process.env;
    this.locks = options.locks ?? NO_LOCKS;
  }

  /** Load the overrides and start listening for changes made by any server. */
  async start(): Promise<void> {
    await this.reload();
    await this.listen();
    this.resync = setInterval(() => void this.reload().catch(() => undefined), this.options.resyncMs ?? 5_000);
    this.resync.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.resync) clearInterval(this.resync);
    if (this.retry) clearTimeout(this.retry);
    const l = this.listener;
    this.listener = undefined;
    if (l) await l.end().catch(() => undefined);
  }

  /**
   * Listen on a connection of its own, outside the pool (it is held for the life of the server; the pool's connections
   * all serve requests). A connection that drops, or cannot be had, is tried again every second until it is back; the
   * overrides are reloaded then, for what changed meanwhile.
   */
  private async listen(): Promise<void> {
    const client = dedicatedClient(this.options.pool);
    client.on('notification', (n) => {
      if (n.channel === FLAGS_CHANNEL) void this.reload().catch(() => undefined);
    });
    client.on('error', () => {
      if (this.listener === client) this.listener = undefined;
      void client.end().catch(() => undefined);
      this.listenAgain();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${FLAGS_CHANNEL}`);
    } catch (error) {
      void client.end().catch(() => undefined);
      throw error;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listener = client;
  }

  private listenAgain(delayMs = 1_000): void {
    if (this.stopped || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.listen().then(
        () => this.reload().catch(() => undefined),
        () => this.listenAgain(delayMs),
      );
    }, delayMs);
    this.retry.unref();
  }

  private async reload(): Promise<void> {
    const load = ++this.loadsStarted;
    const rows = await this.options.db.select().from(flagOverrides);
    if (load < this.loadApplied) return;
    this.loadApplied = load;
    this.overrides = new Map(rows.map((r) => [r.name, { value: r.value, setBy: r.setBy, setAt: r.setAt, reason: r.reason }]));
    this.cached = undefined;
  }

  /**
   * Read the overrides again now (a change written behind the service's back, a test). Resolves when they are in; a
   * caller that does not wait is not troubled by a failure (logged; the next reload comes within seconds).
   */
  invalidate(): Promise<void> {
    const reloading = this.reload();
    reloading.catch((error: unknown) => console.error('Reloading the flag overrides failed; the next reload tries again.', error));
    return reloading;
  }

  resolution(): FlagResolution {
    this.cached ??= resolveFlags(this.overrides, this.env, undefined, this.locks);
    return this.cached;
  }

  values(): ReadonlyMap<string, boolean> {
    return this.resolution().values;
  }

  get(name: string): ResolvedFlag {
    return flagNamed(this.resolution(), name);
  }

  /** Set a runtime override; every server has it within a second. */
  async setOverride(name: string, value: boolean, by: string, reason: string): Promise<ResolvedFlag> {
    assertOverrideAllowed(name, value, reason, this.locks);
    const fallback = fallbackValue(name, this.env, this.locks);
    const at = Date.now() / 1000;
    const removed = await this.options.db.transaction(async (tx) => {
      const [old] = await tx.select().from(flagOverrides).where(eq(flagOverrides.name, name)).for('update');
      if (value === fallback) {
        // Back to its fallback: the override is removed rather than a second one left behind.
        if (!old) return false;
        await tx.delete(flagOverrides).where(eq(flagOverrides.name, name));
        await tx.insert(flagChanges).values({ name, oldValue: old.value, newValue: fallback, action: 'unset', changedBy: by, changedAt: at, reason });
      } else {
        await tx
          .insert(flagOverrides)
          .values({ name, value, setBy: by, setAt: at, reason })
          .onConflictDoUpdate({ target: flagOverrides.name, set: { value, setBy: by, setAt: at, reason } });
        await tx.insert(flagChanges).values({ name, oldValue: old ? old.value : this.get(name).value, newValue: value, action: 'set', changedBy: by, changedAt: at, reason });
      }
      await tx.execute(sql`SELECT pg_notify(${FLAGS_CHANNEL}, ${name})`);
      return true;
    });
    if (removed || value !== fallback) await this.reload();
    return this.get(name);
  }

  /** Remove a runtime override; the flag falls back to environment, alias or default, on every server. */
  async unsetOverride(name: string, by: string, reason: string): Promise<ResolvedFlag> {
    assertUnsetAllowed(name, reason);
    await this.options.db.transaction(async (tx) => {
      const [old] = await tx.select().from(flagOverrides).where(eq(flagOverrides.name, name)).for('update');
      if (!old) throw new AppError('NOT_FOUND', `Flag "${name}" has no runtime override to remove.`);
      await tx.delete(flagOverrides).where(eq(flagOverrides.name, name));
      const fallback = fallbackValue(name, this.env, this.locks);
      await tx.insert(flagChanges).values({ name, oldValue: old.value, newValue: fallback, action: 'unset', changedBy: by, changedAt: Date.now() / 1000, reason });
      await tx.execute(sql`SELECT pg_notify(${FLAGS_CHANNEL}, ${name})`);
    });
    await this.reload();
    return this.get(name);
  }

  /**
   * The change history, newest first, from any server. `name` and `by` match exactly; `before` is the id of the last
   * row of the previous page (ids only grow, so a page never shifts when changes are added meanwhile).
   */
  history(filter: FlagHistoryFilter = {}): Promise<FlagChangeRow[]> {
    return this.options.db
      .select()
      .from(flagChanges)
      .where(historyWhere(flagChanges, filter))
      .orderBy(desc(flagChanges.id))
      .limit(filter.limit ?? HISTORY_LIMIT);
  }

  /**
   * Record a change that was refused (an invariant, a flag a profile locks) in the flag history, beside the changes
   * that took effect, so the history shows every attempt. Nothing changes, so no server is told.
   */
  async recordRefusal(name: string, requested: boolean | null, by: string, reason: string, refusal: string): Promise<void> {
    const current = this.resolution().flags.get(name)?.value ?? null;
    await this.options.db
      .insert(flagChanges)
      .values({ name, oldValue: current, newValue: requested, action: 'refused', changedBy: by, changedAt: Date.now() / 1000, reason: refusalReason(reason, refusal) });
  }

  /** The newest change that took effect of every flag that was ever changed, by flag name (one query, not one per flag). */
  async lastChanges(): Promise<Map<string, FlagChangeRow>> {
    const db = this.options.db;
    const newest = db.select({ id: max(flagChanges.id) }).from(flagChanges).where(ne(flagChanges.action, 'refused')).groupBy(flagChanges.name);
    const rows = await db.select().from(flagChanges).where(inArray(flagChanges.id, newest));
    return new Map(rows.map((r) => [r.name, r]));
  }

  /** Every flag that was ever changed (including flags since removed from the catalog), for the history's filter. */
  async historyNames(): Promise<string[]> {
    const rows = await this.options.db.selectDistinct({ name: flagChanges.name }).from(flagChanges).orderBy(asc(flagChanges.name));
    return rows.map((r) => r.name);
  }

  /** Everyone who ever changed a flag, for the history's "by" filter. */
  async historyAuthors(): Promise<string[]> {
    const rows = await this.options.db.selectDistinct({ by: flagChanges.changedBy }).from(flagChanges).orderBy(asc(flagChanges.changedBy));
    return rows.map((r) => r.by);
  }
}
