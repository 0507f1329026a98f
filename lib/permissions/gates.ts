/**
 * Human-approval gates: which tool calls need a person's approval, how many people, within how long.
 *
 * A gate is a requirement, not a rule in the contest (the invariant `hitl_gates`): when the winning rule of a gated call
 * is ALLOW and this exact call has no unused approval, the engine answers ASK `hitl:<gate>`. Gates come from code
 * (`requireApproval(...)` on a tool definition) and from `config/gates.yaml`; this module merges both into one
 * immutable GateSet. Pure: text in, a compiled set (or ConfigFileError with file:line:column) out.
 *
 * A gate covers tools by name (`tools`), by MCP annotations (`annotations`: every tool whose effective annotations
 * match, e.g. every destructive tool of every MCP server), or both (the named tools, when their annotations match).
 * One gate per call: the gate that names the tool is tried first, then the gates that name only annotations, in the
 * order they are declared; the first whose annotations and `when` hold is the call's gate.
 */
import { z } from 'zod';
import { BoundedCache } from './bounded-cache';
import { compileCondition, conditionSchema, type Condition } from './condition';
import { compileNames, isGlob, matchesName, type NameMatcher } from './glob';
import { ConfigFileError, parseYamlConfigLocated } from './yaml-config';
import { annotationRequirementSchema, annotationsMatch, compileAnnotations, type AnnotationMatcher, type AnnotationRequirement } from './annotations';
import { ROLES, type Attribution, type Role, type ToolAnnotations } from './basics';
import { brand, isError } from '@/lib/errors';

export const GATE_RISKS = ['low', 'medium', 'high'] as const;
export type GateRisk = (typeof GATE_RISKS)[number];

export const DEFAULT_GATE_TTL_SECONDS = 24 * 60 * 60;
export const DEFAULT_APPROVER_ROLES: readonly Role[] = Object.freeze(['operator', 'admin'] as Role[]);

/** A gate as declared, in code or in the file. */
export interface GateSpec {
  readonly id: string;
  /** tool names or globs (`promote_*`); empty for a gate that covers tools by their annotations only */
  readonly tools: readonly string[];
  /** the MCP annotations a call's tool must have (effective values, annotations.ts); calls without annotations never */
  readonly annotations?: AnnotationRequirement;
  /** optional CEL condition: only the calls for which it is true are gated */
  readonly when?: string;
  readonly approvers: { readonly roles: readonly Role[]; readonly count: number };
  readonly expiresInSeconds: number;
  readonly risk: GateRisk;
  /** why the gate exists, in plain words, shown to the operator */
  readonly description?: string;
  /** where it was declared: `code`, `config/gates.yaml:12:5`, or `code + config/gates.yaml:12:5` (configured in the file) */
  readonly origin: string;
}

export interface CompiledGate extends GateSpec {
  readonly attribution: Attribution;
  /** `hitl:<id>`, the rule_source of its rules in the audit trail */
  readonly ruleSource: string;
  readonly matcher: NameMatcher;
  readonly annotationMatcher?: AnnotationMatcher;
  readonly condition?: Condition;
}

export interface GateSet {
  readonly gates: readonly CompiledGate[];
  /**
   * tool -> the gate that names it (by name or glob), before its annotations and condition; memoised lookups (bounded).
   * Only gates that name tools are here: a gate by annotations is tested per call (two servers may offer one tool name
   * with different annotations, and a call that did not come through the MCP gateway has none).
   */
  readonly byTool: BoundedCache<string, CompiledGate | null>;
  /** the gates that name no tool, only annotations, in the order they were declared */
  readonly byAnnotations: readonly CompiledGate[];
}

export const GATE_ID = /^[a-z][a-z0-9_-]*$/;

/**
 * The most tools whose gate (or none) is remembered per gate set: about 1 MB at most (measured: some 110 bytes a tool).
 * Tool names come from callers: the least recently used are forgotten and looked up again among the gates.
 */
export const MAX_GATE_MEMO = 8_192;

// ---------------------------------------------------------------------------------------------------------------
// The file
// ---------------------------------------------------------------------------------------------------------------

const DURATION = /^(\d+(?:\.\d+)?)\s*(s|m|h|d)$/;
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** `4h`, `30m`, `2d`, `90s` or a number of seconds. */
export const durationSchema = z.union([z.number().positive(), z.string()]).transform((v, ctx) => {
  if (typeof v === 'number') return v;
  const m = DURATION.exec(v.trim());
  const seconds = m ? Number(m[1]) * UNIT_SECONDS[m[2]!]! : NaN;
  if (!(seconds > 0)) {
    ctx.addIssue({ code: 'custom', message: `"${v}" is not a duration: write a number with s, m, h or d (e.g. 4h, 30m)` });
    return z.NEVER;
  }
  return seconds;
});

