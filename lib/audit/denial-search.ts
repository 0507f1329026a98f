/**
 * The free-text index of the denials (db/migrations/0006_denial_search.sql), filled behind the writes: a denial is
 * durable without waiting for it (an insert trigger made every durable write six times slower), and long-lived
 * processes index the new rows every second, in batches. `indexed_up_to` says how far the index goes; a search looks
 * up the index up to there and scans the few rows after it, so a search is always exact.
 */
import type Database from 'better-sqlite3';
import { sql, type SQL } from 'drizzle-orm';
import { permissionDenials } from '@/db/schema';

/**
 * The arguments as the index holds them, for a column or expression holding the stored arguments JSON: one
 * `"key": value` per line, as the detail panel shows them (the same expression the migration's backfill used).
 */
export function argumentsTextSql(column: string): string {
  return `CASE WHEN ${column} IS NULL THEN NULL WHEN json_valid(${column}) THEN (
    SELECT group_concat(
      CASE WHEN typeof(j.key) = 'text' THEN json_quote(j.key) || ': ' ELSE '' END ||
      CASE j.type WHEN 'object' THEN '{' WHEN 'array' THEN '[' WHEN 'text' THEN json_quote(j.value)
        WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' WHEN 'null' THEN 'null' ELSE CAST(j.value AS TEXT) END,
      char(10))
    FROM json_tree(${column}) AS j WHERE j.key IS NOT NULL
  ) ELSE ${column} END`;
}

/** How far the index goes: every denial with an id up to this one is in it. */
export const INDEXED_UP_TO = sql.raw('(SELECT indexed_up_to FROM permission_denials_search_progress WHERE id = 0)');

/**
 * The rows the index does not hold yet that contain `pattern` (a LIKE pattern, escaped with `\`) in one of the indexed
 * columns, the arguments compared in their indexed form: a search is exact up to the last row written.
 */
export function unindexedMatch(pattern: string): SQL {
  const t = permissionDenials;
  return sql`(${t.id} > ${INDEXED_UP_TO} AND (${t.reason} LIKE ${pattern} ESCAPE '\\' OR ${t.toolName} LIKE ${pattern} ESCAPE '\\'
    OR ${t.agentName} LIKE ${pattern} ESCAPE '\\' OR ${t.httpPath} LIKE ${pattern} ESCAPE '\\'
    OR ${sql.raw(argumentsTextSql('"permission_denials"."arguments_json"'))} LIKE ${pattern} ESCAPE '\\'))`;
}

/**
 * Index the denials written since the index last moved, at most `maxRows` of them, in one transaction. Several
 * processes may do this at once: the write lock orders them, and each indexes only what the one before left.
 * Returns how many rows were indexed.
 */
export function indexNewDenials(sqlite: Database.Database, maxRows = 5_000): number {
  return sqlite
    .transaction(() => {
      const from = (sqlite.prepare('SELECT indexed_up_to AS n FROM permission_denials_search_progress WHERE id = 0').get() as { n: number } | undefined)?.n ?? 0;
      const upTo = (sqlite.prepare('SELECT max(id) AS n FROM (SELECT id FROM permission_denials WHERE id > ? ORDER BY id LIMIT ?)').get(from, maxRows) as { n: number | null }).n;
      if (upTo === null) return 0;
      const r = sqlite
        .prepare(
          `INSERT INTO permission_denials_search (rowid, reason, tool_name, agent_name, http_path, arguments)
           SELECT d.id, d.reason, d.tool_name, d.agent_name, d.http_path, ${argumentsTextSql('d.arguments_json')}
           FROM permission_denials AS d WHERE d.id > ? AND d.id <= ?`,
        )
        .run(from, upTo);
      sqlite.prepare('UPDATE permission_denials_search_progress SET indexed_up_to = ? WHERE id = 0').run(upTo);
      return r.changes;
    })
    .immediate();
}

/** Index new denials until none is left or `budgetMs` has passed. Returns how many rows were indexed. */
export function catchUpSearchIndex(sqlite: Database.Database, budgetMs = 250): number {
  const until = performance.now() + budgetMs;
  let total = 0;
  for (;;) {
    const n = indexNewDenials(sqlite);
    total += n;
    if (n === 0 || performance.now() >= until) return total;
  }
}
