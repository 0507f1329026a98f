/**
 * The check body's fast path (checkBodyFast, batchCheckBodyFast) against the zod schemas it stands in for: on every
 * generated body, it either declines (undefined) or answers exactly what zod answers, and it takes the bodies agents
 * really send.
 */
import { describe, expect, it } from 'vitest';
import { prng } from '@/bench/util';
import { batchCheckBodyFast, batchCheckBodySchema, checkBodyFast, checkBodySchema } from './schemas';

/** seeded, so that a failure can be replayed */
const next = prng(20261123);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
/** `levels` arrays inside each other, the innermost empty */
const nested = (levels: number): unknown => {
  let v: unknown = [];
  for (let i = 1; i < levels; i++) v = [v];
  return v;
};

const strings = ['', 'a', 'trainer', 'x'.repeat(199), 'x'.repeat(200), 'x'.repeat(201), 'ü'.repeat(200), ' ', '😀'.repeat(100), '😀'.repeat(101)];
const values = (): unknown => pick<() => unknown>([() => pick(strings), () => 0, () => -1.5, () => true, () => false, () => null, () => [], () => [1, 'a'], () => ({}), () => ({ a: 1 }), () => undefined])();
const argumentsValues = (): unknown =>
  pick<() => unknown>([
    () => ({}),
    () => ({ model_id: 'm-1', trials: 500 }),
    () => ({ nested: { deep: [1, { x: null }] } }),
    () => JSON.parse('{"__proto__": {"polluted": true}, "a": 1}'),
    () => Object.create(null),
    () => ({ a: [JSON.parse('{"constructor": {}}')] }),
    () => ({ prototype: 1 }),
    () => ({ v: nested(64) }),
    () => ({ v: nested(63) }),
    () => ({ v: nested(200) }),
    () => [],
    () => null,
    () => 'text',
    () => 7,
    () => new Date(0),
  ])();

/** A body that is often valid and often wrong in one place: a missing key, a wrong type, a length at a limit, an extra key. */
function body(): unknown {
  const b: Record<string, unknown> = {};
  if (next() < 0.95) b.agent = next() < 0.8 ? pick(['trainer', 'data_cleaner', 'a', 'x'.repeat(200)]) : values();
  if (next() < 0.95) b.tool = next() < 0.8 ? pick(['train_model', 'profile_dataset']) : values();
  if (next() < 0.7) b.arguments = argumentsValues();
  if (next() < 0.5) b.tool_call_id = next() < 0.7 ? pick(['call-1', 'x'.repeat(200)]) : values();
  if (next() < 0.4) b.dry_run = next() < 0.7 ? next() < 0.5 : values();
  if (next() < 0.05) b[pick(['extra', 'Agent', '__proto__', 'constructor'])] = 1;
  if (next() < 0.02) return pick([null, [], 'body', 3, [b]]);
  return b;
}

describe('arguments in the check body', () => {
  const issues = (raw: unknown) => {
    const r = checkBodySchema.safeParse(raw);
    return r.success ? [] : r.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
  };

  it('are kept exactly as sent: the same object, a __proto__ key never turned into a prototype', () => {
    const args = { model_id: 'm-1', nested: { a: [1, { b: null }] } };
    expect(checkBodySchema.parse({ agent: 'a', tool: 't', arguments: args }).arguments).toBe(args);
  });

  it('refuse a __proto__, constructor or prototype key at any depth, and nesting over 64 levels, naming the path', () => {
    expect(issues(JSON.parse('{"agent":"a","tool":"t","arguments":{"env":"staging","__proto__":{"env":"prod"}}}'))).toEqual([
      { path: 'arguments.__proto__', message: 'The key "__proto__" is refused: it cannot be kept exactly as sent.' },
    ]);
    expect(issues({ agent: 'a', tool: 't', arguments: { list: [0, JSON.parse('{"x":{"constructor":1}}')] } })[0]?.path).toBe('arguments.list.1.x.constructor');
    expect(issues({ agent: 'a', tool: 't', arguments: { v: nested(63) } })).toEqual([]);
    expect(issues({ agent: 'a', tool: 't', arguments: { v: nested(64) } })[0]?.message).toMatch(/at most 64 levels/);
    expect(issues({ agent: 'a', tool: 't', arguments: { v: nested(5_000) } })).toHaveLength(1);
    for (const raw of [{ agent: 'a', tool: 't', arguments: { prototype: 1 } }, { agent: 'a', tool: 't', arguments: { v: nested(64) } }]) {
      expect(checkBodyFast(raw)).toBeUndefined();
      expect(batchCheckBodyFast({ checks: [raw] })).toBeUndefined();
      expect(batchCheckBodySchema.safeParse({ checks: [raw] }).success).toBe(false);
    }
  });
});