const toolPattern = z.string().regex(/^[A-Za-z0-9_*?.-]+$/, 'a tool name or glob (letters, digits, "_", "-", "*")');

export const gateEntrySchema = z
  .strictObject({
    id: z.string().regex(GATE_ID, 'id is lower-case letters, digits, "_" or "-" (it becomes rule_source hitl:<id>)'),
    tools: z
      .union([toolPattern, z.array(toolPattern).min(1, 'a gate names at least one tool')])
      .transform((t) => (Array.isArray(t) ? t : [t]))
      .optional(),
    /** the MCP annotations of the tools it covers: alone, every tool whose annotations match; with `tools`, those of them */
    annotations: annotationRequirementSchema.optional(),
    when: conditionSchema.optional(),
    approvers: z
      .strictObject({
        roles: z.array(z.enum(ROLES)).min(1).default([...DEFAULT_APPROVER_ROLES]),
        count: z.number().int().min(1, 'count is at least 1').max(5, 'count is at most 5').default(1),
      })
      .default({ roles: [...DEFAULT_APPROVER_ROLES], count: 1 }),
    expires_in: durationSchema.default(DEFAULT_GATE_TTL_SECONDS),
    risk: z.enum(GATE_RISKS, { error: 'risk is low, medium or high' }).default('medium'),
    description: z.string().trim().min(1).max(500).optional(),
  })
  .refine((g) => g.tools !== undefined || g.annotations !== undefined, {
    message: 'a gate names the tools it covers (tools), their MCP annotations (annotations), or both',
  });

export const gatesFileSchema = z.strictObject({
  version: z.literal(1).default(1),
  gates: z.array(gateEntrySchema).nullable().default([]),
});

/** The gates a file declares, each with its origin `file:line:column` (not merged with anything). */
export function parseGateSpecs(text: string, file = 'gates.yaml'): GateSpec[] {
  const { data, at } = parseYamlConfigLocated(text, file, gatesFileSchema);
  return (data.gates ?? []).map((g, i) => {
    const pos = at(['gates', i]);
    return {
      id: g.id,
      tools: g.tools ?? [],
      ...(g.annotations ? { annotations: g.annotations } : {}),
      when: g.when,
      approvers: { roles: g.approvers.roles, count: g.approvers.count },
      expiresInSeconds: g.expires_in,
      risk: g.risk,
      description: g.description,
      origin: `${file}:${pos.line}:${pos.column}`,
    };
  });
}

/**
 * Parse config/gates.yaml and merge it with the gates declared in code. Throws ConfigFileError (file:line:column)
 * for a malformed file, a bad condition, or a tool gated twice.
 */
