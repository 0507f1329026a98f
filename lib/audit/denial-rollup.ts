/**
 * The daily counts behind the explorer's summary and chart (permission_denial_daily_counts), kept up to date from the
 * read side: a summary first counts the denials recorded since the last one (id > high_water) into the daily table.
 * The recorder's write path stays one INSERT (no trigger), and the counts stay exact because the audit table is
 * append-only and ids are assigned in commit order (SQLite has one writer at a time).
 */
import { sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { denialRollupState, permissionDenials } from '@/db/schema';

export const DAY_SECONDS = 86400;

/** The UTC day of a timestamp, as SQL: the expression the backfill migration (0003) uses too. */
export const DAY_OF_TIMESTAMP = sql`CAST(${permissionDenials.timestamp} / 86400 AS INTEGER)`;

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

export function rollupPosition(db: Db): RollupPosition {
  const row = db
    .select({
      highWater: sql<number>`coalesce((SELECT ${denialRollupState.highWater} FROM ${denialRollupState} WHERE ${denialRollupState.id} = 1), 0)`,
      newest: sql<number>`coalesce((SELECT max(${permissionDenials.id}) FROM ${permissionDenials}), 0)`,
    })
    .from(sql`(SELECT 1)`)
    .get();
  return { highWater: row?.highWater ?? 0, newest: row?.newest ?? 0 };
}

/**
 * Count the denials after high_water into the daily table, in chunks, each its own IMMEDIATE transaction that re-reads
 * high_water (another process may have counted them meanwhile). Returns how many rows were counted.
 */
export function catchUpRollup(db: Db, chunk = CATCH_UP_CHUNK): number {
  const client = db.$client;
  const step = client.transaction((): number => {
    const { highWater, newest } = rollupPosition(db);
    if (newest <= highWater) return 0;
    const upTo = Math.min(newest, highWater + chunk);
    client
      .prepare(
        `INSERT INTO permission_denial_daily_counts (day, rule_source, agent_name, tool_name, user_role, n)
         SELECT CAST(timestamp / 86400 AS INTEGER), rule_source, coalesce(agent_name, ''), tool_name, coalesce(user_role, ''), count(*)
         FROM permission_denials WHERE id > ? AND id <= ?
         GROUP BY 1, 2, 3, 4, 5
         ON CONFLICT (day, rule_source, agent_name, tool_name, user_role) DO UPDATE SET n = n + excluded.n`,
      )
      .run(highWater, upTo);
    client
      .prepare('INSERT INTO permission_denial_rollup_state (id, high_water) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET high_water = excluded.high_water')
      .run(upTo);
    return upTo - highWater;
  });
  let counted = 0;
  for (;;) {
    const n = step.immediate();
    if (n === 0) return counted;
    counted += n;
  }
}

/**
 * Catch up when many rows are uncounted. Best effort: a read-only or busy database still answers exactly, by reading
 * the uncounted rows from the audit table.
 */
export function catchUpIfBehind(db: Db): void {
  const { highWater, newest } = rollupPosition(db);
  if (newest - highWater <= CATCH_UP_THRESHOLD) return;
  try {
    catchUpRollup(db);
  } catch (error) {
    if (!(error instanceof Error && /SQLITE_(READONLY|BUSY)/.test((error as Error & { code?: string }).code ?? ''))) throw error;
  }
}
