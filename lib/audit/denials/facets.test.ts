/**
 * What a typed agent, tool or rule-source filter stands for, when anyone with a token can fill the trail with names
 * (issue 23, "Bounded memory"): the values are read as a stream and a resolution keeps at most MAX_RESOLVED_VALUES of
 * them; a filter that stands for more is a 400 on SQLite and PostgreSQL alike, not an IN list of any length (SQLite
 * refused one over 32,766 values with an error, a 500).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '@/db/client';
import { inTransaction } from '@/db/pg/client';
import { AppError } from '@/lib/errors';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { PostgresDatabase, SqliteDatabase } from '@/db/dialect';
import { PgAuditRecorder } from '../trail/pg-recorder';
import { AuditRecorder, type DenialInput, type RecorderOptions } from '../trail/recorder';
import { FilterResolution, MAX_RESOLVED_VALUES, resolveValue, type FacetField } from './facets';
import type { DenialMatch } from './filter';
import { SqlDenialStore, type DenialStore } from './store';

/** The rules of facets.ts as they were written over a list of distinct values: the reference. */
function reference(field: FacetField, input: string, values: readonly string[]): string[] {
  const lower = (s: string) => s.toLowerCase();
  const forcedPrefix = input.length > 1 && input.endsWith('*');
  const text = lower(forcedPrefix ? input.slice(0, -1) : input);
  const prefixed = values.filter((v) => lower(v).startsWith(text));
  if (forcedPrefix) return prefixed;
  if (field === 'rule_source' && !text.includes(':')) {
    const family = values.filter((v) => lower(v) === text || lower(v).startsWith(`${text}:`));
    return family.length ? family : prefixed;
  }
  const exact = values.filter((v) => lower(v) === text);
  return exact.length ? exact : prefixed;
}

const WORDS = ['policy', 'Policy', 'policy:no-prod', 'policy:a', 'policyx', 'hitl:deploy', 'trainer', 'Trainer_v2', 'trainer*', 'élan', 'ÉLAN', 'a', 'A:b', ''];

describe('FilterResolution', () => {
  it('gives what the rules give over the distinct values, whatever order and repetitions the values come in', () => {
    const value = fc.oneof(fc.constantFrom(...WORDS), fc.string({ maxLength: 6 }));
    fc.assert(
      fc.property(fc.constantFrom<FacetField>('agent', 'tool', 'rule_source'), fc.oneof(fc.constantFrom(...WORDS, 'p', 'POL', 'trainer', 'x*', '*'), fc.string({ maxLength: 4 })), fc.array(value, { maxLength: 40 }), (field, input, values) => {
        const distinct = [...new Set(values.filter((v) => v !== ''))].sort();
        expect(resolveValue(field, input, [...values, ...values.slice().reverse(), null])).toEqual(reference(field, input, distinct));
      }),
      { numRuns: 2_000 },
    );
  });

  it('keeps at most its bound and refuses, with a 400 that says what to do, a value that stands for more', () => {
    const many = Array.from({ length: 50 }, (_, i) => `spray-${i}`);
    expect(resolveValue('agent', 'spray*', many, 50)).toHaveLength(50);
    const error = (() => {
      try {
        resolveValue('agent', 'spray*', [...many, 'spray-x'], 50);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).status).toBe(400);
    expect((error as AppError).message).toMatch(/stands for more than 50 agents.*type more of the name/);
    // an exact value (ignoring case) among as many prefixed ones is no problem: it is what the filter stands for
    expect(resolveValue('agent', 'spray', [...many, 'spray-x', 'SPRAY'], 50)).toEqual(['SPRAY']);
    // nor is a narrower prefix
    expect(resolveValue('agent', 'spray-4*', [...many, 'spray-x'], 50)).toEqual(['spray-4', 'spray-40', 'spray-41', 'spray-42', 'spray-43', 'spray-44', 'spray-45', 'spray-46', 'spray-47', 'spray-48', 'spray-49']);
  });

  it('counts a value that comes again once, however often it comes', () => {
    const r = new FilterResolution('tool', 'deploy', 2);
    for (let i = 0; i < 1_000; i++) {
      r.add('deploy_serving');
      r.add('deploy_batch');
    }
    expect(r.result()).toEqual(['deploy_batch', 'deploy_serving']);
  });
});

const options: RecorderOptions = { revision: () => 'rev-facets', logAllDecisions: () => false };
const denial = (agent: string, i: number): DenialInput => ({
  toolCallId: `call-${i}`,
  toolName: 'profile_dataset',
  agentName: agent,
  argumentsJson: '{}',
  ruleSource: 'agent_allowlist',
  reason: `Unknown agent "${agent}"`,
  userRole: 'admin',
  httpMethod: null,
  httpPath: null,
  principal: 'admin',
  traceJson: '[]',
  decisionId: `dec-${i}`,
});
/** The names: a spray, and the agents an auditor looks for. */
const names = (spray: number) => [...Array.from({ length: spray }, (_, i) => `spray-${i}`), 'trainer', 'Trainer_v2', 'data_cleaner'];


const pg15 = usePostgres();
const cleanups: (() => unknown)[] = [];
afterAll(() => {
  for (const c of cleanups) c();
});

/**
 * SQLite gets more names than it takes parameters in one statement (the old IN list failed there) and than a function
 * call takes arguments (the old summary spread its groups into one: a RangeError); PostgreSQL gets more than the bound
 * (its limit, 65,535 parameters, would take a minute of chained writes to pass).
 */
const SQLITE_SPRAY = 200_000;
const stores: Record<'SQLite' | 'PostgreSQL', { spray: number; open(): Promise<DenialStore> }> = {
  SQLite: {
    spray: SQLITE_SPRAY,
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'swarm-facets-'));
      const db = openDatabase({ path: join(dir, 'trail.db') });
      cleanups.push(() => {
        db.$client.close();
        rmSync(dir, { recursive: true, force: true });
      });
      const recorder = new AuditRecorder(db.$client, options);
      db.$client.transaction(() => names(SQLITE_SPRAY).forEach((a, i) => recorder.appendDenial(denial(a, i))))();
      return new SqlDenialStore(new SqliteDatabase(db.$client));
    },
  },
  PostgreSQL: {
    spray: MAX_RESOLVED_VALUES + 500,
    async open() {
      const pool = pg15.pool(await pg15.freshDatabase('facets'));
      const recorder = new PgAuditRecorder(pool, options);
      await inTransaction(pool, async (tx) => {
        let i = 0;
        for (const a of names(MAX_RESOLVED_VALUES + 500)) await recorder.appendDenialIn(tx, denial(a, i++));
      });
      return new SqlDenialStore(new PostgresDatabase(pool));
    },
  },
};

