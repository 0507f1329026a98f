/**
 * Gates declared in code. A tool declares its gate where it is defined: `requireApproval("deploy")`. The application
 * merges these with config/gates.yaml (lib/permissions/gates.ts): one gate per tool, a file entry with the same id
 * configures the code's gate, a tool gated twice is a load error.
 */
import {
  DEFAULT_APPROVER_ROLES,
  DEFAULT_GATE_TTL_SECONDS,
  GATE_ID,
  type GateRisk,
  type GateSpec,
} from '@/lib/permissions/gates';
import type { Role } from '@/lib/permissions';

export const DEFAULT_APPROVAL_TTL_SECONDS = DEFAULT_GATE_TTL_SECONDS;

/** A tool's gate as declared in code: its id, and the settings a GateSpec holds. */
export type GateDeclaration = { readonly gate: string } & Pick<GateSpec, 'expiresInSeconds' | 'approvers' | 'risk' | 'description'>;

export interface GateOptions {
  expiresInSeconds?: number;
  approvers?: { roles?: readonly Role[]; count?: number };
  risk?: GateRisk;
  description?: string;
}

/** Declare that a tool needs a human approval of type `gate` before each run. */
export function requireApproval(gate: string, options: GateOptions = {}): GateDeclaration {
  if (!GATE_ID.test(gate)) throw new Error(`Gate type "${gate}" must be lower-case letters, digits, "_" or "-".`);
  const expiresInSeconds = options.expiresInSeconds ?? DEFAULT_APPROVAL_TTL_SECONDS;
  if (!(expiresInSeconds > 0)) throw new Error('An approval must expire after a positive number of seconds.');
  const count = options.approvers?.count ?? 1;
  if (!Number.isInteger(count) || count < 1 || count > 5) throw new Error('A gate needs between 1 and 5 approvals.');
  return Object.freeze({
    gate,
    expiresInSeconds,
    approvers: Object.freeze({ roles: options.approvers?.roles ?? DEFAULT_APPROVER_ROLES, count }),
    risk: options.risk ?? 'medium',
    description: options.description,
  });
}

/** The code declarations of a set of tools, as gate specs to merge with the file. */
export function codeGateSpecs(tools: readonly { name: string; approval?: GateDeclaration }[]): GateSpec[] {
  const out: GateSpec[] = [];
  for (const t of tools) {
    const d = t.approval;
    if (!d) continue;
    out.push({
      id: d.gate,
      tools: [t.name],
      approvers: d.approvers,
      expiresInSeconds: d.expiresInSeconds,
      risk: d.risk,
      description: d.description,
      origin: 'code',
    });
  }
  return out;
}
