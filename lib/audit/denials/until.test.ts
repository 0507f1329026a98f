/**
 * `untilId`: the newest denial of a view as it was loaded (exact evidence, issue 24). Every read of a filter (the page,
 * the count, the summary, the chart, the export) leaves out the rows recorded after it, on SQLite (daily counts and
 * all) and on PostgreSQL alike; and an export names its window and row count in its first JSON-lines record.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '@/db/client';
import { inTransaction } from '@/db/pg/client';
import type { DenialRow } from '@/db/schema';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { PostgresDatabase, SqliteDatabase } from '@/db/dialect';
import { PgAuditRecorder } from '../trail/pg-recorder';
import { AuditRecorder, type DenialInput, type RecorderOptions } from '../trail/recorder';
import { denialExportStream, exportMetaHeaders, type ExportMeta } from './export';
import type { DenialMatch } from './filter';
import { SqlDenialStore, type DenialStore } from './store';

const DAY = 86_400;
const T0 = 1_750_032_000; // a UTC midnight
const options: RecorderOptions = { revision: () => 'rev-until', logAllDecisions: () => false };
/** Twelve denials over four days, recorded in time order: ids 1..12. */
const timeOf = (i: number): number => T0 + Math.floor(i / 3) * DAY + i * 60;
const denial = (i: number): DenialInput & { timestamp: number } => ({
  toolCallId: `call-${i}`,
  toolName: i % 2 ? 'profile_dataset' : 'clean_dataset',
  agentName: i % 3 ? 'trainer' : 'evaluator',
  argumentsJson: '{}',
  ruleSource: 'agent_allowlist',
  reason: `reason ${i}`,
  timestamp: timeOf(i),
});


const pg15 = usePostgres();
const cleanups: (() => unknown)[] = [];
afterAll(() => {
  for (const c of cleanups) c();
});

const stores: Record<'SQLite' | 'PostgreSQL', () => Promise<DenialStore>> = {
  async SQLite() {
    const dir = mkdtempSync(join(tmpdir(), 'swarm-until-'));
    const db = openDatabase({ path: join(dir, 'trail.db') });
    cleanups.push(() => {
      db.$client.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const recorder = new AuditRecorder(db.$client, options);
    for (let i = 0; i < 12; i++) recorder.appendDenial(denial(i));
    return new SqlDenialStore(new SqliteDatabase(db.$client));
  },
  async PostgreSQL() {
    const pool = pg15.pool(await pg15.freshDatabase('until'));
    const recorder = new PgAuditRecorder(pool, options);
    await inTransaction(pool, async (tx) => {
      for (let i = 0; i < 12; i++) await recorder.appendDenialIn(tx, denial(i));
    });
    return new SqlDenialStore(new PostgresDatabase(pool));
  },
};

async function drain(rows: AsyncIterable<DenialRow>): Promise<number[]> {
  const ids: number[] = [];
  for await (const r of rows) ids.push(r.id);
  return ids;
}

describe.each(Object.keys(stores) as (keyof typeof stores)[])('until_id on %s', (kind) => {
  let store: DenialStore;
  beforeAll(async () => {
    store = await stores[kind]();
  }, 60_000);

  // The view was loaded when row 8 was the newest (the 8th denial's time, pinned as `to`); rows 9 to 12 came later.
  const loadedAt = denial(7).timestamp + 1;
  const windows: [string, DenialMatch][] = [
    ['all time, end pinned', { to: loadedAt, untilId: 8 }],
    ['no end (audit table alone)', { untilId: 8 }],
    ['a window across days', { from: T0 + 30, to: loadedAt, untilId: 8 }],
    ['an attribute filter', { agent: 'trainer', to: loadedAt, untilId: 8 }],
  ];
  it.each(windows)('leaves out the rows after it: %s', async (_, f) => {
    const expected = Array.from({ length: 8 }, (_, i) => ({ id: i + 1, d: denial(i) }))
      .filter(({ d }) => (f.from === undefined || d.timestamp >= f.from) && (f.agent === undefined || d.agentName === f.agent))
      .map(({ id }) => id)
      .reverse();
    expect((await store.query({ ...f, limit: 100 })).rows.map((r) => r.id)).toEqual(expected);
    expect(await store.count(f)).toBe(expected.length);
    expect((await store.summary(f)).total).toBe(expected.length);
    const histogram = await store.histogram(f);
    expect(histogram.buckets.reduce((n, b) => n + b.total, 0)).toBe(expected.length);
    expect(await drain(store.iterate(f))).toEqual(expected);
  });

  it('changes nothing when it is the newest row', async () => {
    expect(await store.count({ untilId: 12 })).toBe(12);
    expect(await store.count({})).toBe(12);
  });
});

describe('the export names its window and row count', () => {
  const meta: ExportMeta = { kind: 'permission_denials', from: T0, to: T0 + 3600, until_id: 8, rows: 2, filter: { agent: 'trainer' }, exported_at: T0 + 7200 };
  const rows = (): Iterator<DenialRow> =>
    [1, 2].map((id) => ({ id, ...denial(id), toolCallId: `call-${id}`, agentName: 'trainer', argumentsJson: '{}', userRole: null, httpMethod: null, httpPath: null, principal: null, decisionId: null, policyRevision: null, maskedPaths: null, prevHash: '', rowHash: '' }) as unknown as DenialRow)[Symbol.iterator]();
  const text = async (s: ReadableStream<Uint8Array>) => new Response(s).text();

  it('in a first JSON-lines record, then the rows', async () => {
    const lines = (await text(denialExportStream(rows(), 'ndjson', meta))).trim().split('\n');
    expect(JSON.parse(lines[0]!)).toEqual({ export: { ...meta, from_iso: '2025-06-16T00:00:00.000Z', to_iso: '2025-06-16T01:00:00.000Z' } });
    expect(lines.slice(1).map((l) => (JSON.parse(l) as { id: number }).id)).toEqual([1, 2]);
  });

  it('in headers only for CSV, whose first line stays the column names', async () => {
    const csv = await text(denialExportStream(rows(), 'csv', meta));
    expect(csv.split('\r\n')[0]).toMatch(/^id,timestamp,timestamp_iso,/);
    expect(exportMetaHeaders(meta)).toEqual({
      'x-swarm-export-window': '2025-06-16T00:00:00.000Z/2025-06-16T01:00:00.000Z until_id=8 rows=2',
      'x-swarm-export-until-id': '8',
      'x-swarm-export-from': '2025-06-16T00:00:00.000Z',
      'x-swarm-export-to': '2025-06-16T01:00:00.000Z',
      'x-swarm-export-rows': '2',
    });
  });
});
