/**
 * The report's `?` statements as each dialect binds them: every `?` a parameter, in order; a `?` inside a string
 * literal (a doubled quote included) is text; a statement whose placeholders and parameters disagree is refused.
 */
import { PgDialect } from 'drizzle-orm/pg-core';
import { SQLiteSyncDialect } from 'drizzle-orm/sqlite-core';
import { describe, expect, it } from 'vitest';
import { boundStatement } from './reader';

/** The statement's text and parameters as a dialect sends them. */
function bound(dialect: PgDialect | SQLiteSyncDialect, text: string, params: unknown[]): { sql: string; params: unknown[] } {
  const q = dialect.sqlToQuery(boundStatement(text, params));
  return { sql: q.sql, params: q.params };
}
const onPg = (text: string, params: unknown[]) => bound(new PgDialect(), text, params);
const onSqlite = (text: string, params: unknown[]) => bound(new SQLiteSyncDialect(), text, params);

describe('boundStatement', () => {
  it('binds each ? in order, as $n on PostgreSQL and ? on SQLite', () => {
    const text = 'SELECT count(*) AS n FROM permission_denials WHERE timestamp >= ? AND timestamp < ? AND rule_source = ?';
    expect(onPg(text, [1, 2, 'policy'])).toEqual({ sql: text.replace('>= ?', '>= $1').replace('< ?', '< $2').replace('= ?', '= $3'), params: [1, 2, 'policy'] });
    expect(onSqlite(text, [1, 2, 'policy'])).toEqual({ sql: text, params: [1, 2, 'policy'] });
  });

  it('leaves a ? inside a string literal alone', () => {
    const text = "SELECT 'why?' AS a, 'it''s ?' AS b, ? AS c FROM t WHERE x = ?";
    expect(onPg(text, ['one', null])).toEqual({ sql: "SELECT 'why?' AS a, 'it''s ?' AS b, $1 AS c FROM t WHERE x = $2", params: ['one', null] });
  });

  it('refuses a statement whose placeholders and parameters disagree', () => {
    expect(() => boundStatement('SELECT ? AS a', [])).toThrow(/more placeholders/);
    expect(() => boundStatement('SELECT ? AS a', [1, 2])).toThrow(/1 placeholders for 2 parameters/);
    expect(onSqlite('SELECT 1 AS a', []).sql).toBe('SELECT 1 AS a');
  });
});