export function parseGates(text: string, file = 'gates.yaml', codeGates: readonly GateSpec[] = [], check?: (specs: readonly GateSpec[]) => void): GateSet {
  const specs = parseGateSpecs(text, file);
  check?.(specs);
  try {
    return mergeGates(codeGates, specs);
  } catch (error) {
    if (isError(error, GateConflict)) {
      const where = /:(\d+):(\d+)$/.exec(error.origin);
      throw new ConfigFileError(file, [{ line: where ? Number(where[1]) : 1, column: where ? Number(where[2]) : 1, path: 'gates', message: error.message }]);
    }
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Merging and lookup
// ---------------------------------------------------------------------------------------------------------------

export class GateConflict extends Error {
  static readonly kind = 'GateConflict';
  constructor(
    message: string,
    /** where the second declaration is */
    readonly origin: string,
  ) {
    super(message);
    brand(this, GateConflict);
  }
}

function compileGate(spec: GateSpec): CompiledGate {
  return {
    ...spec,
    attribution: Object.freeze({ source: 'hitl', id: spec.id }),
    ruleSource: `hitl:${spec.id}`,
    matcher: compileNames(spec.tools),
    annotationMatcher: spec.annotations === undefined ? undefined : compileAnnotations(spec.annotations),
    condition: spec.when === undefined ? undefined : compileCondition(spec.when),
  };
}

/**
 * Do two gates' tool patterns cover a common tool? Exact names are tested against the other's globs; equal globs and a
 * catch-all overlap. Two different globs that happen to share names (`deploy_*`, `*_serving`) are not detected here: at
 * run time the gate declared first covers such a tool. By name only: a gate that names no tool (annotations only)
 * overlaps nothing here; at run time it comes after the gate that names the tool.
 */
function overlap(a: GateSpec, b: GateSpec): string | undefined {
  if (a.tools.length === 0 || b.tools.length === 0) return undefined;
  const ma = compileNames(a.tools);
  const mb = compileNames(b.tools);
  if (ma.any) return b.tools[0];
  if (mb.any) return a.tools[0];
  for (const t of a.tools) if (!isGlob(t) ? matchesName(mb, t) : b.tools.includes(t) || t === '*' || t === '**') return t;
  for (const t of b.tools) if (!isGlob(t) && matchesName(ma, t)) return t;
  return undefined;
}

/**
 * One gate per tool. A file entry with the same id as a code declaration configures that gate (its tools are added,
 * its settings win); a tool covered by two different gates is a conflict.
 */
export function mergeGates(codeGates: readonly GateSpec[], fileGates: readonly GateSpec[]): GateSet {
  const byId = new Map<string, GateSpec>();
  for (const g of codeGates) {
    const prev = byId.get(g.id);
    byId.set(g.id, prev ? { ...prev, tools: [...new Set([...prev.tools, ...g.tools])] } : g);
  }
  const seenInFile = new Set<string>();
  for (const g of fileGates) {
    if (seenInFile.has(g.id)) throw new GateConflict(`gate "${g.id}" is declared twice in the file`, g.origin);
    seenInFile.add(g.id);
    const code = byId.get(g.id);
    if (code && g.annotations) {
      // The code gate covers its tools on every call; requiring annotations would drop it for calls without them.
      throw new GateConflict(`gate "${g.id}" is declared in code for ${code.tools.join(', ')}: an entry configuring it cannot add annotations (declare a gate of its own)`, g.origin);
    }
    byId.set(g.id, code ? { ...g, tools: [...new Set([...code.tools, ...g.tools])], origin: `code + ${g.origin}` } : g);
  }
  const specs = [...byId.values()];
  for (const g of specs) {
    // A gate by annotations alone has no tools; one with neither would be read as covering every call, or none.
    if (g.tools.length === 0 && g.annotations === undefined) throw new GateConflict(`gate "${g.id}" covers no tool: it names tools, annotations, or both`, g.origin);
  }
  for (let i = 0; i < specs.length; i++) {
    for (let j = i + 1; j < specs.length; j++) {
      const a = specs[i]!;
      const b = specs[j]!;
      const tool = overlap(a, b);
      if (tool !== undefined) {
        const later = b.origin === 'code' ? a : b;
        throw new GateConflict(
          `tool "${tool}" is gated by both "${a.id}" (${a.origin}) and "${b.id}" (${b.origin}); a tool has one gate`,
          later.origin,
        );
      }
    }
  }
  const gates = specs.map(compileGate);
  return { gates, byTool: new BoundedCache(MAX_GATE_MEMO), byAnnotations: Object.freeze(gates.filter((g) => g.tools.length === 0)) };
}

export const EMPTY_GATES: GateSet = mergeGates([], []);

/** The gate that names this tool (by name or glob), before its annotations and its condition are tested. */
export function gateOfTool(set: GateSet, tool: string): CompiledGate | undefined {
  const hit = set.byTool.get(tool);
  if (hit !== undefined) return hit ?? undefined;
  let found: CompiledGate | null = null;
  for (const g of set.gates) {
    if (matchesName(g.matcher, tool)) {
      found = g;
      break;
    }
  }
  set.byTool.set(tool, found);
  return found ?? undefined;
}

/**
 * The gates that may cover a call of this tool with these annotations, in the order the engine tries them (the gate
 * naming the tool, then the gates by annotations), their annotations tested, their conditions not: a tool list can say
 * that a tool needs a person's approval before any call is made.
 */
export function gatesOfCall(set: GateSet, tool: string, annotations: ToolAnnotations | undefined): CompiledGate[] {
  const out: CompiledGate[] = [];
  const named = gateOfTool(set, tool);
  const fits = (g: CompiledGate) => g.annotationMatcher === undefined || annotationsMatch(g.annotationMatcher, annotations);
  if (named !== undefined && fits(named)) out.push(named);
  for (const g of set.byAnnotations) if (fits(g)) out.push(g);
  return out;
}
