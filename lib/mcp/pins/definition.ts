/**
 * An upstream MCP tool's definition as it is pinned (issue 42): what a model reads about the tool and what the policy
 * decides on — its name, title, description, input and output schema and annotations — as canonical JSON (object keys
 * sorted at every depth, absent fields left out: lib/approvals/canonical.ts), and the SHA-256 of that text. The same
 * definition always gives the same hash, whatever order the upstream wrote its keys in; any change to any of these
 * fields gives another. What the gateway adds to a listed tool (its namespaced name, the approval note) is not part of
 * it, nor what only tells the client how to call (`execution`, `_meta`, icons).
 *
 * Pure: a definition in, its text, hash and a readable difference out.
 */
import { createHash } from 'node:crypto';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { canonicalJson } from '@/lib/approvals/canonical';
import { lineDiff, type DiffLine } from '@/lib/text/line-diff';

/** The fields of a tool that are pinned. */
export const PINNED_FIELDS = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations'] as const;

export interface PinnedDefinition {
  /** the canonical JSON of the pinned fields */
  json: string;
  /** hex SHA-256 of `json` */
  sha256: string;
}

/** The canonical definition of an upstream tool and its hash. */
export function definitionOf(tool: Pick<Tool, (typeof PINNED_FIELDS)[number]>): PinnedDefinition {
  const picked: Record<string, unknown> = {};
  for (const f of PINNED_FIELDS) if (tool[f] !== undefined) picked[f] = tool[f];
  const json = canonicalJson(picked);
  return { json, sha256: sha256Of(json) };
}

export function sha256Of(json: string): string {
  return createHash('sha256').update(json).digest('hex');
}

/** A SHA-256 as the gateway spells it. */
export const SHA256 = /^[0-9a-f]{64}$/;

/** The canonical JSON laid out one key per line (keys stay sorted), for people to read and for a line diff. */
export function readableDefinition(json: string): string {
  try {
    return JSON.stringify(JSON.parse(json), null, 2);
  } catch {
    return json;
  }
}

/** The difference between two canonical definitions (null: none before), line by line. */
export function definitionDiff(before: string | null, after: string): DiffLine[] {
  return lineDiff(before === null ? null : readableDefinition(before), readableDefinition(after));
}

/** Only the changed lines, `- old` and `+ new`, at most `max` of them: what an event keeps of a difference. */
export function changedLines(before: string | null, after: string, max = 40): string[] {
  const lines = definitionDiff(before, after).filter((l) => l.kind !== 'same');
  const out = lines.slice(0, max).map((l) => `${l.kind === 'added' ? '+' : '-'} ${l.text.trim()}`.slice(0, 300));
  if (lines.length > max) out.push(`… ${lines.length - max} more changed lines`);
  return out;
}
