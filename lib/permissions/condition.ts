/**
 * `when:` conditions of policy rules and gates: CEL expressions, compiled and type-checked once at load.
 *
 * Library: @marcbachmann/cel-js, chosen by measuring it beside @bufbuild/cel on this machine (bench/README.md):
 * ~220 ns against ~2,500 ns per evaluation, ~1.8 µs against ~40 µs per compile, a public type-checker that finds
 * unknown functions and variables at load (bufbuild's only fails when the branch runs), positions in every error,
 * and no dependencies (284 KB against ~11 MB with protobuf).
 *
 * Variables: agent, tool, args, principal (id, role, kind, on_behalf_of), method, path, flags (name -> bool), now (timestamp), and
 * tool_annotations (hint -> bool: the call's MCP annotations with the specification's defaults, an empty map for a call
 * that did not come through the MCP gateway; see annotations.ts).
 * JS numbers are CEL doubles: `args.trials >= 500` holds for 750 and for 750.5; write `1.0` in arithmetic with them.
 */
import { Environment, ParseError } from '@marcbachmann/cel-js';
import { z } from 'zod';
import { annotationVars } from './annotations';
import type { FlagValues, Principal, ToolAnnotations } from './basics';
import { brand, isError } from '@/lib/errors';

/** Built once: every condition is parsed and type-checked against these declarations. */
const env = new Environment({ limits: { maxAstNodes: 2000, maxDepth: 50 } })
  .registerVariable('agent', 'string')
  .registerVariable('tool', 'string')
  .registerVariable('args', 'map')
  .registerVariable('principal', 'map')
  .registerVariable('method', 'string')
  .registerVariable('path', 'string')
  .registerVariable('flags', 'map<string, bool>')
  .registerVariable('now', 'google.protobuf.Timestamp')
  .registerVariable('tool_annotations', 'map<string, bool>');

export class ConditionError extends Error {
  static readonly kind = 'ConditionError';
  constructor(
    readonly expression: string,
    readonly summary: string,
    /** 0-based offset in the expression */
    readonly offset: number,
  ) {
    super(`${summary} (at character ${offset + 1} of "${expression}")`);
    brand(this, ConditionError);
  }
}

export interface Condition {
  readonly text: string;
  /** true or false; throws when the expression cannot be evaluated for these values (e.g. a missing key) */
  evaluate(vars: ConditionVars): boolean;
}

export interface ConditionVars {
  agent: string;
  tool: string;
  args: Readonly<Record<string, unknown>>;
  /** on_behalf_of: the person an agent acts for ('' when none) */
  principal: { id: string; role: string; kind: string; on_behalf_of: string };
  method: string;
  path: string;
  flags: Record<string, boolean>;
  now: Date;
  /** the effective MCP annotations of the call (annotations.ts); empty for a call without any */
  tool_annotations: Readonly<Record<string, boolean>>;
}

type CelError = { summary?: string; message: string; range?: { start: number } };

function conditionError(text: string, e: CelError): ConditionError {
  return new ConditionError(text, e.summary ?? e.message.split('\n')[0] ?? e.message, e.range?.start ?? 0);
}

/** Parse and type-check once. Throws ConditionError with the offset of the problem. */
export function compileCondition(text: string): Condition {
  let fn: ReturnType<typeof env.parse>;
  try {
    fn = env.parse(text);
  } catch (e) {
    if (e instanceof ParseError) throw conditionError(text, e as unknown as CelError);
    throw e;
  }
  const checked = fn.check();
  if (!checked.valid) throw conditionError(text, (checked.error ?? { message: 'the expression is not valid' }) as CelError);
  if (checked.type !== 'bool' && checked.type !== 'dyn') {
    throw new ConditionError(text, `a condition must be true or false, but this one gives a ${checked.type}`, 0);
  }
  return {
    text,
    evaluate(vars) {
      const r = fn(vars as unknown as Record<string, unknown>);
      if (typeof r !== 'boolean') throw new Error(`the condition gave ${String(r)}, not true or false`);
      return r;
    },
  };
}

/** A zod schema for a `when:` field: the expression is compiled at load, so a bad one is refused at file:line:column. */
export const conditionSchema = z.string().superRefine((text, ctx) => {
  try {
    compileCondition(text);
  } catch (e) {
    if (!isError(e, ConditionError)) throw e;
    ctx.addIssue({ code: 'custom', message: `invalid condition: ${e.message}` });
  }
});

const NO_ARGS: Readonly<Record<string, unknown>> = Object.freeze({});

/** The flag values as the record a condition reads, made once per set of values (a set is replaced, never changed). */
const flagRecords = new WeakMap<FlagValues, Readonly<Record<string, boolean>>>();
function flagRecord(values: FlagValues): Readonly<Record<string, boolean>> {
  let record = flagRecords.get(values);
  if (!record) {
    const r: Record<string, boolean> = {};
    for (const [k, v] of values) r[k] = v;
    record = Object.freeze(r);
    flagRecords.set(values, record);
  }
  return record;
}

/** The variables a condition sees for a check. */
export function conditionVars(c: {
  agent?: string;
  tool?: string;
  arguments?: Readonly<Record<string, unknown>>;
  principal: Principal;
  method?: string;
  path?: string;
  flags: FlagValues;
  now?: number;
  annotations?: ToolAnnotations;
}): ConditionVars {
  const flags = flagRecord(c.flags);
  return {
    agent: c.agent ?? '',
    tool: c.tool ?? '',
    args: c.arguments ?? NO_ARGS,
    principal: { id: c.principal.id, role: c.principal.role, kind: c.principal.kind, on_behalf_of: c.principal.onBehalfOf ?? '' },
    method: c.method ?? '',
    path: c.path ?? '',
    flags,
    now: new Date(c.now ?? Date.now()),
    tool_annotations: annotationVars(c.annotations),
  };
}

/**
 * Does the condition hold for this check? An expression that cannot be evaluated (a missing key, a type mismatch)
 * gives `onError`: callers choose the safe side (a gate is kept, a DENY rule applies, an ALLOW rule does not).
 */
export function conditionHolds(condition: Condition, c: Parameters<typeof conditionVars>[0], onError: boolean): boolean {
  try {
    return condition.evaluate(conditionVars(c));
  } catch {
    return onError;
  }
}
