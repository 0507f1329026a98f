/**
 * YAML configuration files validated with zod, every problem reported with file, line and column.
 * Pure: text in, typed data out (or ConfigFileError).
 */
import { isMap, isScalar, LineCounter, parseDocument, type Document } from 'yaml';
import { z } from 'zod';
import { brand } from '@/lib/errors';

export interface ConfigIssue {
  line: number;
  column: number;
  /** the dotted path of the offending value, e.g. rules.3.priority */
  path: string;
  message: string;
}

export class ConfigFileError extends Error {
  static readonly kind = 'ConfigFileError';
  readonly code = 'CONFIG_INVALID';
  constructor(
    readonly file: string,
    readonly issues: ConfigIssue[],
  ) {
    super(issues.map((i) => `${file}:${i.line}:${i.column}: ${i.path ? `${i.path}: ` : ''}${i.message}`).join('\n'));
    brand(this, ConfigFileError);
  }
}

/**
 * A file's list of entries with ids (rules, hooks, providers): an empty list may be written as nothing, and an id
 * written a second time is refused there.
 */
export function idList<E extends z.ZodType<{ id: string }>>(entry: E, noun: string) {
  return z
    .array(entry)
    .superRefine((list, ctx) => {
      const seen = new Set<string>();
      list.forEach((e, i) => {
        if (seen.has(e.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `duplicate ${noun} id "${e.id}"` });
        seen.add(e.id);
      });
    })
    .nullable()
    .default([]);
}

type Ranged = { range?: [number, number, number] | null };

/** The key node of `path` (for an invalid map key), found in its parent map. */
function keyNode(doc: Document, path: readonly PropertyKey[]): Ranged | undefined {
  const parent = doc.getIn(path.slice(0, -1) as (string | number)[], true);
  const last = path[path.length - 1];
  if (!isMap(parent)) return undefined;
  const pair = parent.items.find((p) => isScalar(p.key) && p.key.value === last);
  return pair && isScalar(pair.key) ? (pair.key as Ranged) : undefined;
}

function positionOf(doc: Document, lines: LineCounter, path: readonly PropertyKey[], atKey = false): { line: number; column: number } {
  const key = atKey ? keyNode(doc, path) : undefined;
  if (key?.range) {
    const pos = lines.linePos(key.range[0]);
    return { line: pos.line, column: pos.col };
  }
  // Walk up the path until a node exists: a missing key is reported where its parent starts.
  for (let n = path.length; n >= 0; n--) {
    const node = doc.getIn(path.slice(0, n) as (string | number)[], true) as { range?: [number, number, number] } | undefined;
    if (node && typeof node === 'object' && node.range) {
      const pos = lines.linePos(node.range[0]);
      return { line: pos.line, column: pos.col };
    }
  }
  return { line: 1, column: 1 };
}

export function parseYamlConfig<S extends z.ZodType>(text: string, file: string, schema: S): z.output<S> {
  return parseYamlConfigLocated(text, file, schema).data;
}

/** parseYamlConfig, also answering where a value was written (for messages that point at one entry). */
export function parseYamlConfigLocated<S extends z.ZodType>(
  text: string,
  file: string,
  schema: S,
): { data: z.output<S>; at(path: readonly (string | number)[]): { line: number; column: number } } {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    throw new ConfigFileError(
      file,
      doc.errors.map((e) => {
        const pos = e.linePos?.[0] ?? lines.linePos(e.pos[0]);
        return { line: pos.line, column: pos.col, path: '', message: e.message.split('\n')[0] ?? e.message };
      }),
    );
  }
  const parsed = schema.safeParse(doc.toJS() ?? {});
  if (!parsed.success) {
    throw new ConfigFileError(
      file,
      parsed.error.issues.map((issue) => ({
        // An unknown key is reported where that key is written, not where its map starts.
        ...(issue.code === 'unrecognized_keys' && issue.keys.length > 0
          ? positionOf(doc, lines, [...issue.path, issue.keys[0]!], true)
          : positionOf(doc, lines, issue.path, issue.code === 'invalid_key')),
        path: issue.path.join('.'),
        message: issue.message,
      })),
    );
  }
  return { data: parsed.data, at: (path) => positionOf(doc, lines, path) };
}
