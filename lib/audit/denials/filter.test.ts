import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { DenialRow } from '@/db/schema';
import { tempApp, type TempApp } from '@/lib/test-support/temp-app';
import type { DenialInput } from '../trail/recorder';
import { denialExportStream } from './export';
import { decodeCursor, encodeCursor, likeContains } from './filter';
import type { DenialSortKey, SortOrder } from './store';

let t: TempApp | undefined;
afterEach(() => {
  t?.cleanup();
  t = undefined;
});

const T0 = 1_750_000_000;

async function collect(rows: AsyncIterable<DenialRow>): Promise<DenialRow[]> {
  const out: DenialRow[] = [];
  for await (const r of rows) out.push(r);
  return out;
}

function seed(app: TempApp['app'], rows: Partial<DenialInput>[]): void {
  for (const r of rows) app.recorder.appendDenial({ toolName: 'deploy_serving', ruleSource: 'agent_allowlist', reason: 'r', timestamp: T0, ...r });
}

/** Every page of a query, followed by its cursors. */
async function allPages(app: TempApp['app'], filter: Parameters<TempApp['app']['denials']['query']>[0], limit: number): Promise<DenialRow[]> {
  const out: DenialRow[] = [];
  let cursor: string | undefined;
  for (let guard = 0; guard < 1000; guard++) {
    const page = await app.denials.query({ ...filter, cursor, limit });
    out.push(...page.rows);
    if (!page.nextCursor) return out;
    cursor = page.nextCursor;
  }
  throw new Error('paging did not end');
}

const SORT_VALUE: Record<Exclude<DenialSortKey, 'id'>, (r: DenialRow) => string | number | null> = {
  timestamp: (r) => r.timestamp,
  agent_name: (r) => r.agentName,
  tool_name: (r) => r.toolName,
  rule_source: (r) => r.ruleSource,
};

/** The order SQLite gives: NULL before every value, ties by id in the same direction. */
function reference(rows: DenialRow[], sort: DenialSortKey, order: SortOrder): number[] {
  const key = sort === 'id' ? (r: DenialRow) => r.id : SORT_VALUE[sort];
  const cmp = (a: DenialRow, b: DenialRow) => {
    const x = key(a);
    const y = key(b);
    if (x !== y) {
      if (x === null) return -1;
      if (y === null) return 1;
      return x < y ? -1 : 1;
    }
    return a.id - b.id;
  };
  const sorted = [...rows].sort(cmp);
  return (order === 'asc' ? sorted : sorted.reverse()).map((r) => r.id);
}

describe('sorting and keyset paging', () => {
  it('pages every sort, in both orders, exactly like a full sort: no gaps, no repeats, NULLs first ascending', async () => {
    t = tempApp();
    const app = t.app;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            agentName: fc.constantFrom('a', 'b', 'c', null),
            toolName: fc.constantFrom('x', 'y'),
            ruleSource: fc.constantFrom('policy:a', 'policy', 'flag:f', 'agent_allowlist'),
            timestamp: fc.integer({ min: 0, max: 5 }).map((d) => T0 + d * 100),
          }),
          { minLength: 0, maxLength: 30 },
        ),
        fc.constantFrom(...(['id', 'timestamp', 'agent_name', 'tool_name', 'rule_source'] as const)),
        fc.constantFrom(...(['asc', 'desc'] as const)),
        fc.integer({ min: 1, max: 7 }),
        async (rows, sort, order, limit) => {
          const before = (await app.denials.query({ limit: 1 })).rows[0]?.id ?? 0;
          seed(app, rows);
          const mine = (await app.denials.query({ limit: 1000 })).rows.filter((r) => r.id > before);
          const paged = (await allPages(app, { sort, order, from: T0 - 1, to: T0 + 600 }, limit)).filter((r) => r.id > before).map((r) => r.id);
          expect(paged).toEqual(reference(mine, sort, order));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('keeps the next page stable while new denials arrive (keyset, not offset)', async () => {
    t = tempApp();
    seed(t.app, Array.from({ length: 10 }, (_, i) => ({ agentName: `agent-${i}` })));
    const first = await t.app.denials.query({ sort: 'agent_name', order: 'asc', limit: 4 });
    // Two new rows sort before the cursor, one after it.
    seed(t.app, [{ agentName: 'agent-0' }, { agentName: 'agent-00' }, { agentName: 'agent-9' }]);
    const second = await t.app.denials.query({ sort: 'agent_name', order: 'asc', limit: 4, cursor: first.nextCursor! });
    expect(first.rows.map((r) => r.agentName)).toEqual(['agent-0', 'agent-1', 'agent-2', 'agent-3']);
    expect(second.rows.map((r) => r.agentName)).toEqual(['agent-4', 'agent-5', 'agent-6', 'agent-7']);
  });

  it('refuses a cursor of another sort, and one that is not a cursor', () => {
    const c = encodeCursor('agent_name', 'asc', { value: 'x', id: 3 });
    expect(decodeCursor(c, 'agent_name', 'asc')).toEqual({ value: 'x', id: 3 });
    expect(decodeCursor(c, 'tool_name', 'asc')).toMatch(/another sort/);
    expect(decodeCursor(c, 'agent_name', 'desc')).toMatch(/another sort/);
    expect(decodeCursor('12', 'id', 'desc')).toEqual({ value: 12, id: 12 });
    expect(typeof decodeCursor('12', 'agent_name', 'asc')).toBe('string');
    expect(typeof decodeCursor(Buffer.from('["timestamp","asc","x",1]').toString('base64url'), 'timestamp', 'asc')).toBe('string');
    expect(typeof decodeCursor(Buffer.from('not json at all').toString('base64url'), 'timestamp', 'asc')).toBe('string');
  });
});

