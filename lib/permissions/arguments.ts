/**
 * Arguments are kept exactly, or refused (issue 23). A call's arguments are what an approval is bound to (their
 * canonical JSON), what policies match and what the audit row stores, so every place must see the same keys and
 * values. Two kinds of input cannot be kept exactly and are refused wherever arguments enter (the check and batch
 * bodies, AuthZEN, the engine's own API):
 *
 * - a key named `__proto__`, `constructor` or `prototype`, at any depth: JSON.parse keeps `"__proto__"` as a key, but
 *   the first plain object it is copied into (a validator's record, a sorted copy, a redacted copy) turns it into the
 *   copy's prototype, so the key vanishes from what is hashed and stored while its values can still be read through
 *   the prototype. (The other two are refused with it: they mean the same machinery to whoever reads the arguments.)
 * - nesting deeper than MAX_ARGUMENT_DEPTH objects and arrays: no call needs it, and every recursive walk of the
 *   arguments (sorting, redaction, CEL) would otherwise have to defend itself against a stack overflow.
 *
 * Pure, and bounded: a body nested 5,000 arrays deep is walked to the limit, not to its bottom.
 */
import { brand } from '@/lib/errors';

/** The deepest nesting of objects and arrays the arguments may have: the arguments object itself is level 1. */
export const MAX_ARGUMENT_DEPTH = 64;

/** Keys a JavaScript object cannot keep as plain data (problemIn compares them inline, for speed). */
export const FORBIDDEN_ARGUMENT_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

export interface ArgumentsProblem {
  /** where, from the arguments object: keys and array indexes */
  path: (string | number)[];
  message: string;
  code: 'forbidden_key' | 'too_deep' | 'not_json';
}

const isContainer = (v: unknown): v is object => v !== null && typeof v === 'object';

/**
 * The first problem of these arguments (depth first, in key order), or undefined when they can be kept exactly. Any
 * object that is not plain data (a class instance, a Map, a Date) is refused too: its canonical JSON would not be it.
 * `depth: 0` for an object that holds arguments (AuthZEN's properties), so that the arguments in it have the same limit.
 */
export function argumentsProblem(args: unknown, options: { depth?: number } = {}): ArgumentsProblem | undefined {
  return isContainer(args) ? problemIn(args, options.depth ?? 1) : undefined;
}

/**
 * The walk: recursive, but never deeper than MAX_ARGUMENT_DEPTH + 1 frames (a value nested 5,000 deep stops at the
 * limit), and the path is built only for a problem, on the way back (the common case allocates nothing: measured, a
 * walk that carried a path array per level cost about twice as much on the decision path).
 */
function problemIn(value: object, depth: number): ArgumentsProblem | undefined {
  if (depth > MAX_ARGUMENT_DEPTH) {
    return { path: [], message: `Arguments may be nested at most ${MAX_ARGUMENT_DEPTH} levels of objects and arrays deep; this is deeper.`, code: 'too_deep' };
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      if (!isContainer(v)) continue;
      const problem = problemIn(v, depth + 1);
      if (problem) return (problem.path.unshift(i), problem);
    }
    return undefined;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) {
    return { path: [], message: 'Arguments are JSON data: this value is an object of another kind, which would not be kept as it is.', code: 'not_json' };
  }
  const keys = Object.keys(value);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') {
      return { path: [key], message: `The key "${key}" is refused: it cannot be kept exactly as sent.`, code: 'forbidden_key' };
    }
    const v: unknown = (value as Record<string, unknown>)[key];
    if (!isContainer(v)) continue;
    const problem = problemIn(v, depth + 1);
    if (problem) return (problem.path.unshift(key), problem);
  }
  return undefined;
}

/** A path as the API names it: `arguments.a.0.__proto__` (with a prefix: where the arguments sit in the body). */
export function argumentsPath(problem: Pick<ArgumentsProblem, 'path'>, prefix = 'arguments'): string {
  return [prefix, ...problem.path].filter((p) => p !== '').join('.');
}

/** Thrown by the engine (check, decide, enforce and their async forms) for arguments that cannot be kept exactly. */
export class InvalidArguments extends Error {
  static readonly kind = 'InvalidArguments';
  readonly code = 'INVALID_ARGUMENTS';
  constructor(readonly problem: ArgumentsProblem) {
    super(`${problem.message} (at ${argumentsPath(problem)})`);
    brand(this, InvalidArguments);
  }
}

/** Throw InvalidArguments when these arguments cannot be kept exactly. */
export function assertArguments(args: unknown): void {
  const problem = argumentsProblem(args);
  if (problem) throw new InvalidArguments(problem);
}
