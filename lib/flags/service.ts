/**
 * Flags backed by the database: overrides live in flag_overrides, every change in the append-only flag_changes.
 * Values are cached and re-read at most every `refreshMs`, so a change made by another process (the CLI, a second
 * server) takes effect within a second without a restart.
 */
import { asc, desc, eq, inArray, max, ne } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { flagChanges, flagOverrides, type FlagChangeRow } from '@/db/schema';
import { AppError } from '@/lib/errors';
import { FLAGS_BY_NAME } from './catalog';
import { HISTORY_LIMIT, historyWhere, refusalReason, type FlagHistoryFilter } from './query';
import { NO_LOCKS, flagNamed, resolveFlags, type FlagLocks, type FlagOverride, type FlagResolution, type ResolvedFlag } from './resolve';

/** A runtime override may be set: a known flag, a reason, not an invariant turned off, not a flag a profile locks. */
export function assertOverrideAllowed(name: string, value: boolean, reason: string, locks: FlagLocks): void {
  const def = FLAGS_BY_NAME.get(name);
  if (!def) throw new AppError('NOT_FOUND', `There is no flag named "${name}".`);
  if (!reason.trim()) throw new AppError('BAD_REQUEST', 'A flag change needs a reason.');
  if (def.tier === 'invariant' && value !== def.defaultValue) {
    throw new AppError('INVARIANT', `"${name}" is an invariant: it cannot be turned off at runtime, by anyone.`);
  }
  const lock = locks.get(name);
  if (lock) {
    throw new AppError(
      'INVARIANT',
      `"${name}" is locked ${lock.value ? 'on' : 'off'} by the compliance profile ${lock.profiles.join(', ')}: it cannot be changed while the profile is active.`,
      { locked_by: lock.profiles },
    );
  }
}

/** A runtime override may be removed: a known flag, and a reason. */
export function assertUnsetAllowed(name: string, reason: string): void {
  if (!FLAGS_BY_NAME.has(name)) throw new AppError('NOT_FOUND', `There is no flag named "${name}".`);
  if (!reason.trim()) throw new AppError('BAD_REQUEST', 'A flag change needs a reason.');
}

/** The value a flag has without a runtime override (environment, alias, default; a profile's lock). */
export function fallbackValue(name: string, env: Readonly<Record<string, string | undefined>>, locks: FlagLocks): boolean {
  return resolveFlags(new Map(), env, undefined, locks).flags.get(name)!.value;
}

export class FlagService {
  private cached: FlagResolution | undefined;
  private cachedAt = 0;

  constructor(
    private readonly db: Db,
    private readonly env: Readonly<Record<string, string | undefined>> = process.env,
    private readonly refreshMs = 500,
    /** flags held by the active compliance profiles */
    readonly locks: FlagLocks = NO_LOCKS,
  ) {}

  private readOverrides(): Map<string, FlagOverride> {
    const rows = this.db.select().from(flagOverrides).all();
    return new Map(rows.map((r) => [r.name, { value: r.value, setBy: r.setBy, setAt: r.setAt, reason: r.reason }]));
  }

  resolution(): FlagResolution {
    const now = Date.now();
    if (!this.cached || now - this.cachedAt >= this.refreshMs) {
      this.cached = resolveFlags(this.readOverrides(), this.env, undefined, this.locks);
      this.cachedAt = now;
    }
    return this.cached;
  }

  values(): ReadonlyMap<string, boolean> {
    return this.resolution().values;
  }

  get(name: string): ResolvedFlag {
    return flagNamed(this.resolution(), name);
  }

  invalidate(): void {
    this.cached = undefined;
  }

