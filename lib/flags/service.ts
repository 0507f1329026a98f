/**
 * Flags: the catalog's values with the runtime overrides of the flag store (store.ts) over them, held in memory (the
 * engine reads flag values on every decision, synchronously) and read again whenever any process or server changes an
 * override: the store's change feed tells every server (PostgreSQL NOTIFY, or a commit to the SQLite file) within a
 * second, and every server also reads them again every few seconds, so a notification lost in a reconnect delays a
 * change, never loses it. The same service on both databases.
 */
import type { TxRunner, TxSteps } from '@/db/dialect';
import { FeedFollower } from '@/db/feed-follower';
import type { FlagChangeRow } from '@/db/schema';
import { AppError } from '@/lib/errors';
import { FLAGS_BY_NAME } from './catalog';
import { refusalReason, type FlagHistoryFilter } from './query';
import { NO_LOCKS, flagNamed, resolveFlags, type FlagLocks, type FlagOverride, type FlagResolution, type ResolvedFlag } from './resolve';
import type { AlsoWithin, FlagStore } from './store';

/** A runtime override may be set: a known flag, a reason, not an invariant turned off, not a flag a profile locks. */
export function assertOverrideAllowed(name: string, value: boolean, reason: string, locks: FlagLocks): void {
  assertKnownWithReason(name, reason);
  const def = FLAGS_BY_NAME.get(name)!;
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
  assertKnownWithReason(name, reason);
  // An invariant never has an override (turning it on is its default, turning it off is refused): asking to remove one
  // is an attempt to change an invariant at runtime, refused and recorded like the others.
  if (FLAGS_BY_NAME.get(name)!.tier === 'invariant') {
    throw new AppError('INVARIANT', `"${name}" is an invariant: it has no runtime override to remove, and it cannot be changed at runtime, by anyone.`);
  }
}

function assertKnownWithReason(name: string, reason: string): void {
  if (!FLAGS_BY_NAME.has(name)) throw new AppError('NOT_FOUND', `There is no flag named "${name}".`);
  if (!reason.trim()) throw new AppError('BAD_REQUEST', 'A flag change needs a reason.');
}

/** The value a flag has without a runtime override (environment, alias, default; a profile's lock). */
export function fallbackValue(name: string, env: Readonly<Record<string, string | undefined>>, locks: FlagLocks): boolean {
  return resolveFlags(new Map(), env, undefined, locks).flags.get(name)!.value;
}

/** What a change writes in its own transaction, knowing the flag as it resolves after the change. */
export type FlagAlsoWithin = (tx: TxRunner, after: ResolvedFlag) => TxSteps<void>;

export interface FlagServiceOptions {
  env?: Readonly<Record<string, string | undefined>>;
  /** flags held by the active compliance profiles */
  locks?: FlagLocks;
  /** the safety-net reload, ms (default 5,000; 0: none) */
  resyncMs?: number;
  /** the overrides as they are now, when the caller read them already (a SQLite application opened synchronously) */
  initial?: Map<string, FlagOverride>;
}

export class FlagService {
  private overrides: Map<string, FlagOverride>;
  private cached: FlagResolution | undefined;
  private readonly feed = new FeedFollower();
  /** reloads started and the newest one applied: an older reload that ends last never overwrites a newer one */
  private loadsStarted = 0;
  private loadApplied = 0;
  private readonly env: Readonly<Record<string, string | undefined>>;
  readonly locks: FlagLocks;

  constructor(
    private readonly store: FlagStore,
    private readonly options: FlagServiceOptions = {},
  ) {
    this.env = options.env ?? process.env;
    this.locks = options.locks ?? NO_LOCKS;
    this.overrides = options.initial ?? new Map();
  }

  /** Load the overrides (unless given) and start hearing of the changes any process makes. */
  async start(): Promise<void> {
    if (!this.options.initial) await this.reload();
    await this.feed.start(() => this.store.onChange(() => void this.invalidate()), () => this.reload(), this.options.resyncMs);
  }

