/**
 * The lifecycle-hook port: what the engine asks of the hooks (config/hooks.yaml, registered TypeScript hooks) around a
 * tool call. Defined beside the engine, implemented in lib/hooks, so the engine stays free of I/O.
 *
 * The engine runs the `before_tool_call` pass between two evaluations: it evaluates the call, and only an ALLOW or an
 * ASK goes through the hooks (a DENY is final, so no webhook hears about a call that was refused anyway); the hooks may
 * block it or rewrite its arguments; the decision is then made again on the arguments that came out, inside the
 * transaction that records it. A rewrite can therefore never carry a call past a rule: the rewritten call is decided,
 * approved, run and recorded as if the agent had sent it.
 *
 * The pass is synchronous when no hook of the call has to wait (block, rewrite, rate_limit, TypeScript hooks); webhook
 * and shell hooks make it asynchronous, and then `decide()` refuses the call and `decideAsync()` waits for them.
 */
import type { CheckResult, PermissionContext, ToolContext } from './types';
import { brand } from '@/lib/errors';
import type { HookOutcome } from './basics';

export { HOOK_ACTIONS, HOOK_EVENTS, type HookAction, type HookEventName, type HookOutcome } from './basics';

/** The result of a `before_tool_call` pass. */
export interface HookPass {
  /** the arguments after every rewrite (the same object when nothing changed them) */
  arguments: Readonly<Record<string, unknown>>;
  outcomes: HookOutcome[];
  /** the hook that blocked the call, if one did (the pass stops there) */
  blocked?: { hook: string; reason: string };
  /** the SHA-256 of the canonical original arguments, when a hook changed them (the audit row keeps it) */
  originalArgumentsSha256?: string;
}

/** A call on its way through the `before_tool_call` hooks: its context and the decision before them (ALLOW or ASK). */
export interface BeforeToolCall {
  context: PermissionContext & ToolContext;
  result: CheckResult;
}

/** Thrown by a synchronous decision whose hooks would have to wait (webhook, shell): nothing of the pass has run. */
export class HookWouldWait extends Error {
  static readonly kind = 'HookWouldWait';
  readonly code = 'HOOK_WOULD_WAIT';
  constructor(readonly hook: string) {
    super(`Hook "${hook}" answers asynchronously (webhook or shell): decide this call with decideAsync().`);
    brand(this, HookWouldWait);
  }
}

/** A tool call that ran (or failed) after it was allowed: the `after_tool_call` event. */
export interface ToolCallFinished {
  context: ToolContext;
  decisionId?: string;
  outcome: 'succeeded' | 'failed';
  /** what the tool returned (succeeded) or the error message (failed) */
  result?: unknown;
  error?: string;
}

export interface CallHooks {
  /** Could a `before_tool_call` hook apply to this agent and tool? When not, the engine skips the pass altogether. */
  appliesBefore(agent: string, tool: string): boolean;
  /**
   * Run the `before_tool_call` hooks of this call, in order, until one blocks. `sync`: the caller cannot wait; throw
   * HookWouldWait before running anything when a hook of this call would.
   */
  before(call: BeforeToolCall, options: { sync: boolean }): HookPass | Promise<HookPass>;
  /** A decision was recorded: `denied` hooks hear of a DENY. Never awaited, never fails the decision. */
  decided?(context: PermissionContext, result: CheckResult): void;
  /** A tool call finished: `after_tool_call` hooks hear of it. Never awaited. */
  finished?(call: ToolCallFinished): void;
}
