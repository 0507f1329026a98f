/**
 * The daily counts behind the explorer's summary and chart (permission_denial_daily_counts), where the database counts
 * ahead (SqlDatabase.countsAhead: SQLite), kept up to date from the read side: a summary first counts the denials
 * recorded since the last one (id > high_water) into the daily table. The recorder's write path stays one INSERT (no
 * trigger), and the counts stay exact because the audit table is append-only and ids are assigned in commit order
 * (SQLite has one writer at a time). PostgreSQL counts from the rows when read and keeps no daily counts.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { SqlDatabase, TxRunner, TxSteps } from '@/db/dialect';
import { D } from './search';

export const DAY_SECONDS = 86400;

/** The UTC day of a denial's timestamp, as SQL: the expression the backfill migration (0003) uses too on SQLite. */
export const dayOfTimestamp = (db: SqlDatabase): SQL => db.truncate(sql`${D.timestamp} / 86400`);

/** Uncounted rows a query reads from the audit table itself before it is worth catching up first. */
export const CATCH_UP_THRESHOLD = 10_000;
/** Rows counted per write transaction: the write lock is held for tens of milliseconds, never seconds. */
export const CATCH_UP_CHUNK = 50_000;

export interface RollupPosition {
  /** every denial with id <= highWater is in the daily counts, none after */
  highWater: number;
  /** the newest denial id */
  newest: number;
}

const POSITION = sql`SELECT
  coalesce((SELECT high_water FROM permission_denial_rollup_state WHERE id = 1), 0) AS "highWater",
  coalesce((SELECT max(id) FROM permission_denials), 0) AS "newest"`;

/** How far the daily counts go, read inside a transaction (a read that must agree with them). */
export function* rollupPositionIn(tx: TxRunner): TxSteps<RollupPosition> {
  const row = yield* tx.one<RollupPosition>(POSITION);
  return { highWater: Number(row?.highWater ?? 0), newest: Number(row?.newest ?? 0) };
}

export function rollupPosition(db: SqlDatabase): Promise<RollupPosition> {
  return db.transaction(rollupPositionIn, { readOnly: true });
}

/**
 * Count the denials after high_water into the daily table, in chunks, each its own write transaction that re-reads
 * high_water (another process may have counted them meanwhile). Returns how many rows were counted.
 */
export async function catchUpRollup(db: SqlDatabase, chunk = CATCH_UP_CHUNK): Promise<number> {
  const day = dayOfTimestamp(db);
  const step = function* (tx: TxRunner): TxSteps<number> {
    const { highWater, newest } = yield* rollupPositionIn(tx);
    if (newest <= highWater) return 0;
    const upTo = Math.min(newest, highWater + chunk);
    yield* tx.run(
      sql`INSERT INTO permission_denial_daily_counts (day, rule_source, agent_name, tool_name, user_role, n)
          SELECT ${day}, rule_source, coalesce(agent_name, ''), tool_name, coalesce(user_role, ''), count(*)
          FROM permission_denials WHERE id > ${highWater} AND id <= ${upTo}
          GROUP BY 1, 2, 3, 4, 5
          ON CONFLICT (day, rule_source, agent_name, tool_name, user_role) DO UPDATE SET n = permission_denial_daily_counts.n + excluded.n`,
    );
    yield* tx.run(
      sql`INSERT INTO permission_denial_rollup_state (id, high_water) VALUES (1, ${upTo}) ON CONFLICT (id) DO UPDATE SET high_water = excluded.high_water`,
    );
    return upTo - highWater;
  };
  let counted = 0;
  for (;;) {
    const n = await db.transaction(step);
    if (n === 0) return counted;
    counted += n;
  }
}

/**
 * Catch up when many rows are uncounted, where the database counts ahead. Best effort: a read-only or busy database
 * still answers exactly, by reading the uncounted rows from the audit table.
 */
export async function catchUpIfBehind(db: SqlDatabase): Promise<void> {
  if (!db.countsAhead) return;
  const { highWater, newest } = await rollupPosition(db);
  if (newest - highWater <= CATCH_UP_THRESHOLD) return;
  try {
    await catchUpRollup(db);
  } catch (error) {
    if (!(error instanceof Error && /SQLITE_(READONLY|BUSY)/.test((error as Error & { code?: string }).code ?? ''))) throw error;
  }
}
