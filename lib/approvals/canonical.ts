import { createHash } from 'node:crypto';
import { InvalidArguments, MAX_ARGUMENT_DEPTH } from '@/lib/permissions/arguments';

/**
 * JSON with object keys sorted at every depth: the same arguments always give the same text. Exact: every own key is
 * kept (the sorted copies have no prototype, so a key named `__proto__` stays a key instead of becoming one), and a
 * value nested deeper than MAX_ARGUMENT_DEPTH is refused (InvalidArguments) rather than recursed into until the stack
 * runs out (the engine refuses such arguments before they get here; this holds for any other caller).
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value, 1)) ?? 'null';
}

function sortKeys(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_ARGUMENT_DEPTH) {
    throw new InvalidArguments({ path: [], message: `The value is nested deeper than ${MAX_ARGUMENT_DEPTH} levels of objects and arrays.`, code: 'too_deep' });
  }
  if (Array.isArray(value)) return value.map((v) => sortKeys(v, depth + 1));
  const out = Object.create(null) as Record<string, unknown>;
  for (const k of Object.keys(value).sort()) out[k] = sortKeys((value as Record<string, unknown>)[k], depth + 1);
  return out;
}

/** sha-256 of the canonical arguments: an approval is bound to exactly these. */
export function hashArguments(args: unknown): string {
  return createHash('sha256').update(canonicalJson(args ?? {})).digest('hex');
}
