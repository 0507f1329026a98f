/**
 * Argument rewrites of hooks: set, remove or mask fields by dotted path (`bcc`, `payment.card`, `recipients.0`).
 * Pure: the arguments are copied, never changed in place, and the paths that really changed are reported.
 *
 * A path walks own fields of plain objects and indexes of arrays, nothing else: `__proto__`, `constructor` and
 * `prototype` are refused wherever a path comes from (hooks.yaml, a webhook's or a program's answer), a value that is
 * not an object or an array is never replaced to make room for a path through it, and an array is only indexed
 * (an index at most its length: set appends, it never pads).
 */
import { canonicalJson } from '@/lib/approvals/canonical';

/** A hook's rewrite of a call's arguments: fields set, removed and masked, by path. */
export interface Rewrite {
  set: readonly (readonly [path: string, value: unknown])[];
  remove: readonly string[];
  mask: readonly string[];
}
export const MASKED = '[MASKED]';

/** Segments a path may never name: they reach the prototypes of every object of the process. */
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

/** A valid argument path: keys and indexes separated by "." (checked wherever a path comes from). */
export const ARG_PATH = /^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/;

/** Why a path cannot be used, or undefined when it can. */
export function pathProblem(path: string): string | undefined {
  if (!ARG_PATH.test(path)) return `"${path}" is not an argument path (keys separated by ".", e.g. payment.card)`;
  const bad = path.split('.').find((s) => FORBIDDEN.has(s));
  return bad ? `"${path}" names "${bad}", which no path may name` : undefined;
}

type Json = Record<string, unknown> | unknown[];

function isContainer(v: unknown): v is Json {
  return v !== null && typeof v === 'object';
}

const has = (o: Json, k: string) => Object.prototype.hasOwnProperty.call(o, k);
const isIndex = (k: string) => /^(0|[1-9]\d*)$/.test(k);

/** The value under `key` of a container, if it has it as its own. */
function child(node: Json, key: string): unknown {
  if (Array.isArray(node)) return isIndex(key) ? node[Number(key)] : undefined;
  return has(node, key) ? node[key] : undefined;
}

/**
 * The container that holds the last segment of `segs`. With `create`, missing objects along the way are created; a
 * value in the way that is not a container (a string, say) stops the walk rather than being replaced.
 */
function parentOf(root: Record<string, unknown>, segs: readonly string[], create: boolean): Json | undefined {
  let node: Json = root;
  for (let i = 0; i < segs.length - 1; i++) {
    const key = segs[i]!;
    const next = child(node, key);
    if (isContainer(next)) {
      node = next;
      continue;
    }
    if (!create || next !== undefined || Array.isArray(node)) return undefined;
    const made: Record<string, unknown> = {};
    node[key] = made;
    node = made;
  }
  return node;
}

/** Can `key` be written in `parent`: any key of an object; an index of an array up to its length. */
function writable(parent: Json, key: string): boolean {
  return Array.isArray(parent) ? isIndex(key) && Number(key) <= parent.length : true;
}

/** Apply a rewrite. Returns the same object when nothing changed, else a copy and the changed paths. */
export function applyRewrite(args: Readonly<Record<string, unknown>>, rw: Rewrite): { arguments: Readonly<Record<string, unknown>>; changed: string[] } {
  const usable = (p: string) => pathProblem(p) === undefined;
  const out = structuredClone(args) as Record<string, unknown>;
  // The container that holds a path's last segment, and that segment.
  const locate = (segs: readonly string[], create: boolean) => ({ parent: parentOf(out, segs, create), key: segs[segs.length - 1]! });
  const changed: string[] = [];
  for (const [path, value] of rw.set) {
    if (!usable(path)) continue;
    const { parent, key } = locate(path.split('.'), true);
    if (!parent || !writable(parent, key)) continue;
    if (child(parent, key) !== undefined && canonicalJson(child(parent, key)) === canonicalJson(value)) continue;
    (parent as Record<string, unknown>)[key] = structuredClone(value);
    changed.push(path);
  }
  // Removals from the highest index down, so that removing list.0 and list.1 removes the first two elements.
  const removals = rw.remove.filter(usable).map((path) => ({ path, segs: path.split('.') }));
  removals.sort((a, b) => {
    const ka = a.segs[a.segs.length - 1]!;
    const kb = b.segs[b.segs.length - 1]!;
    return isIndex(ka) && isIndex(kb) ? Number(kb) - Number(ka) : 0;
  });
  for (const { path, segs } of removals) {
    const { parent, key } = locate(segs, false);
    if (!parent) continue;
    if (Array.isArray(parent)) {
      if (!isIndex(key) || Number(key) >= parent.length) continue;
      parent.splice(Number(key), 1);
    } else {
      if (!has(parent, key)) continue;
      delete parent[key];
    }
    changed.push(path);
  }
  for (const path of rw.mask) {
    if (!usable(path)) continue;
    const { parent, key } = locate(path.split('.'), false);
    const current = parent ? child(parent, key) : undefined;
    if (!parent || current === undefined || current === MASKED) continue;
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
