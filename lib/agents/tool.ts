/**
 * Tool definitions: a name, a zod schema for the arguments and, where a human must approve each run, the gate,
 * declared in the same place as the tool: `tool({ name, schema, approval: requireApproval("deploy") }, fn)`.
 */
import type { z } from 'zod';
import type { GateDeclaration } from '@/lib/approvals/gates';

export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly description: string;
  readonly schema: S;
  readonly approval?: GateDeclaration;
  readonly run: (args: z.output<S>) => unknown;
}

export function tool<S extends z.ZodType>(
  spec: { name: string; description?: string; schema: S; approval?: GateDeclaration },
  run: (args: z.output<S>) => unknown,
): ToolDefinition<S> {
  if (!/^[a-z][a-z0-9_]*$/.test(spec.name)) throw new Error(`Tool name "${spec.name}" must be snake_case.`);
  return Object.freeze({ name: spec.name, description: spec.description ?? '', schema: spec.schema, approval: spec.approval, run });
}
