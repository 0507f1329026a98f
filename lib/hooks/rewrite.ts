/**
 * Argument rewrites of hooks: set, remove or mask fields by dotted path (`bcc`, `payment.card`, `recipients.0`).
 * Pure: the arguments are copied, never changed in place, and the paths that really changed are reported.
 */
import { canonicalJson } from '@/lib/approvals/canonical';
import type { Rewrite } from './config';

export const MASKED = '[MASKED]';

type Json = Record<string, unknown> | unknown[];

function isContainer(v: unknown): v is Json {
  return v !== null && typeof v === 'object';
}

/** The container that holds the last segment of `path`, created along the way when `create` (else undefined). */
function parentOf(root: Record<string, unknown>, segs: readonly string[], create: boolean): Json | undefined {
  let node: Json = root;
  for (let i = 0; i < segs.length - 1; i++) {
    const key = segs[i]!;
    const next: unknown = (node as Record<string, unknown>)[key];
    if (isContainer(next)) {
      node = next;
      continue;
    }
    if (!create) return undefined;
    const made: Json = {};
    (node as Record<string, unknown>)[key] = made;
    node = made;
  }
  return node;
}

const has = (o: Json, k: string) => Object.prototype.hasOwnProperty.call(o, k);

/** Apply a rewrite. Returns the same object when nothing changed, else a copy and the changed paths. */
export function applyRewrite(args: Readonly<Record<string, unknown>>, rw: Rewrite): { arguments: Readonly<Record<string, unknown>>; changed: string[] } {
  const out = structuredClone(args) as Record<string, unknown>;
  const changed: string[] = [];
  for (const [path, value] of rw.set) {
    const segs = path.split('.');
    const parent = parentOf(out, segs, true)!;
    const key = segs[segs.length - 1]!;
    const before = (parent as Record<string, unknown>)[key];
    if (has(parent, key) && canonicalJson(before) === canonicalJson(value)) continue;
    (parent as Record<string, unknown>)[key] = structuredClone(value);
    changed.push(path);
  }
  for (const path of rw.remove) {
    const segs = path.split('.');
    const parent = parentOf(out, segs, false);
    const key = segs[segs.length - 1]!;
    if (!parent || !has(parent, key)) continue;
    if (Array.isArray(parent) && /^\d+$/.test(key)) parent.splice(Number(key), 1);
    else delete (parent as Record<string, unknown>)[key];
    changed.push(path);
  }
  for (const path of rw.mask) {
    const segs = path.split('.');
    const parent = parentOf(out, segs, false);
    const key = segs[segs.length - 1]!;
    if (!parent || !has(parent, key) || (parent as Record<string, unknown>)[key] === MASKED) continue;
    (parent as Record<string, unknown>)[key] = MASKED;
    changed.push(path);
  }
  return changed.length === 0 ? { arguments: args, changed } : { arguments: out, changed };
}

/** The top-level keys that differ between two argument objects (for a webhook that answered whole arguments). */
export function changedKeys(before: Readonly<Record<string, unknown>>, after: Readonly<Record<string, unknown>>): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].filter((k) => !has(after as Json, k) || !has(before as Json, k) || canonicalJson(before[k]) !== canonicalJson(after[k])).sort();
}
