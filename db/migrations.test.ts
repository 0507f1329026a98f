/**
 * The migrations as an installed server meets them: drizzle's migrator applies only the migrations journaled later
 * than the newest one a database has, so the journal's times must rise with its order, and a database migrated by an
 * older release must end with every table of a fresh one.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrationsFolder, openDatabase } from './client';
import { SqlAuthStore } from '@/lib/auth/store';
import { SqliteTokenPrincipals } from '@/lib/auth/tokens-sqlite';
import { SqliteDatabase } from './dialect';
import { drizzle as pgDrizzle } from 'drizzle-orm/node-postgres';
import { migrate as pgMigrate } from 'drizzle-orm/node-postgres/migrator';
import { migratePostgres } from './pg/client';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { testSealCheck } from '@/lib/test-support/temp-app';

const check = testSealCheck();

const postgres = usePostgres();

interface Journal {
  entries: { idx: number; when: number; tag: string }[];
}
const journalOf = (folder: string) => JSON.parse(readFileSync(join(folder, 'meta', '_journal.json'), 'utf8')) as Journal;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'swarm-migrations-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The schema of a database: its tables, indexes and triggers by name. */
function objects(file: string): string[] {
  const db = new Database(file, { readonly: true });
  const names = (db.prepare("SELECT type || ' ' || name AS o FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY 1").pluck().all() as string[]).filter(
    (o) => !o.includes('__drizzle_migrations'),
  );
  db.close();
  return names;
}