  /** Set a runtime override. Refuses unknown flags and any attempt to turn an invariant off. */
  setOverride(name: string, value: boolean, by: string, reason: string): ResolvedFlag {
    assertOverrideAllowed(name, value, reason, this.locks);
    // Back to the value it has without an override (environment, alias or default): the override is removed rather
    // than a second one left behind that would hide a later change of the environment or the default.
    if (value === this.fallback(name)) {
      const existing = this.db.select().from(flagOverrides).where(eq(flagOverrides.name, name)).get();
      return existing ? this.unsetOverride(name, by, reason) : this.get(name);
    }
    const at = Date.now() / 1000;
    this.db.transaction((tx) => {
      const old = tx.select().from(flagOverrides).where(eq(flagOverrides.name, name)).get();
      const previous = old ? old.value : this.get(name).value;
      tx.insert(flagOverrides)
        .values({ name, value, setBy: by, setAt: at, reason })
        .onConflictDoUpdate({ target: flagOverrides.name, set: { value, setBy: by, setAt: at, reason } })
        .run();
      tx.insert(flagChanges).values({ name, oldValue: previous, newValue: value, action: 'set', changedBy: by, changedAt: at, reason }).run();
    }, { behavior: 'immediate' });
    this.invalidate();
    return this.get(name);
  }

  /** The value a flag has without a runtime override. */
  private fallback(name: string): boolean {
    return fallbackValue(name, this.env, this.locks);
  }

  /** Remove a runtime override; the flag falls back to environment, alias or default. */
  unsetOverride(name: string, by: string, reason: string): ResolvedFlag {
    assertUnsetAllowed(name, reason);
    const at = Date.now() / 1000;
    this.db.transaction((tx) => {
      const old = tx.select().from(flagOverrides).where(eq(flagOverrides.name, name)).get();
      if (!old) throw new AppError('NOT_FOUND', `Flag "${name}" has no runtime override to remove.`);
      tx.delete(flagOverrides).where(eq(flagOverrides.name, name)).run();
      this.invalidate();
      const fallback = this.fallback(name);
      tx.insert(flagChanges).values({ name, oldValue: old.value, newValue: fallback, action: 'unset', changedBy: by, changedAt: at, reason }).run();
    }, { behavior: 'immediate' });
    this.invalidate();
    return this.get(name);
  }

  /**
   * The change history, newest first. `name` and `by` match exactly; `before` is the id of the last row of the previous
   * page (ids only grow, so a page never shifts when changes are added meanwhile).
   */
  history(filter: FlagHistoryFilter = {}): FlagChangeRow[] {
    return this.db
      .select()
      .from(flagChanges)
      .where(historyWhere(flagChanges, filter))
      .orderBy(desc(flagChanges.id))
      .limit(filter.limit ?? HISTORY_LIMIT)
      .all();
  }

  /**
   * Record a change that was refused (an invariant, a flag a profile locks) in the flag history, beside the changes
   * that took effect, so the history shows every attempt.
   */
  recordRefusal(name: string, requested: boolean | null, by: string, reason: string, refusal: string): void {
    const current = this.resolution().flags.get(name)?.value ?? null;
    this.db.insert(flagChanges).values({ name, oldValue: current, newValue: requested, action: 'refused', changedBy: by, changedAt: Date.now() / 1000, reason: refusalReason(reason, refusal) }).run();
  }

  /** The newest change that took effect of every flag that was ever changed, by flag name (one query, not one per flag). */
  lastChanges(): Map<string, FlagChangeRow> {
    const newest = this.db.select({ id: max(flagChanges.id) }).from(flagChanges).where(ne(flagChanges.action, 'refused')).groupBy(flagChanges.name);
    const rows = this.db.select().from(flagChanges).where(inArray(flagChanges.id, newest)).all();
    return new Map(rows.map((r) => [r.name, r]));
  }

  /** Every flag that was ever changed (including flags since removed from the catalog), for the history's filter. */
  historyNames(): string[] {
    return this.db
      .selectDistinct({ name: flagChanges.name })
      .from(flagChanges)
      .orderBy(asc(flagChanges.name))
      .all()
      .map((r) => r.name);
  }

  /** Everyone who ever changed a flag, for the history's "by" filter. */
  historyAuthors(): string[] {
    return this.db
      .selectDistinct({ by: flagChanges.changedBy })
      .from(flagChanges)
      .orderBy(asc(flagChanges.changedBy))
      .all()
      .map((r) => r.by);
  }
}

export type { FlagHistoryFilter } from './query';