describe.each(Object.keys(stores) as (keyof typeof stores)[])('agent filters over a sprayed trail on %s', (kind) => {
  let store: DenialStore;
  beforeAll(async () => {
    store = await stores[kind].open();
  }, 120_000);

  /** The error a count gives (thrown, or a rejected promise), or undefined. */
  const failure = async (f: DenialMatch): Promise<unknown> => {
    try {
      await store.count(f);
    } catch (error) {
      return error;
    }
    return undefined;
  };

  it('refuses a prefix that stands for more agents than the bound with a 400', async () => {
    for (const agent of ['spray*', 'SPRAY-']) {
      const error = await failure({ agent });
      expect(error, agent).toBeInstanceOf(AppError);
      expect((error as AppError).status).toBe(400);
    }
  });

  it('still finds one agent among them, exactly or ignoring case, and a narrower prefix', async () => {
    expect(await store.count({ agent: 'spray-123' })).toBe(1);
    expect(await store.count({ agent: 'TRAINER' })).toBe(1);
    expect(await store.count({ agent: 'trainer*' })).toBe(2);
    expect(await store.count({ agent: 'data_cleaner', tool: 'profile', ruleSource: 'agent_allowlist' })).toBe(1);
    // spray-1234, and in SQLite's larger spray spray-12340 … spray-12349 and spray-123400 … spray-123499
    expect(await store.count({ agent: 'spray-1234*' })).toBe(stores[kind].spray > 123_499 ? 111 : 1);
  });

  it('still sums the trail up and suggests values, whatever the number of names in it', async () => {
    const n = stores[kind].spray + 3;
    const summary = await store.summary({});
    expect(summary.total).toBe(n);
    expect(summary.topRuleSources).toEqual([{ value: 'agent_allowlist', count: n }]);
    const facet = await store.facet('agent', {}, { prefix: 'TRAIN', limit: 5 });
    expect(facet).toMatchObject({ total: 2, values: [{ value: 'trainer', count: 1 }, { value: 'Trainer_v2', count: 1 }] });
    expect((await store.facet('agent', {}, { prefix: 'spray-', limit: 3 })).total).toBe(stores[kind].spray);
  });
});
