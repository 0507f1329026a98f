/**
 * Free text over the denials: case-insensitive, anywhere in the reason, the tool, the agent, the HTTP path or the
 * arguments' keys and values, the arguments as the detail panel shows them (one `"key": value` per line), so that a
 * line or several copied from the panel are found although the stored JSON has no spaces.
 *
 * Three characters or more go through the dialect port's text search (db/dialect.ts): on SQLite the FTS5 trigram index
 * of db/migrations/0006_denial_search.sql, filled behind the writes (an insert trigger made every durable denial six
 * times slower) by long-lived processes every second, and a scan of the few rows after it, so a search is always
 * exact; on PostgreSQL ILIKE over the same text. One or two characters, too short for trigrams, are LIKE over the
 * stored columns, bounded by the other filters.
 */
import { sql, type SQL } from 'drizzle-orm';
import { likeContains, MIN_TEXT_MATCH, type SqlDatabase, type TextIndex } from '@/db/dialect';

/** The table of the denials, and one of its columns qualified by its name (the search index's columns share names). */
export const DENIALS_TABLE = 'permission_denials';
const column = (name: string): SQL => sql`${sql.identifier(DENIALS_TABLE)}.${sql.identifier(name)}`;

/** The columns of permission_denials the queries read. */
export const D = {
  id: column('id'),
  timestamp: column('timestamp'),
  agentName: column('agent_name'),
  toolName: column('tool_name'),
  userRole: column('user_role'),
  ruleSource: column('rule_source'),
  reason: column('reason'),
  httpPath: column('http_path'),
  argumentsJson: column('arguments_json'),
} as const;

/** What free text searches in a denial, as the index holds it (the arguments last: the costliest to read). */
export function denialTextIndex(db: SqlDatabase): TextIndex {
  return {
    table: DENIALS_TABLE,
    key: 'id',
    columns: [
      { name: 'reason', text: D.reason },
      { name: 'tool_name', text: D.toolName },
      { name: 'agent_name', text: D.agentName },
      { name: 'http_path', text: D.httpPath },
      { name: 'arguments', text: db.jsonLines(D.argumentsJson) },
    ],
    fts: 'permission_denials_search',
    progress: 'permission_denials_search_progress',
  };
}

/**
 * The free text as the index holds it: the surrounding blanks, the trailing comma and the indentation of the following
 * lines of text copied from the panel are its layout, not text.
 */
export function normaliseSearchText(q: string): string {
  return q
    .replace(/\r\n?/g, '\n')
    .replace(/,?[ \t]*\n\s*/g, '\n')
    .trim()
    .replace(/,+$/, '')
    .trim();
}

/** A blank or whitespace-only text filters nothing. */
export function hasText(q: string | undefined): q is string {
  return q !== undefined && normaliseSearchText(q) !== '';
}

/** The text the index is asked for, or undefined when there is none or it is too short for the index. */
export function indexedText(q: string | undefined): string | undefined {
  if (q === undefined) return undefined;
  const text = normaliseSearchText(q);
  return [...text].length >= MIN_TEXT_MATCH ? text : undefined;
}

/** The denials whose text contains `q` (see above). */
export function textCondition(db: SqlDatabase, q: string): SQL {
  const text = indexedText(q);
  if (text !== undefined) return db.textMatch(denialTextIndex(db), text);
  const pattern = likeContains(normaliseSearchText(q));
  return sql`(${sql.join(
    [D.reason, D.toolName, D.agentName, D.httpPath, D.argumentsJson].map((c) => db.ilike(c, pattern)),
    sql` OR `,
  )})`;
}

/** Index the denials written since the index last moved, at most `maxRows` of them; returns how many (0 on PostgreSQL). */
export function indexNewDenials(db: SqlDatabase, maxRows = 5_000): Promise<number> {
  return db.indexText(denialTextIndex(db), maxRows);
}

/** Index new denials until none is left or `budgetMs` has passed. Returns how many rows were indexed. */
export async function catchUpSearchIndex(db: SqlDatabase, budgetMs = 250): Promise<number> {
  const until = performance.now() + budgetMs;
  let total = 0;
  for (;;) {
    const n = await indexNewDenials(db);
    total += n;
    if (n === 0 || performance.now() >= until) return total;
  }
}