describe('the check body fast path', () => {
  it('answers exactly what the schema answers whenever it answers, over 20,000 generated bodies', () => {
    for (let i = 0; i < 20_000; i++) {
      const raw = body();
      const zod = checkBodySchema.safeParse(raw);
      const fast = checkBodyFast(raw);
      if (fast === undefined) continue;
      expect(zod.success, JSON.stringify(raw)).toBe(true);
      expect(fast).toStrictEqual(zod.data);
    }
  });

  it('takes every valid body as it arrives over the wire (JSON), but the rare ones it leaves to zod', () => {
    let valid = 0;
    for (let i = 0; i < 20_000; i++) {
      const text = JSON.stringify(body());
      if (text === undefined) continue;
      const wire: unknown = JSON.parse(text);
      const zod = checkBodySchema.safeParse(wire);
      // Declined, for zod to answer: names over 200 UTF-16 units (zod counts code points, so some of those are valid).
      if (!zod.success || [zod.data.agent, zod.data.tool, zod.data.tool_call_id ?? ''].some((v) => v.length > 200)) continue;
      valid++;
      expect(checkBodyFast(wire), text).toStrictEqual(zod.data);
    }
    expect(valid).toBeGreaterThan(4_000);
  });

  it('takes the bodies agents send, and declines what it cannot vouch for', () => {
    expect(checkBodyFast({ agent: 'trainer', tool: 'train_model' })).toStrictEqual({ agent: 'trainer', tool: 'train_model', arguments: {}, dry_run: false });
    expect(checkBodyFast({ agent: 'trainer', tool: 't', arguments: { a: [1] }, tool_call_id: 'c', dry_run: true })).toStrictEqual({
      agent: 'trainer',
      tool: 't',
      arguments: { a: [1] },
      tool_call_id: 'c',
      dry_run: true,
    });
    for (const raw of [{ agent: 'trainer' }, { agent: 'trainer', tool: 't', extra: 1 }, { agent: 'trainer', tool: 't', arguments: [] }, { agent: '', tool: 't' }, JSON.parse('{"agent":"a","tool":"t","arguments":{"__proto__":{}}}')]) {
      expect(checkBodyFast(raw)).toBeUndefined();
    }
  });

  it('the batch form: the fast path only when every check takes it, and then the schema\'s answer', () => {
    for (let i = 0; i < 2_000; i++) {
      const raw = next() < 0.9 ? { checks: Array.from({ length: Math.floor(next() * 4) }, body) } : pick([{ checks: 'x' }, { checks: [], more: 1 }, [], null]);
      const zod = batchCheckBodySchema.safeParse(raw);
      const fast = batchCheckBodyFast(raw);
      if (fast === undefined) continue;
      expect(zod.success, JSON.stringify(raw)).toBe(true);
      expect(fast).toStrictEqual(zod.data);
    }
    const many = { checks: Array.from({ length: 1_000 }, (_, i) => ({ agent: 'trainer', tool: `t${i}` })) };
    expect(batchCheckBodyFast(many)?.checks).toHaveLength(1_000);
    expect(batchCheckBodyFast({ checks: [...many.checks, { agent: 'trainer', tool: 'one too many' }] })).toBeUndefined();
  });
});
