/**
 * MCP tool annotations as the policy reads them. An MCP server may say of each tool that it only reads
 * (`readOnlyHint`), may destroy (`destructiveHint`), may be repeated safely (`idempotentHint`) or reaches outside systems
 * (`openWorldHint`). Every hint is optional; the specification (the MCP schema's ToolAnnotations) gives the value of a
 * missing one, and it assumes the worst: a tool that says nothing may modify, may destroy, is not idempotent and reaches
 * an open world. `destructiveHint` and `idempotentHint` are meaningful only when `readOnlyHint` is false.
 *
 * Rules and gates match the effective values (`match.annotations`, a gate's `annotations`), and conditions see them as
 * `tool_annotations`. A call that did not come through the MCP gateway has no annotations at all: it matches no rule or
 * gate that names annotations, and its `tool_annotations` is an empty map. Pure: no I/O.
 */
import { z } from 'zod';
import type { ToolAnnotations } from './basics';

export const ANNOTATION_HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;
export type AnnotationHint = (typeof ANNOTATION_HINTS)[number];

/** Every hint with a value: what a tool's annotations mean once the specification's defaults are applied. */
export type EffectiveAnnotations = { readonly [K in AnnotationHint]: boolean };

/** The hints a rule or gate requires, with the value each must have (at least one). */
export type AnnotationRequirement = { readonly [K in AnnotationHint]?: boolean };

/** The value of one hint, the specification's default where the server declared none. */
export function effectiveHint(a: ToolAnnotations, hint: AnnotationHint): boolean {
  switch (hint) {
    case 'readOnlyHint':
      return a.readOnlyHint ?? false;
    // A read-only tool modifies nothing, so it destroys nothing: the declared value means something only when it is not.
    case 'destructiveHint':
      return a.readOnlyHint === true ? false : (a.destructiveHint ?? true);
    // Meaningful only when not read-only too, but "repeating it changes nothing" holds of a read-only tool whatever it
    // says, so the declared value is kept (false when none).
    case 'idempotentHint':
      return a.idempotentHint ?? false;
    case 'openWorldHint':
      return a.openWorldHint ?? true;
  }
}

/** The annotations with every hint filled in; undefined for a call that carries none (not through the MCP gateway). */
export function effectiveAnnotations(a: ToolAnnotations | undefined): EffectiveAnnotations | undefined {
  if (a === undefined) return undefined;
  return {
    readOnlyHint: effectiveHint(a, 'readOnlyHint'),
    destructiveHint: effectiveHint(a, 'destructiveHint'),
    idempotentHint: effectiveHint(a, 'idempotentHint'),
    openWorldHint: effectiveHint(a, 'openWorldHint'),
  };
}

/** The annotations a tool declares (a policy test's call, say): any of the hints, none required; unknown ones refused. */
export const toolAnnotationsSchema = z.strictObject({
  readOnlyHint: z.boolean().optional(),
  destructiveHint: z.boolean().optional(),
  idempotentHint: z.boolean().optional(),
  openWorldHint: z.boolean().optional(),
});

/**
 * `annotations:` of a policy rule's match or of a gate: the hints and the value each must have. Strict, so a misspelt
 * hint is a load error at its line and column rather than a rule that quietly matches more than it says.
 */
export const annotationRequirementSchema = toolAnnotationsSchema.refine((r) => ANNOTATION_HINTS.some((h) => r[h] !== undefined), {
  message: `annotations name at least one of ${ANNOTATION_HINTS.join(', ')}`,
});

/** A requirement compiled to the pairs to test, in a fixed order. */
export type AnnotationMatcher = readonly (readonly [AnnotationHint, boolean])[];

export function compileAnnotations(r: AnnotationRequirement): AnnotationMatcher {
  return Object.freeze(ANNOTATION_HINTS.filter((h) => r[h] !== undefined).map((h) => Object.freeze([h, r[h]!] as const)));
}

/** Does a call with these annotations meet the requirement? A call without annotations never does. */
export function annotationsMatch(m: AnnotationMatcher, a: ToolAnnotations | undefined): boolean {
  if (a === undefined) return false;
  for (let i = 0; i < m.length; i++) {
    const [hint, want] = m[i]!;
    if (effectiveHint(a, hint) !== want) return false;
  }
  return true;
}

/** The requirement in words, for /transparency: `destructiveHint`, `not readOnlyHint`, joined with "and". */
export function describeAnnotations(r: AnnotationRequirement): string {
  return ANNOTATION_HINTS.filter((h) => r[h] !== undefined)
    .map((h) => (r[h] ? h : `not ${h}`))
    .join(' and ');
}

const NO_ANNOTATIONS: Readonly<Record<string, boolean>> = Object.freeze({});

/**
 * What a condition sees as `tool_annotations`: the effective hints, or an empty map for a call without annotations, so
 * that `has(tool_annotations.destructiveHint) && tool_annotations.destructiveHint` holds only for MCP calls.
 */
export function annotationVars(a: ToolAnnotations | undefined): Readonly<Record<string, boolean>> {
  return effectiveAnnotations(a) ?? NO_ANNOTATIONS;
}
