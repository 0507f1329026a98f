import { getTableColumns, type Table } from 'drizzle-orm';

/**
 * A table's columns under their property names (`agent_name AS "agentName"`), every column unless `keys` names some,
 * so that plain SQL answers the row shape the schema declares on both databases (quoted: PostgreSQL folds an unquoted
 * alias to lower case).
 */
export function columnsAs<T extends Table>(table: T, keys?: readonly (keyof T['_']['columns'] & string)[]): string {
  const columns: Record<string, { name: string }> = getTableColumns(table);
  return (keys ?? Object.keys(columns)).map((k) => `${columns[k]!.name} AS "${k}"`).join(', ');
}
