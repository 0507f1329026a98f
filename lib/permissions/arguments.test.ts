import { afterEach, describe, expect, it } from 'vitest';
import { canonicalJson, hashArguments } from '@/lib/approvals/canonical';
import { tempApp, type TempApp } from '@/lib/test-support/temp-app';
import { argumentsProblem, InvalidArguments, MAX_ARGUMENT_DEPTH } from './arguments';
import type { Principal, ToolContext } from './types';

/** `levels` arrays inside each other, the innermost empty: `[[[]]]` is 3. */
const nested = (levels: number): unknown => {
  let v: unknown = [];
  for (let i = 1; i < levels; i++) v = [v];
  return v;
};

describe('arguments kept exactly or refused', () => {
  it('refuses a __proto__, constructor or prototype key at any depth, naming where it is', () => {
    expect(argumentsProblem(JSON.parse('{"env":"staging","__proto__":{"env":"prod"}}'))).toMatchObject({ path: ['__proto__'], code: 'forbidden_key' });
    expect(argumentsProblem({ a: [{ b: 1 }, JSON.parse('{"constructor":{}}')] })).toMatchObject({ path: ['a', 1, 'constructor'] });
    expect(argumentsProblem({ deep: { prototype: 1 } })?.message).toMatch(/"prototype" is refused/);
    expect(argumentsProblem({ model_id: 'm-1', env: 'prod', tags: ['a', { proto: '__proto__' }] })).toBeUndefined();
  });

  it(`allows ${MAX_ARGUMENT_DEPTH} levels of nesting and refuses more, without recursing into 5,000`, () => {
    // The arguments object is level 1: a value holding MAX - 1 nested arrays reaches the limit exactly.
    expect(argumentsProblem({ v: nested(MAX_ARGUMENT_DEPTH - 1) })).toBeUndefined();
    expect(argumentsProblem({ v: nested(MAX_ARGUMENT_DEPTH) })).toMatchObject({ code: 'too_deep', path: ['v', ...Array<number>(MAX_ARGUMENT_DEPTH - 1).fill(0)] });
    expect(argumentsProblem({ v: nested(5_000) })?.code).toBe('too_deep');
  });

  it('refuses values that are not JSON data, which their canonical JSON would not keep', () => {
    expect(argumentsProblem({ when: new Date(0) })).toMatchObject({ path: ['when'], code: 'not_json' });
    expect(argumentsProblem({ m: new Map() })?.code).toBe('not_json');
    expect(argumentsProblem(Object.assign(Object.create(null) as object, { a: 1 }))).toBeUndefined();
  });

  it('gives canonical JSON that keeps every own key, and refuses depth instead of overflowing the stack', () => {
    const withProto = JSON.parse('{"b":1,"__proto__":{"env":"prod"}}') as unknown;
    expect(canonicalJson(withProto)).toBe('{"__proto__":{"env":"prod"},"b":1}');
    expect(hashArguments(withProto)).not.toBe(hashArguments({ b: 1 }));
    expect(() => canonicalJson({ v: nested(5_000) })).toThrow(InvalidArguments);
  });
});

describe('the engine refuses arguments it cannot keep exactly', () => {
  let t: TempApp | undefined;
  afterEach(() => {
    t?.cleanup();
    t = undefined;
  });
  const deployer: Principal = { kind: 'agent', id: 'deployer', role: 'viewer', agent: 'deployer' };
  const call = (args: Record<string, unknown>): ToolContext => ({ kind: 'tool', principal: deployer, agent: 'deployer', tool: 'deploy_serving', arguments: args });

  it('throws InvalidArguments from check, decide, enforce and their async forms, and records nothing', async () => {
    t = tempApp();
    const app = t.app;
    // The call: approved for staging, then sent again with a prototype that says prod.
    const staging = { model_id: 'm-1', env: 'staging' };
    const asked = app.engine.decide(call(staging));
    await app.approvals.approve(asked.approvalId!, { id: 'olivia', role: 'operator' });
    const smuggled = JSON.parse('{"model_id":"m-1","env":"staging","__proto__":{"env":"prod"}}') as Record<string, unknown>;
    const denialsBefore = await app.denials.count();
    for (const attempt of [() => app.engine.check(call(smuggled)), () => app.engine.decide(call(smuggled)), () => app.engine.enforce(call(smuggled))]) {
      expect(attempt).toThrow(InvalidArguments);
    }
    await expect(app.engine.decideAsync(call(smuggled))).rejects.toThrow(/The key "__proto__" is refused.*at arguments\.__proto__/);
    await expect(app.engine.enforceAsync(call({ v: nested(5_000) }))).rejects.toMatchObject({ code: 'INVALID_ARGUMENTS', problem: { code: 'too_deep' } });
    expect(await app.denials.count()).toBe(denialsBefore);
    // The approval is still there for the exact call it was given to.
    expect((await app.approvals.get(asked.approvalId!))?.status).toBe('approved');
    expect(app.engine.decide(call(staging))).toMatchObject({ decision: 'ALLOW', approvalId: asked.approvalId });
  });
});
