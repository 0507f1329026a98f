/**
 * The recorder port: the one way anything reaches the audit trail. Defined beside the engine (which records every
 * decision through it), implemented in lib/audit (which owns the tables, the masking and the hash chain).
 *
 * One typed union of events. Denied decisions become rows of permission_denials (the specification's table); every
 * other event becomes a row of security_events. A recorder that cannot write throws: the caller fails closed (a
 * decision is never acknowledged without its row, as Vault refuses a request it cannot audit).
 */
import type { CheckResult, HttpContext, PermissionContext, Role, ToolContext } from './types';
import { messageOf, brand } from '@/lib/errors';

/** A decision of the engine: a tool call or an HTTP request, with the context it was made for. */
export interface DecisionEvent {
  kind: 'tool' | 'http';
  context: PermissionContext & (ToolContext | HttpContext);
  result: CheckResult;
  /** client address, when known (HTTP) */
  ip?: string;
  /**
   * The console's own background refresh of a signed-in person (a poll, not a choice anyone made): an allowed or asked
   * decision is then not logged even with decision_log_all on. A DENY is recorded whatever this says.
   */
  background?: boolean;
  /** the policy revision of the snapshot the decision was taken under (absent: the recorder names the one in force) */
  revision?: string;
}

/** What the caller of a decision knows beyond its input: where it came from, and whether nobody asked for it. */
export type DecisionMeta = Pick<DecisionEvent, 'ip' | 'background'>;

export type ApprovalEventType =
  | 'approval.requested'
  | 'approval.approved'
  | 'approval.rejected'
  | 'approval.expired'
  | 'approval.consumed'
  | 'approval.refused'
  // an approval the approvals table says is approved but the chained trail does not hold: not used
  | 'approval.unverified';
export type AuthEventType =
  | 'auth.login.succeeded'
  | 'auth.login.failed'
  | 'auth.locked'
  | 'auth.unlocked'
  | 'auth.logout'
  | 'auth.sso.succeeded'
  | 'auth.sso.refused'
  | 'auth.break_glass'
  // an access token of an identity provider refused (lib/oauth/agent-tokens.ts): the reason, the issuer, the client
  | 'auth.token.refused'
  // a user, token or session row whose seal does not verify (written behind the product's back): not used
  | 'auth.unverified'
  // the rows of a database from before seals, sealed once when the installation's record of it was made
  | 'auth.sealed'
  | 'user.created'
  | 'user.role_changed'
  | 'token.created'
  | 'token.revoked'
  // the lifecycle of tokens (issue 27): a rotation, an expiry the sweeper saw, a token disabled for disuse
  | 'token.rotated'
  | 'token.expired'
  | 'token.disabled';
export type ConfigEventType =
  | 'config.loaded'
  | 'config.refused'
  | 'flag.changed'
  | 'flag.refused'
  | 'profile.switched'
  // policy change control (issue 28): a proposal, a vote, a refused act, an activation, a rollback, a file on disk
  // that differs from the rules in force, an activation whose evidence is missing from the trail
  | 'policy.proposed'
  | 'policy.voted'
  | 'policy.rejected'
  | 'policy.withdrawn'
  | 'policy.approved'
  | 'policy.activated'
  | 'policy.rolled_back'
  | 'policy.refused'
  | 'policy.unverified'
  | 'config.drift'
  // the MCP gateway's pins of upstream tool definitions (issue 42): a first sight pinned, a new tool held by a profile,
  // a definition that differs from its pin, an operator's acceptance, a tool name refused (it could speak for another)
  | 'mcp.tool.pinned'
  | 'mcp.tool.held'
  | 'mcp.tool.changed'
  | 'mcp.tool.accepted'
  | 'mcp.tool.refused';
export type AuditReadEventType =
  | 'audit.queried'
  | 'audit.exported'
  | 'audit.verified'
  | 'audit.explained'
  | 'audit.checkpointed'
  | 'audit.checkpoint_refused'
  | 'audit.report_generated'
  | 'retention.archived';
export type SystemEventType = 'server.started' | 'server.stopped';
export type HookEventType = 'hook.failed';

export type Outcome = 'succeeded' | 'failed' | 'refused';

interface EventBase {
  /** who acted: a user name, `agent:<name>`, `system`, or `cli:<os user>` */
  actor: string;
  actorRole?: Role | null;
  outcome: Outcome;
  /** what it was about: an approval id, a user, a file, a flag, a filter */
  target?: string | null;
  detail?: Record<string, unknown>;
  ip?: string | null;
  /** joins the event to a decision (an approval's request, a consumed approval's run) */
  decisionId?: string | null;
}

export type SecurityEvent =
  | (EventBase & { kind: 'approval'; type: ApprovalEventType })
  | (EventBase & { kind: 'auth'; type: AuthEventType })
  | (EventBase & { kind: 'config'; type: ConfigEventType })
  | (EventBase & { kind: 'audit'; type: AuditReadEventType })
  | (EventBase & { kind: 'system'; type: SystemEventType })
  | (EventBase & { kind: 'hook'; type: HookEventType });

export type AuditEvent = DecisionEvent | SecurityEvent;

/** Where a recorded event landed. */
export interface Recorded {
  table: 'permission_denials' | 'security_events';
  id: number;
}

export interface Recorder {
  /**
   * Write the event durably (committed before this returns, or before the promise resolves with an asynchronous
   * store) and return where; `undefined` when the event is not recorded by configuration (an allowed decision while
   * decision_log_all is off). Throws (or rejects) when it cannot write.
   */
  record(event: AuditEvent): Recorded | undefined | Promise<Recorded | undefined>;
}

/** Thrown by the engine when the recorder failed: the decision is refused, never acknowledged without its row. */
export class AuditUnavailable extends Error {
  static readonly kind = 'AuditUnavailable';
  readonly code = 'AUDIT_UNAVAILABLE';
  constructor(failure: unknown) {
    super(`The decision could not be recorded, so it is refused: ${messageOf(failure)}`, { cause: failure });
    brand(this, AuditUnavailable);
  }
}
