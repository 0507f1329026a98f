/**
 * Free text over the denials through the FTS5 index (db/migrations/0006_denial_search.sql): what it covers, text copied
 * from the detail panel, the short-text fallback, the index kept by the one sanctioned deletion (archive), and the
 * migration's backfill of rows recorded before it.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { afterEach, describe, expect, it } from 'vitest';
import { migrationsFolder, openDatabase } from '@/db/client';
import { tempApp, type TempApp } from '@/lib/test-support/temp-app';
import { SqliteDatabase, step } from '@/db/dialect';
import { archiveBefore, archivedEvent } from '../trail/archive';
import { keyDirFor, loadOrCreateSigningKey } from '../trail/checkpoints';
import type { DenialInput } from '../trail/recorder';
import { catchUpSearchIndex, indexNewDenials, normaliseSearchText } from './search';
import { SqlDenialStore } from './store';

let t: TempApp | undefined;
afterEach(() => {
  t?.cleanup();
  t = undefined;
});

const T0 = 1_750_000_000;

function seed(app: TempApp['app'], rows: Partial<DenialInput>[]): void {
  for (const r of rows) app.recorder.appendDenial({ toolName: 'deploy_serving', ruleSource: 'agent_allowlist', reason: 'r', timestamp: T0, ...r });
}

const indexed = (app: TempApp['app']) => (app.db.$client.prepare('SELECT count(*) AS n FROM permission_denials_search').get() as { n: number }).n;

describe('free text (FTS5 trigram index)', () => {
  it('covers the reason, tool, agent, HTTP path and the arguments, case-insensitively, as substrings', async () => {
    t = tempApp();
    seed(t.app, [
      { reason: 'Deploy to PROD refused', argumentsJson: '{"env":"staging"}' },
      { reason: 'other', argumentsJson: '{"model_id":"m-42","env":"prod"}' },
      { reason: '100% of budget', argumentsJson: null },
      { reason: 'a_b', argumentsJson: '{}' },
      { reason: 'axb', argumentsJson: '{}', toolName: 'prod_tool', agentName: 'shadow_agent' },
      { reason: 'Role "viewer" is below the role "admin" this endpoint requires.', toolName: 'http', httpMethod: 'PUT', httpPath: '/api/v1/flags/batch_runner' },
    ]);
    const reasons = async (q: string) => (await t!.app.denials.query({ q })).rows.map((r) => r.reason).sort();
    expect(await reasons('prod')).toEqual(['Deploy to PROD refused', 'axb', 'other']);
    expect(await reasons('M-42')).toEqual(['other']);
    expect(await reasons('100%')).toEqual(['100% of budget']);
    expect(await reasons('0% of')).toEqual(['100% of budget']);
    expect(await reasons('a_b')).toEqual(['a_b']);
    expect(await reasons('SHADOW')).toEqual(['axb']);
    expect(await reasons('batch_runner')).toEqual(['Role "viewer" is below the role "admin" this endpoint requires.']);
    expect(await reasons('flags/batch')).toHaveLength(1);
    expect(await t.app.denials.count({ q: 'nothing like this' })).toBe(0);
  });

  it('finds a line or several copied from the detail panel (pretty-printed JSON) although the stored JSON has no spaces', async () => {
    t = tempApp();
    seed(t.app, [
      { toolName: 'tune_hyperparameters', argumentsJson: JSON.stringify({ model_id: 'm-7', trials: 500 }), reason: 'tuning' },
      { toolName: 'tune_hyperparameters', argumentsJson: JSON.stringify({ model_id: 'm-8', trials: 5000 }), reason: 'more tuning' },
      { toolName: 'deploy_serving', argumentsJson: JSON.stringify({ model_id: 'm-7', env: 'prod', nested: { ok: true, tags: ['a'] } }), reason: 'deploy' },
    ]);
    const reasons = async (q: string) => (await t!.app.denials.query({ q })).rows.map((r) => r.reason).sort();
    // As the panel shows it: two-space indent, `"key": value` and a trailing comma.
    expect(await reasons('"trials": 500')).toEqual(['more tuning', 'tuning']);
    expect(await reasons('  "trials": 500,\n')).toEqual(['more tuning', 'tuning']);
    expect(await reasons('"model_id": "m-7",\n  "trials": 500')).toEqual(['tuning']);
    expect(await reasons('"env": "prod"')).toEqual(['deploy']);
    expect(await reasons('"ok": true')).toEqual(['deploy']);
    expect(await reasons('"nested": {\n    "ok": true,')).toEqual(['deploy']);
    // Summary, histogram and count agree with the list.
    expect(await t.app.denials.count({ q: '"trials": 500' })).toBe(2);
    expect((await t.app.denials.summary({ q: '"trials": 500' })).total).toBe(2);
    expect((await t.app.denials.histogram({ q: '"trials": 500' })).buckets.reduce((a, b) => a + b.total, 0)).toBe(2);
  });

  it('reads one or two characters with LIKE over the same columns', async () => {
    t = tempApp();
    seed(t.app, [{ reason: 'x', toolName: 'zq_tool' }, { reason: 'y', httpPath: '/zq' }, { reason: 'z%' }, { reason: 'w' }]);
    expect(await t.app.denials.count({ q: 'ZQ' })).toBe(2);
    expect(await t.app.denials.count({ q: '%' })).toBe(1);
    expect(await t.app.denials.count({ q: '  ' })).toBe(4);
  });

  it('normalises the layout of copied text, not its words', () => {
    expect(normaliseSearchText('  "trials": 500,  ')).toBe('"trials": 500');
    expect(normaliseSearchText('"a": 1,\r\n    "b": 2')).toBe('"a": 1\n"b": 2');
    expect(normaliseSearchText('Rejected by olivia:  Needs')).toBe('Rejected by olivia:  Needs');
  });

  it('indexes every recorded denial, and the archive removes from the index exactly what it removes from the table', async () => {
    t = tempApp();
    const old = Date.now() / 1000 - 400 * 86400;
    for (let i = 0; i < 5; i++) t.app.recorder.appendDenial({ toolName: 'x', ruleSource: 'default', reason: `old needle ${i}`, timestamp: old + i });
    for (let i = 0; i < 3; i++) t.app.recorder.appendDenial({ toolName: 'x', ruleSource: 'default', reason: `new needle ${i}` });
    // Not indexed yet (the index follows the writes, a long-lived process every second), and found all the same.
    expect(indexed(t.app)).toBe(0);
    expect(await t.app.denials.count({ q: 'needle' })).toBe(8);
    expect(await indexNewDenials(t.app.database)).toBe(8);
    expect(await indexNewDenials(t.app.database)).toBe(0);
    expect(indexed(t.app)).toBe(8);
    expect(await t.app.denials.count({ q: 'needle' })).toBe(8);
    t.app.checkpointAudit();
    const key = loadOrCreateSigningKey(keyDirFor(t.dbPath, {}));
    await archiveBefore(t.app.database, key, old + 100, `${t.dir}/archive.ndjson`, (res, tx) => step(t!.app.recorder.recordWithin(tx, archivedEvent(res, 'test'))));
    expect(indexed(t.app)).toBe(3);
    expect((await t.app.denials.query({ q: 'needle' })).rows.map((r) => r.reason).sort()).toEqual(['new needle 0', 'new needle 1', 'new needle 2']);
    // A later denial is indexed under its own id (no stale entry shares it).
    t.app.recorder.appendDenial({ toolName: 'x', ruleSource: 'default', reason: 'after the archive' });
    expect(await t.app.denials.count({ q: 'after the archive' })).toBe(1);
    expect(await indexNewDenials(t.app.database)).toBe(1);
    expect(await t.app.denials.count({ q: 'after the archive' })).toBe(1);
    expect(await t.app.denials.count({ q: 'old needle' })).toBe(0);
  });
});

describe('the index follows the writes', () => {
  it('finds the same rows, the same page, before and after the new rows are indexed, in both orders and with other filters', async () => {
    t = tempApp();
    const args = (i: number) => ({ model_id: `m-${i}`, trials: i % 2 ? 500 : 50 });
    for (let i = 0; i < 30; i++) {
      t.app.recorder.appendDenial({ toolName: 'tune_hyperparameters', agentName: i % 3 ? 'trainer' : 'shadow_agent', ruleSource: 'default', reason: `r${i}`, argumentsJson: JSON.stringify(args(i)) });
      if (i === 9) await indexNewDenials(t.app.database); // the first ten indexed, the other twenty not yet
    }
    const view = () =>
      Promise.all(
        ['desc', 'asc'].map(async (order) =>
          (await t!.app.denials.query({ q: '"trials": 500', agent: 'trainer', order: order as 'asc' | 'desc', limit: 4 })).rows.map((r) => r.id),
        ),
      );
    const before = await view();
    const countBefore = await t.app.denials.count({ q: '"trials": 500' });
    expect(countBefore).toBe(15);
    expect(before[0]).toHaveLength(4);
    expect(before[0]!.every((id, i, a) => i === 0 || a[i - 1]! > id)).toBe(true);
    expect(await catchUpSearchIndex(t.app.database)).toBe(20);
    expect(await view()).toEqual(before);
    expect(await t.app.denials.count({ q: '"trials": 500' })).toBe(countBefore);
  });
});

describe('migration 0006_denial_search', () => {
  it('backfills the denials recorded before it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'swarm-fts-migration-'));
    try {
      // The migrations up to 0005, as a database created before this one would have them.
      const before = join(dir, 'migrations-0005');
      mkdirSync(join(before, 'meta'), { recursive: true });
      const journal = JSON.parse(readFileSync(join(migrationsFolder(), 'meta', '_journal.json'), 'utf8')) as { entries: { tag: string }[] };
      const kept = journal.entries.filter((e) => e.tag < '0006');
      for (const e of kept) cpSync(join(migrationsFolder(), `${e.tag}.sql`), join(before, `${e.tag}.sql`));
      writeFileSync(join(before, 'meta', '_journal.json'), JSON.stringify({ ...journal, entries: kept }));
      const path = join(dir, 'old.db');
      const old = openDatabase({ path, migrate: false });
      migrate(old, { migrationsFolder: before });
      const insert = old.$client.prepare('INSERT INTO permission_denials (tool_name, agent_name, arguments_json, rule_source, reason, http_path, timestamp) VALUES (?, ?, ?, ?, ?, ?, ?)');
      insert.run('tune_hyperparameters', 'trainer', '{"model_id":"m-7","trials":500}', 'policy:x', 'old row', null, T0);
      insert.run('http', null, null, 'rbac:admin', 'old http', '/api/v1/flags/batch_runner', T0);
      insert.run('x', 'a', 'not json {', 'default', 'broken arguments', null, T0);
      old.$client.close();
      const db = openDatabase({ path });
      const store = new SqlDenialStore(new SqliteDatabase(db.$client));
      expect(await store.count({ q: '"trials": 500' })).toBe(1);
      expect(await store.count({ q: 'batch_runner' })).toBe(1);
      expect(await store.count({ q: 'json {' })).toBe(1);
      db.$client.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
