/**
 * MCP tool annotations as the policy reads them: the specification's defaults, the requirement of a rule or gate, and
 * what conditions see as `tool_annotations`. Pure.
 */
import { describe, expect, it } from 'vitest';
import { annotationRequirementSchema, annotationsMatch, compileAnnotations, describeAnnotations, effectiveAnnotations, type EffectiveAnnotations } from './annotations';
import { compileCondition, conditionHolds } from './condition';
import type { Principal, ToolAnnotations } from './types';

const ALL_DEFAULTS: EffectiveAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };

describe('effectiveAnnotations: the specification defaults', () => {
  const cases: [string, ToolAnnotations | undefined, EffectiveAnnotations | undefined][] = [
    ['no annotations at all (not through the MCP gateway)', undefined, undefined],
    ['a tool that declares nothing may modify, may destroy, is not idempotent, reaches an open world', {}, ALL_DEFAULTS],
    ['a read-only tool with no destructiveHint is not destructive', { readOnlyHint: true }, { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: true }],
    ['destructiveHint is meaningless for a read-only tool', { readOnlyHint: true, destructiveHint: true }, { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: true }],
    ['a read-only tool keeps a declared idempotentHint', { readOnlyHint: true, idempotentHint: true }, { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true }],
    ['an additive tool says destructiveHint false', { destructiveHint: false }, { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true }],
    ['readOnlyHint false is the default said aloud', { readOnlyHint: false }, ALL_DEFAULTS],
    ['a closed-world idempotent writer', { idempotentHint: true, openWorldHint: false }, { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }],
    [
      'every hint declared is kept',
      { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    ],
  ];
  it.each(cases)('%s', (_, declared, effective) => {
    expect(effectiveAnnotations(declared)).toEqual(effective);
  });
});

describe('annotationsMatch: a requirement against a call', () => {
  const destructive = compileAnnotations({ destructiveHint: true });
  const safeReader = compileAnnotations({ readOnlyHint: true, openWorldHint: false });
  const cases: [string, ReturnType<typeof compileAnnotations>, ToolAnnotations | undefined, boolean][] = [
    ['a tool that declares nothing is destructive', destructive, {}, true],
    ['a declared destructive tool', destructive, { destructiveHint: true }, true],
    ['an additive tool is not', destructive, { destructiveHint: false }, false],
    ['a read-only tool is not', destructive, { readOnlyHint: true }, false],
    ['a call without annotations never matches', destructive, undefined, false],
    ['every listed hint must hold', safeReader, { readOnlyHint: true, openWorldHint: false }, true],
    ['one hint off is a miss', safeReader, { readOnlyHint: true }, false],
    ['requiring a default value matches a tool that declares nothing', compileAnnotations({ openWorldHint: true, idempotentHint: false }), {}, true],
  ];
  it.each(cases)('%s', (_, m, a, expected) => {
    expect(annotationsMatch(m, a)).toBe(expected);
  });
});

describe('annotations as written', () => {
  it('refuses an unknown hint and an empty requirement', () => {
    expect(annotationRequirementSchema.safeParse({ destructive: true }).success).toBe(false);
    expect(annotationRequirementSchema.safeParse({ destructiveHint: 'yes' }).success).toBe(false);
    expect(annotationRequirementSchema.safeParse({}).success).toBe(false);
    expect(annotationRequirementSchema.parse({ destructiveHint: true })).toEqual({ destructiveHint: true });
  });

  it('says a requirement in words', () => {
    expect(describeAnnotations({ destructiveHint: true })).toBe('destructiveHint');
    expect(describeAnnotations({ openWorldHint: true, readOnlyHint: false })).toBe('not readOnlyHint and openWorldHint');
  });
});

describe('tool_annotations in conditions', () => {
  const principal: Principal = { kind: 'agent', id: 'a', role: 'viewer', agent: 'a' };
  const holds = (expr: string, annotations: ToolAnnotations | undefined, onError = false) =>
    conditionHolds(compileCondition(expr), { agent: 'a', tool: 't', arguments: {}, principal, flags: new Map(), annotations }, onError);
  const PORTABLE = 'has(tool_annotations.destructiveHint) && tool_annotations.destructiveHint';
  const cases: [string, string, ToolAnnotations | undefined, boolean][] = [
    ['the portable form: a tool that declares nothing is destructive', PORTABLE, {}, true],
    ['the portable form: a read-only tool is not', PORTABLE, { readOnlyHint: true }, false],
    ['the portable form: a call without annotations is not', PORTABLE, undefined, false],
    ['the map is empty without annotations', 'size(tool_annotations) == 0', undefined, true],
    ['with annotations every hint is there', 'size(tool_annotations) == 4', { openWorldHint: false }, true],
    ['index syntax', "!tool_annotations['openWorldHint']", { openWorldHint: false }, true],
  ];
  it.each(cases)('%s', (_, expr, a, expected) => {
    expect(holds(expr, a)).toBe(expected);
  });

  it('cannot evaluate a missing hint without has(): the caller picks the safe side', () => {
    expect(holds('tool_annotations.destructiveHint', undefined, false)).toBe(false);
    expect(holds('tool_annotations.destructiveHint', undefined, true)).toBe(true);
  });

  it('is declared to the type-checker: a typo of the variable is refused at load, a non-boolean use too', () => {
    expect(() => compileCondition('tool_annotations.destructiveHint')).not.toThrow();
    expect(() => compileCondition('tool_anotations.destructiveHint')).toThrow(/tool_anotations/);
    expect(() => compileCondition('tool_annotations.destructiveHint + 1 == 2')).toThrow();
  });
});
