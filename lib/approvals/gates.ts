/**
 * HITL gate declarations. A tool declares its gate where it is defined: `requireApproval("deploy")`. The registry maps
 * tool name to gate; the HITL rule source reads it, the approval store reads the expiry.
 */

export const DEFAULT_APPROVAL_TTL_SECONDS = 24 * 60 * 60;

export interface GateDeclaration {
  readonly gate: string;
  readonly expiresInSeconds: number;
}

/** Declare that a tool needs a human approval of type `gate` before each run. */
export function requireApproval(gate: string, options: { expiresInSeconds?: number } = {}): GateDeclaration {
  if (!/^[a-z][a-z0-9_-]*$/.test(gate)) throw new Error(`Gate type "${gate}" must be lower-case letters, digits, "_" or "-".`);
  const expiresInSeconds = options.expiresInSeconds ?? DEFAULT_APPROVAL_TTL_SECONDS;
  if (!(expiresInSeconds > 0)) throw new Error('An approval must expire after a positive number of seconds.');
  return Object.freeze({ gate, expiresInSeconds });
}

export class GateRegistry {
  private readonly byTool = new Map<string, GateDeclaration>();
  private readonly gateOfTool = new Map<string, string>();

  declare(tool: string, declaration: GateDeclaration): void {
    const existing = this.byTool.get(tool);
    if (existing && existing.gate !== declaration.gate) {
      throw new Error(`Tool "${tool}" is already gated by "${existing.gate}"; it cannot also be gated by "${declaration.gate}".`);
    }
    this.byTool.set(tool, declaration);
    this.gateOfTool.set(tool, declaration.gate);
  }

  get(tool: string): GateDeclaration | undefined {
    return this.byTool.get(tool);
  }

  /** tool name -> gate type, for the HITL source */
  gates(): ReadonlyMap<string, string> {
    return this.gateOfTool;
  }
}
