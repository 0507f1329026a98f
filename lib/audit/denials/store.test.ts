import { afterEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { tempApp, type TempApp } from '@/lib/test-support/temp-app';
import { REDACTED, redactedArgumentsJson, MAX_ARGUMENTS_JSON_CHARS } from '../redact';
import { csvField } from './export';

let t: TempApp | undefined;
afterEach(() => {
  t?.cleanup();
  t = undefined;
});

const base = { toolName: 'deploy_serving', ruleSource: 'agent_allowlist', reason: 'r' };

describe('the denial table', () => {
  it('refuses UPDATE and DELETE, even from a raw connection', async () => {
    t = tempApp();
    t.app.recorder.appendDenial(base);
    const raw = new Database(t.dbPath);
    try {
      expect(() => raw.prepare("UPDATE permission_denials SET reason = 'x'").run()).toThrow(/append-only/);
      expect(() => raw.prepare('DELETE FROM permission_denials').run()).toThrow(/append-only/);
    } finally {
      raw.close();
    }
    expect(await t.app.denials.count()).toBe(1);
  });

  it('filters a rule-source family by its prefix and an exact rule by its full name', async () => {
    t = tempApp();
    for (const rs of ['policy:a', 'policy:b', 'policy', 'policyx:c', 'rbac:admin', 'flag:x']) t.app.recorder.appendDenial({ ...base, ruleSource: rs });
    const family = (await t.app.denials.query({ ruleSource: 'policy' })).rows.map((r) => r.ruleSource).sort();
    expect(family).toEqual(['policy', 'policy:a', 'policy:b']);
    expect((await t.app.denials.query({ ruleSource: 'policy:a' })).rows).toHaveLength(1);
  });

  it('filters by seconds back from now, by agent, tool and role', async () => {
    t = tempApp();
    const now = Date.now() / 1000;
    t.app.recorder.appendDenial({ ...base, agentName: 'data_cleaner', timestamp: now - 10 });
    t.app.recorder.appendDenial({ ...base, agentName: 'data_cleaner', timestamp: now - 100_000 });
    t.app.recorder.appendDenial({ ...base, agentName: 'trainer', toolName: 'x', userRole: 'viewer', timestamp: now - 10 });
    expect((await t.app.denials.query({ since: 86400 })).rows).toHaveLength(2);
    expect((await t.app.denials.query({ agent: 'data_cleaner' })).rows).toHaveLength(2);
    expect((await t.app.denials.query({ tool: 'x' })).rows).toHaveLength(1);
    expect((await t.app.denials.query({ role: 'viewer' })).rows).toHaveLength(1);
  });

  it('pages newest first with a cursor, without gaps or repeats', async () => {
    t = tempApp();
    for (let i = 0; i < 25; i++) t.app.recorder.appendDenial({ ...base, reason: String(i) });
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await t.app.denials.query({ limit: 10, cursor });
      seen.push(...page.rows.map((r) => r.reason ?? ''));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => String(24 - i)));
  });
});

describe('redaction', () => {
  it('replaces secret-named keys at any depth', () => {
    const json = redactedArgumentsJson({ user: 'a', password: 'hunter2', nested: { api_key: 'k', Authorization: 'Bearer x', list: [{ token: 't' }] } });
    const parsed = JSON.parse(json!) as Record<string, unknown>;
    expect(json).not.toMatch(/hunter2|Bearer x|"k"|"t"/);
    expect(parsed.password).toBe(REDACTED);
    expect(parsed.user).toBe('a');
  });

  it('caps oversized arguments with a visible marker and keeps valid JSON', () => {
    const json = redactedArgumentsJson({ rows: Array.from({ length: 5000 }, (_, i) => `row-${i}`) })!;
    expect(json.length).toBeLessThan(MAX_ARGUMENTS_JSON_CHARS + 500);
    expect(JSON.parse(json)).toHaveProperty('[truncated]');
  });

  it('cuts a very long string and says how much was cut', () => {
    const parsed = JSON.parse(redactedArgumentsJson({ sql: 'x'.repeat(5000) })!) as { sql: string };
    expect(parsed.sql).toMatch(/truncated: 3000 more characters/);
  });
});

describe('CSV', () => {
  it('quotes separators and neutralises spreadsheet formulas', () => {
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('=HYPERLINK("x")')).toBe('"\'=HYPERLINK(""x"")"');
    expect(csvField(null)).toBe('');
  });
});

describe('the database file', () => {
  it('is created with 2 KiB pages, WAL and NORMAL sync', () => {
    const tt = tempApp();
    try {
      const c = tt.app.db.$client;
      expect(c.pragma('page_size', { simple: true })).toBe(2048);
      expect(c.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(c.pragma('synchronous', { simple: true })).toBe(1);
    } finally {
      tt.cleanup();
    }
  });
});