  stop(): Promise<void> {
    return this.feed.stop();
  }

  private async reload(): Promise<void> {
    const load = ++this.loadsStarted;
    const overrides = await this.store.overrides();
    if (load < this.loadApplied) return;
    this.loadApplied = load;
    this.overrides = overrides;
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

  /**
   * Set a runtime override; every server has it within a second. Refuses unknown flags and invariants turned off.
   * `also(tx, after)` writes in the change's transaction, knowing the flag as it is after the change.
   */
  async setOverride(name: string, value: boolean, by: string, reason: string, also?: FlagAlsoWithin): Promise<ResolvedFlag> {
    assertOverrideAllowed(name, value, reason, this.locks);
    const fallback = fallbackValue(name, this.env, this.locks);
    const at = Date.now() / 1000;
    // Back to the value it has without an override (environment, alias or default): the override is removed rather
    // than a second one left behind that would hide a later change of the environment or the default.
    const override = value === fallback ? undefined : { value, setBy: by, setAt: at, reason };
    const within = also && this.knowing(name, override, also);
    const changed =
      value === fallback
        ? await this.store.change({ action: 'unset', name, by, reason, at, fallback, required: false }, within)
        : await this.store.change({ action: 'set', name, value, by, reason, at, previous: this.get(name).value }, within);
    if (changed) await this.reload();
    return this.get(name);
  }

  /** Remove a runtime override; the flag falls back to environment, alias or default, on every server. */
  async unsetOverride(name: string, by: string, reason: string, also?: FlagAlsoWithin): Promise<ResolvedFlag> {
    assertUnsetAllowed(name, reason);
    const within = also && this.knowing(name, undefined, also);
    await this.store.change({ action: 'unset', name, by, reason, at: Date.now() / 1000, fallback: fallbackValue(name, this.env, this.locks), required: true }, within);
    await this.reload();
    return this.get(name);
  }

  /** `also` told the flag as it resolves with this override (or none) in place of the one it has. */
  private knowing(name: string, override: FlagOverride | undefined, also: FlagAlsoWithin): AlsoWithin {
    const overrides = new Map(this.overrides);
    if (override) overrides.set(name, override);
    else overrides.delete(name);
    const after = flagNamed(resolveFlags(overrides, this.env, undefined, this.locks), name);
    return (tx) => also(tx, after);
  }

  /**
   * The change history, newest first, from any server. `name` and `by` match exactly; `before` is the id of the last
   * row of the previous page (ids only grow, so a page never shifts when changes are added meanwhile).
   */
  history(filter: FlagHistoryFilter = {}): Promise<FlagChangeRow[]> {
    return this.store.history(filter);
  }

  /**
   * Record a change that was refused (an invariant, a flag a profile locks, a role below the one a change needs) in
   * the flag history, beside the changes that took effect, so the history shows every attempt; `also` writes in the
   * same transaction. Nothing changes, so no server is told.
   */
  recordRefusal(name: string, requested: boolean | null, by: string, reason: string, refusal: string, also?: AlsoWithin): Promise<void> {
    const current = this.resolution().flags.get(name)?.value ?? null;
    return this.store.recordRefusal({ name, oldValue: current, newValue: requested, by, reason: refusalReason(reason, refusal), at: Date.now() / 1000 }, also);
  }

  /** The newest change that took effect of every flag that was ever changed, by flag name (one query, not one per flag). */
  lastChanges(): Promise<Map<string, FlagChangeRow>> {
    return this.store.lastChanges();
  }

  /** Every flag that was ever changed (including flags since removed from the catalog), for the history's filter. */
  historyNames(): Promise<string[]> {
    return this.store.historyNames();
  }

  /** Everyone who ever changed a flag, for the history's "by" filter. */
  historyAuthors(): Promise<string[]> {
    return this.store.historyAuthors();
  }
}
