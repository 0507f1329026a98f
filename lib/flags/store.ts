/**
 * Where flags are kept: the runtime overrides (flag_overrides) and the append-only history of every change and refusal
 * (flag_changes). One implementation for SQLite and PostgreSQL, over the dialect port (db/dialect.ts).
 */
import { overrideSealed, type SealCheck } from '@/lib/auth/seal';
import { sql, type SQL } from 'drizzle-orm';
import type { SqlDatabase, TxRunner, TxSteps } from '@/db/dialect';
import type { FlagChangeRow } from '@/db/schema';
import { AUDIT_TRAIL_LOCK } from '@/lib/audit/trail/chain';
import { AppError } from '@/lib/errors';
import { HISTORY_LIMIT, type FlagHistoryFilter } from './query';
import type { FlagOverride } from './resolve';

/**
 * What is written in a flag change's own transaction beside its history row: its security event in the audit trail
 * (lib/flags/change.ts), so that the change, or the refusal, and its event commit together or not at all.
 */
export type AlsoWithin = (tx: TxRunner) => TxSteps<void>;

/** A refused change as the flag history keeps it. */
export interface RefusalRow {
  name: string;
  oldValue: boolean | null;
  newValue: boolean | null;
  by: string;
  reason: string;
  at: number;
}

/** A change that takes effect: the override set, or removed (back to the value the flag has without one). */
export type FlagChange =
  | { action: 'set'; name: string; value: boolean; by: string; reason: string; at: number; previous: boolean }
  | { action: 'unset'; name: string; by: string; reason: string; at: number; fallback: boolean; required: boolean };

export interface FlagStore {
  overrides(): Promise<Map<string, FlagOverride>>;
  /**
   * Apply one change with its history row, in one transaction that every server hears of (the change feed), with what
   * `also` writes. An unset of a flag without an override: NOT_FOUND when `required` (nothing written), else only what
   * `also` writes (false).
   */
  change(change: FlagChange, also?: AlsoWithin): Promise<boolean>;
  /** A refused change in the history, in one transaction with what `also` writes. */
  recordRefusal(row: RefusalRow, also?: AlsoWithin): Promise<void>;
  history(filter?: FlagHistoryFilter): Promise<FlagChangeRow[]>;
  lastChanges(): Promise<Map<string, FlagChangeRow>>;
  historyNames(): Promise<string[]>;
  historyAuthors(): Promise<string[]>;
  /** call `listener` when any process changed the overrides; returns the function that stops listening */
  onChange(listener: () => void): Promise<() => Promise<void>>;
}

/** The channel of the change feed (PostgreSQL NOTIFY; on SQLite, any commit to the file). */
export const FLAGS_CHANNEL = 'swarm_flags';

/** The overrides, read by every process at start and after every change it hears of. */
export const OVERRIDES_QUERY: SQL = sql`SELECT name, value, set_by AS "setBy", set_at AS "setAt", reason, mac FROM flag_overrides`;

const CHANGE_COLUMNS = sql`id, name, old_value AS "oldValue", new_value AS "newValue", action, changed_by AS "changedBy", changed_at AS "changedAt", reason`;

/** A boolean column as either database returns it (SQLite: 0 or 1). */
const bool = (v: unknown): boolean => v === true || v === 1;
const boolOrNull = (v: unknown): boolean | null => (v === null || v === undefined ? null : bool(v));

type RawChange = Omit<FlagChangeRow, 'oldValue' | 'newValue'> & { oldValue: unknown; newValue: unknown };
const changeRow = (r: RawChange): FlagChangeRow => ({ ...r, oldValue: boolOrNull(r.oldValue), newValue: boolOrNull(r.newValue) });

type OverrideRow = { name: string; value: unknown; setBy: string; setAt: number; reason: string; mac: string | null };

/**
 * The overrides from their rows: only those that carry their seal (lib/auth/seal.ts). An override written into the
 * table behind the product's back is not in force (the flag keeps its other layers) and is recorded once.
 */
export function overridesOf(rows: readonly OverrideRow[], check: SealCheck): Map<string, FlagOverride> {
  return new Map(rows.filter((r) => overrideSealed(check, r)).map((r) => [r.name, { value: bool(r.value), setBy: r.setBy, setAt: Number(r.setAt), reason: r.reason }]));
}

export class SqlFlagStore implements FlagStore {
  constructor(
    private readonly db: SqlDatabase,
    private readonly check: SealCheck,
  ) {}

  async overrides(): Promise<Map<string, FlagOverride>> {
    return overridesOf(await this.db.all<OverrideRow>(OVERRIDES_QUERY), this.check);
  }

  /** Seal the overrides of a database from before seals (once per installation: App.sealLegacyCredentials). */
  async sealLegacy(): Promise<number> {
    const seal = this.check.seal();
    return this.db.transaction(function* (tx) {
      const rows = yield* tx.all<OverrideRow>(sql`${OVERRIDES_QUERY} WHERE mac IS NULL`);
      for (const r of rows) yield* tx.run(sql`UPDATE flag_overrides SET mac = ${seal.override({ ...r, value: bool(r.value) })} WHERE name = ${r.name} AND mac IS NULL`);
      if (rows.length > 0) yield* tx.publish(FLAGS_CHANNEL);
      return rows.length;
    });
  }

