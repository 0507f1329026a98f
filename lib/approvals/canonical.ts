import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every depth: the same arguments always give the same text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? 'null';
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) out[k] = sortKeys((value as Record<string, unknown>)[k]);
    return out;
  }
  return value;
}

/** sha-256 of the canonical arguments: an approval is bound to exactly these. */
export function hashArguments(args: unknown): string {
  return createHash('sha256').update(canonicalJson(args ?? {})).digest('hex');
}