describe('migrations', () => {
  it.each([['SQLite', migrationsFolder()], ['PostgreSQL', join('db', 'pg', 'migrations')]])('journals the %s migrations at rising times, in order', (_, folder) => {
    const entries = journalOf(folder).entries;
    for (let i = 1; i < entries.length; i++) {
      expect({ tag: entries[i]!.tag, after: entries[i - 1]!.tag, later: entries[i]!.when > entries[i - 1]!.when }).toEqual({
        tag: entries[i]!.tag,
        after: entries[i - 1]!.tag,
        later: true,
      });
    }
  });

  // 0008 was first journaled at a time before 0007's: the release that shipped it recorded it so.
  it.each([
    ['0007', 7, undefined],
    ['0008 (journaled before 0007)', 8, 1795415746917],
  ])('brings a database migrated by the release with %s to the schema of a fresh one', (_, last, when0008) => {
    // The migrations folder as that release shipped it: 0000 to its last migration and their journal.
    const old = join(dir, `release-${last}`);
    mkdirSync(join(old, 'meta'), { recursive: true });
    const journal = journalOf(migrationsFolder());
    const shipped = journal.entries.filter((e) => e.idx <= last).map((e) => (e.idx === 8 && when0008 ? { ...e, when: when0008 } : e));
    for (const e of shipped) copyFileSync(join(migrationsFolder(), `${e.tag}.sql`), join(old, `${e.tag}.sql`));
    writeFileSync(join(old, 'meta', '_journal.json'), JSON.stringify({ ...journal, entries: shipped }));

    const upgraded = join(dir, 'upgraded.db');
    const sqlite = new Database(upgraded);
    migrate(drizzle(sqlite), { migrationsFolder: old });
    expect(objects(upgraded)).not.toContain('table auth_generation');
    sqlite.close();

    openDatabase({ path: upgraded }).$client.close();
    openDatabase({ path: join(dir, 'fresh.db') }).$client.close();
    expect(objects(upgraded)).toEqual(objects(join(dir, 'fresh.db')));
    expect(objects(upgraded)).toEqual(expect.arrayContaining(['table hook_rate_calls', 'index hook_rate_calls_window', 'table auth_generation', 'index approvals_call_newest']));
  });

  it('moves auth_generation with every change to tokens and users, from any connection, and not with other writes', async () => {
    const file = join(dir, 'auth.db');
    const db = openDatabase({ path: file });
    const other = new Database(file);
    const generation = () => other.prepare('SELECT n FROM auth_generation WHERE id = 1').pluck().get() as number;
    const auth = new SqlAuthStore(new SqliteDatabase(db.$client), new SqliteTokenPrincipals(db.$client, check), check);
    const steps: [string, () => unknown][] = [
      ['a user created', () => auth.createUser('uma', 'operator', 'operator-password-2')],
      ['a token created', () => auth.createToken({ username: 'uma' }, 'uma')],
      ['a role changed', () => auth.setRole('uma', 'auditor')],
      ['a token revoked by another connection', () => other.prepare('UPDATE api_tokens SET revoked_at = 1').run()],
      ['a user disabled by hand', () => db.$client.prepare('UPDATE users SET disabled = 1').run()],
      ['a token deleted by hand', () => other.prepare('DELETE FROM api_tokens').run()],
    ];
    for (const [what, step] of steps) {
      const before = generation();
      await step();
      expect({ what, moved: generation() > before }).toEqual({ what, moved: true });
    }
    const before = generation();
    db.$client.prepare("INSERT INTO hook_rate_calls (hook, agent, tool, at) VALUES ('h', 'a', 't', 1)").run();
    expect(generation()).toBe(before);
    other.close();
    db.$client.close();
  });

  it('moves auth_generation with a token\'s expiry, scopes and disabling, never with its last use (0014)', async () => {
    const db = openDatabase({ path: join(dir, 'last-use.db') });
    const generation = () => db.$client.prepare('SELECT n FROM auth_generation WHERE id = 1').pluck().get() as number;
    const auth = new SqlAuthStore(new SqliteDatabase(db.$client), new SqliteTokenPrincipals(db.$client, check), check);
    await auth.createToken({ agent: 'bot' }, 'bot');
    for (const set of ['expires_at = 5', "scopes = 'decide'", "disabled_at = 1, disabled_reason = 'inactive'"]) {
      const before = generation();
      db.$client.prepare(`UPDATE api_tokens SET ${set}`).run();
      expect({ set, moved: generation() > before }).toEqual({ set, moved: true });
    }
    const before = generation();
    db.$client.prepare('UPDATE api_tokens SET last_used_at = 12345').run();
    expect(generation()).toBe(before);
    db.$client.close();
  });

  it('gives the tokens of a PostgreSQL database before 0009 the scopes they had, as SQLite\'s 0014 does', async () => {
    const folder = join('db', 'pg', 'migrations');
    const old = join(dir, 'pg-release-8');
    mkdirSync(join(old, 'meta'), { recursive: true });
    const journal = journalOf(folder);
    const shipped = journal.entries.filter((e) => e.idx <= 8);
    for (const e of shipped) copyFileSync(join(folder, `${e.tag}.sql`), join(old, `${e.tag}.sql`));
    writeFileSync(join(old, 'meta', '_journal.json'), JSON.stringify({ ...journal, entries: shipped }));
    const name = await postgres.emptyDatabase('scopes');
    const pool = postgres.pool(name, 2);
    await pgMigrate(pgDrizzle(pool), { migrationsFolder: old });
    const roles = ['admin', 'operator', 'auditor', 'viewer'];
    for (const [i, role] of roles.entries()) {
      await pool.query('INSERT INTO users (id, username, role, created_at) VALUES ($1, $2, $3, 1)', [i + 1, role, role]);
      await pool.query('INSERT INTO api_tokens (token_hash, name, user_id, created_at) VALUES ($1, $2, $3, 1)', [`h-${role}`, role, i + 1]);
    }
    await pool.query("INSERT INTO api_tokens (token_hash, name, agent_name, created_at) VALUES ('h-bot', 'bot', 'bot', 1)");
    await migratePostgres(pool, name);
    expect((await pool.query('SELECT name, scopes FROM api_tokens ORDER BY id')).rows).toEqual([
      { name: 'admin', scopes: 'admin' },
      { name: 'operator', scopes: 'operate' },
      { name: 'auditor', scopes: 'read' },
      { name: 'viewer', scopes: 'read' },
      { name: 'bot', scopes: 'decide' },
    ]);
  });

  it('stops at 0021 a SQLite database holding two names that differ only in case (one name whatever its case)', () => {
    const old = join(dir, 'release-20');
    mkdirSync(join(old, 'meta'), { recursive: true });
    const journal = journalOf(migrationsFolder());
    const shipped = journal.entries.filter((e) => e.idx <= 20);
    for (const e of shipped) copyFileSync(join(migrationsFolder(), `${e.tag}.sql`), join(old, `${e.tag}.sql`));
    writeFileSync(join(old, 'meta', '_journal.json'), JSON.stringify({ ...journal, entries: shipped }));
    const file = join(dir, 'names.db');
    const sqlite = new Database(file);
    migrate(drizzle(sqlite), { migrationsFolder: old });
    sqlite.prepare("INSERT INTO users (username, role, created_at) VALUES ('admin', 'admin', 1), ('ADMIN', 'admin', 2)").run();
    sqlite.close();
    expect(() => openDatabase({ path: file })).toThrow(/users_username_folded/);
    // once one of them is renamed, the migration goes through and the rule holds
    const fix = new Database(file);
    fix.prepare("UPDATE users SET username = 'admin-from-sso' WHERE username = 'ADMIN'").run();
    fix.close();
    const db = openDatabase({ path: file });
    expect(() => db.$client.prepare("INSERT INTO users (username, role, created_at) VALUES ('Admin', 'viewer', 3)").run()).toThrow(/UNIQUE/);
    db.$client.close();
  });

  it('stops at 0016 a PostgreSQL database holding two names that differ only in case, naming them', async () => {
    const folder = join('db', 'pg', 'migrations');
    const old = join(dir, 'pg-release-15');
    mkdirSync(join(old, 'meta'), { recursive: true });
    const journal = journalOf(folder);
    const shipped = journal.entries.filter((e) => e.idx <= 15);
    for (const e of shipped) copyFileSync(join(folder, `${e.tag}.sql`), join(old, `${e.tag}.sql`));
    writeFileSync(join(old, 'meta', '_journal.json'), JSON.stringify({ ...journal, entries: shipped }));
    const name = await postgres.emptyDatabase('names');
    const pool = postgres.pool(name, 2);
    await pgMigrate(pgDrizzle(pool), { migrationsFolder: old });
    await pool.query("INSERT INTO users (username, role, created_at) VALUES ('admin', 'admin', 1), ('ADMIN', 'admin', 2), ('olivia', 'operator', 3)");
    // (drizzle's migrator says which statement failed; PostgreSQL's own error, its cause, names the users)
    await expect(migratePostgres(pool, name)).rejects.toMatchObject({ cause: { message: expect.stringMatching(/differ only in the case of their letters: admin, ADMIN\./) } });
    await pool.query("UPDATE users SET username = 'admin-from-sso' WHERE username = 'ADMIN'");
    await migratePostgres(pool, name);
    await expect(pool.query("INSERT INTO users (username, role, created_at) VALUES ('Admin', 'viewer', 4)")).rejects.toThrow(/users_username_folded/);
    // the store's lookup by name (lib/auth/store.ts, nameIs) is the index's expression: the index serves it
    const client = await pool.connect();
    await client.query('SET enable_seqscan = off');
    const plan = (await client.query(`EXPLAIN SELECT id FROM users WHERE lower(username COLLATE "C") = 'admin'`)).rows.map((r: Record<string, string>) => Object.values(r)[0]).join('\n');
    await client.query('RESET enable_seqscan');
    client.release();
    expect(plan).toContain('users_username_folded');
  });

  it('gives the tokens of a database before 0014 the scopes they had: agents decide, people their role\'s', () => {
    const old = join(dir, 'release-13');
    mkdirSync(join(old, 'meta'), { recursive: true });
    const journal = journalOf(migrationsFolder());
    const shipped = journal.entries.filter((e) => e.idx <= 13);
    for (const e of shipped) copyFileSync(join(migrationsFolder(), `${e.tag}.sql`), join(old, `${e.tag}.sql`));
    writeFileSync(join(old, 'meta', '_journal.json'), JSON.stringify({ ...journal, entries: shipped }));
    const file = join(dir, 'scopes.db');
    const sqlite = new Database(file);
    migrate(drizzle(sqlite), { migrationsFolder: old });
    const roles = ['admin', 'operator', 'auditor', 'viewer'];
    roles.forEach((role, i) => sqlite.prepare('INSERT INTO users (id, username, role, created_at) VALUES (?, ?, ?, 1)').run(i + 1, role, role));
    roles.forEach((role, i) => sqlite.prepare('INSERT INTO api_tokens (token_hash, name, user_id, created_at) VALUES (?, ?, ?, 1)').run(`h-${role}`, role, i + 1));
    sqlite.prepare("INSERT INTO api_tokens (token_hash, name, agent_name, created_at) VALUES ('h-bot', 'bot', 'bot', 1)").run();
    sqlite.close();
    const db = openDatabase({ path: file });
    expect(db.$client.prepare('SELECT name, scopes FROM api_tokens ORDER BY id').all()).toEqual([
      { name: 'admin', scopes: 'admin' },
      { name: 'operator', scopes: 'operate' },
      { name: 'auditor', scopes: 'read' },
      { name: 'viewer', scopes: 'read' },
      { name: 'bot', scopes: 'decide' },
    ]);
    db.$client.close();
  });
});