  change(change: FlagChange, also?: AlsoWithin): Promise<boolean> {
    const db = this.db;
    const mac = change.action === 'set' ? this.check.seal().override({ name: change.name, value: change.value, setBy: change.by, setAt: change.at, reason: change.reason }) : null;
    return db.transaction(
      function* (tx: TxRunner): TxSteps<boolean> {
        const old = yield* tx.one<{ value: unknown }>(sql`SELECT value FROM flag_overrides WHERE name = ${change.name}${db.forUpdate}`);
        if (change.action === 'unset') {
          if (!old) {
            if (change.required) throw new AppError('NOT_FOUND', `Flag "${change.name}" has no runtime override to remove.`);
            if (also) yield* also(tx);
            return false;
          }
          yield* tx.run(sql`DELETE FROM flag_overrides WHERE name = ${change.name}`);
          yield* insertChange(tx, { name: change.name, oldValue: bool(old.value), newValue: change.fallback, action: 'unset', by: change.by, at: change.at, reason: change.reason });
        } else {
          yield* tx.run(sql`
            INSERT INTO flag_overrides (name, value, set_by, set_at, reason, mac) VALUES (${change.name}, ${change.value}, ${change.by}, ${change.at}, ${change.reason}, ${mac})
            ON CONFLICT (name) DO UPDATE SET value = excluded.value, set_by = excluded.set_by, set_at = excluded.set_at, reason = excluded.reason, mac = excluded.mac`);
          const previous = old ? bool(old.value) : change.previous;
          yield* insertChange(tx, { name: change.name, oldValue: previous, newValue: change.value, action: 'set', by: change.by, at: change.at, reason: change.reason });
        }
        if (also) yield* also(tx);
        yield* tx.publish(FLAGS_CHANNEL);
        return true;
      },
      // The trail's lock first (as every writer of the trail takes it), then the flag's row.
      also ? { serialise: AUDIT_TRAIL_LOCK } : {},
    );
  }

  recordRefusal(row: RefusalRow, also?: AlsoWithin): Promise<void> {
    return this.db.transaction(
      function* (tx: TxRunner): TxSteps<void> {
        yield* tx.run(
          sql`INSERT INTO flag_changes (name, old_value, new_value, action, changed_by, changed_at, reason)
              VALUES (${row.name}, ${row.oldValue}, ${row.newValue}, 'refused', ${row.by}, ${row.at}, ${row.reason})`,
        );
        if (also) yield* also(tx);
      },
      also ? { serialise: AUDIT_TRAIL_LOCK } : {},
    );
  }

  async history(filter: FlagHistoryFilter = {}): Promise<FlagChangeRow[]> {
    const where: SQL[] = [sql`1 = 1`];
    if (filter.name) where.push(sql`name = ${filter.name}`);
    if (filter.by) where.push(sql`changed_by = ${filter.by}`);
    if (filter.before !== undefined) where.push(sql`id < ${filter.before}`);
    const rows = await this.db.all<RawChange>(
      sql`SELECT ${CHANGE_COLUMNS} FROM flag_changes WHERE ${sql.join(where, sql` AND `)} ORDER BY id DESC LIMIT ${filter.limit ?? HISTORY_LIMIT}`,
    );
    return rows.map(changeRow);
  }

  async lastChanges(): Promise<Map<string, FlagChangeRow>> {
    const rows = await this.db.all<RawChange>(
      sql`SELECT ${CHANGE_COLUMNS} FROM flag_changes WHERE id IN (SELECT max(id) FROM flag_changes WHERE action <> 'refused' GROUP BY name)`,
    );
    return new Map(rows.map((r) => [r.name, changeRow(r)]));
  }

  async historyNames(): Promise<string[]> {
    return (await this.db.all<{ name: string }>(sql`SELECT DISTINCT name FROM flag_changes ORDER BY name`)).map((r) => r.name);
  }

  async historyAuthors(): Promise<string[]> {
    return (await this.db.all<{ by: string }>(sql`SELECT DISTINCT changed_by AS "by" FROM flag_changes ORDER BY changed_by`)).map((r) => r.by);
  }

  onChange(listener: () => void): Promise<() => Promise<void>> {
    return this.db.changes(FLAGS_CHANNEL, listener);
  }
}

function* insertChange(
  tx: TxRunner,
  c: { name: string; oldValue: boolean | null; newValue: boolean | null; action: 'set' | 'unset'; by: string; at: number; reason: string },
): TxSteps<void> {
  yield* tx.run(
    sql`INSERT INTO flag_changes (name, old_value, new_value, action, changed_by, changed_at, reason)
        VALUES (${c.name}, ${c.oldValue}, ${c.newValue}, ${c.action}, ${c.by}, ${c.at}, ${c.reason})`,
  );
}