describe('time windows', () => {
  it('finds exactly the rows of a window even when timestamps are out of id order', async () => {
    t = tempApp();
    // Recorded out of time order (imports, clock steps): the id bounds of a window must still be exact.
    const times = [5, 1, 9, 3, 7, 2, 8, 4, 6, 0].map((h) => T0 + h * 3600);
    seed(t.app, times.map((timestamp, i) => ({ timestamp, agentName: i % 2 ? 'odd' : 'even' })));
    for (const [from, to] of [[2, 6], [0, 0], [9, 9], [3, 3.5], [-5, 20]] as const) {
      const f = { from: T0 + from * 3600, to: T0 + to * 3600 };
      const expected = times.filter((ts) => ts >= f.from && ts <= f.to).length;
      expect(await allPages(t.app, f, 2), `${from}-${to}`).toHaveLength(expected);
      expect(await collect(t.app.denials.iterate(f, 2)), `export ${from}-${to}`).toHaveLength(expected);
      expect(await t.app.denials.count(f)).toBe(expected);
      const odd = await allPages(t.app, { ...f, agent: 'odd' }, 3);
      expect(odd.every((r) => r.agentName === 'odd' && r.timestamp >= f.from && r.timestamp <= f.to)).toBe(true);
    }
    expect((await t.app.denials.query({ from: T0 + 100 * 3600 })).rows).toEqual([]);
  });

  it('fixes a relative window once for a whole export, so later rows and pages do not move it', async () => {
    t = tempApp();
    const now = Date.now() / 1000;
    seed(t.app, Array.from({ length: 25 }, (_, i) => ({ timestamp: now - 100 + i, reason: String(i) })));
    const rows = t.app.denials.iterate({ since: 3600 }, 10);
    const first = await rows.next();
    seed(t.app, [{ timestamp: now, reason: 'recorded during the export' }]);
    const rest = await collect({ [Symbol.asyncIterator]: () => rows });
    const all = [first.value as DenialRow, ...rest];
    expect(all.map((r) => r.reason)).toEqual(Array.from({ length: 25 }, (_, i) => String(24 - i)));
  });
});

describe('free text', () => {
  // What a query finds is search.test.ts's (the same seed, more cases); here, the LIKE pattern PostgreSQL matches with.
  it('escapes % _ and \\ in a contains pattern, so that they are taken literally', () => {
    expect(likeContains('50%_\\')).toBe('%50\\%\\_\\\\%');
  });
});

describe('streamed exports', () => {
  async function text(stream: ReadableStream<Uint8Array>): Promise<string> {
    return new Response(stream).text();
  }

  it('writes CSV with a header and NDJSON with one parseable object per line, newest first', async () => {
    t = tempApp();
    seed(t.app, Array.from({ length: 1200 }, (_, i) => ({ reason: `r${i}`, agentName: i % 3 ? 'a' : 'b, "quoted"' })));
    const csv = (await text(denialExportStream(t.app.denials.iterate({}), 'csv'))).split('\r\n').filter(Boolean);
    expect(csv[0]).toMatch(/^id,timestamp,/);
    expect(csv).toHaveLength(1201);
    expect(csv[csv.length - 1]).toContain('"b, ""quoted"""');
    const lines = (await text(denialExportStream(t.app.denials.iterate({ agent: 'a' }), 'ndjson'))).trim().split('\n');
    expect(lines).toHaveLength(800);
    const parsed = lines.map((l) => JSON.parse(l) as { id: number; agent_name: string });
    expect(parsed.every((r) => r.agent_name === 'a')).toBe(true);
    expect(parsed.map((r) => r.id)).toEqual([...parsed.map((r) => r.id)].sort((a, b) => b - a));
  });

  it('writes an empty NDJSON export and a header-only CSV when nothing matches', async () => {
    t = tempApp();
    expect(await text(denialExportStream(t.app.denials.iterate({ agent: 'nobody' }), 'ndjson'))).toBe('');
    expect(await text(denialExportStream(t.app.denials.iterate({ agent: 'nobody' }), 'csv'))).toMatch(/^id,timestamp,[^\n]*\r\n$/);
  });
});

