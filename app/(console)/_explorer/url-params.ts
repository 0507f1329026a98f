/**
 * Reading an explorer's URL: each parameter against a zod schema, leniently (a hand-edited link never breaks the page;
 * what is not valid is left out and named, so the page can say which parts it ignored).
 */
import type { z } from 'zod';

/** An explorer's state read from its URL, and the parameters that were present but not valid, and were left out. */
export interface Parsed<S> {
  state: S;
  ignored: string[];
}

/**
 * A reader of URL parameters against a table of zod schemas: a blank or absent parameter is undefined, an invalid one
 * is undefined and its name added to `ignored`.
 */
export function paramReader<T extends Record<string, z.ZodType>>(params: URLSearchParams, fields: T, ignored: string[]) {
  return <F extends keyof T & string>(field: F): z.output<T[F]> | undefined => {
    const raw = params.get(field);
    if (raw === null || raw.trim() === '') return undefined;
    const parsed = fields[field]!.safeParse(raw);
    if (parsed.success) return parsed.data as z.output<T[F]>;
    ignored.push(field);
    return undefined;
  };
}

/** Sets each parameter that has a value, in the order given: undefined, null and '' are left out (0 is a value). */
export function setParams(p: URLSearchParams, values: Record<string, string | number | null | undefined>): URLSearchParams {
  for (const [k, v] of Object.entries(values)) if (v !== undefined && v !== null && v !== '') p.set(k, String(v));
  return p;
}

/** A state without its undefined and '' values: it says only what is set. */
export function withoutEmpty<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== '')) as T;
}

/** A Next.js `searchParams` object as URLSearchParams (the first value of a repeated parameter). */
export function toSearchParams(sp: Record<string, string | string[] | undefined>): URLSearchParams {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(sp)) {
    const one = Array.isArray(v) ? v[0] : v;
    if (one !== undefined) p.set(k, one);
  }
  return p;
}

/** "a", "a and b", "a, b and c": the filters of an empty view in a sentence. */
export const listWords = (words: readonly string[]): string =>
  words.length < 2 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;
