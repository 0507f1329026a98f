/**
 * The recorder: the one writer of the audit trail (implements the engine's Recorder port). Denied decisions become
 * rows of permission_denials, every other event a row of security_events; each row carries its decision id and the
 * policy revision in force, its argument values masked, and is appended to its table's hash chain in the transaction
 * that writes it.
 */
import type Database from 'better-sqlite3';
import { sqliteTx, type TxRunner } from '@/db/dialect';
import type { NewDenialRow, securityEvents } from '@/db/schema';
import { PRIORITY, principalLabel, ruleSourceOf, type AuditEvent, type CheckResult, type DecisionEvent, type PermissionContext, type Recorded, type Recorder, type SecurityEvent } from '@/lib/permissions';
import { ChainAppender, type ChainName } from './chain';
import { nowSeconds } from '../denials/filter';
import { maskedArgumentsJson } from '../redact';
import type { RevisionContent } from '../revisions';
import { announceWrite } from '@/db/write-intent';
import { canonicalJson } from '@/lib/approvals/canonical';
import { hookSummary } from '@/lib/hooks/summary';
import { isSampled } from './sampling';

/** A row of permission_denials as the recorder writes it (the chain columns, all but the hashes). */
export type DenialInput = Omit<NewDenialRow, 'id' | 'timestamp' | 'prevHash' | 'rowHash'> & { timestamp?: number };

/**
 * A security event row before it is chained. Its detail is an object, or `detailJson` the detail already serialised
 * (the hot path of decision_log_all: no parse and stringify round trip).
 */
export type EventRow = Omit<typeof securityEvents.$inferInsert, 'id' | 'timestamp' | 'policyRevision' | 'prevHash' | 'rowHash'> & {
  detail?: Record<string, unknown> | null;
  timestamp?: number;
};

export interface RecorderOptions {
  /** the content hash of the configuration in force (see revisions.ts): named by the rows that are not decisions */
  revision(): string | null;
  /** the content of a revision this process computed, stored once beside the first row that names it (policy_revisions) */
  revisionContent?(revision: string): RevisionContent | undefined;
  /** is the flag decision_log_all on: allowed and asked decisions are recorded too */
  logAllDecisions(): boolean;
  /**
   * the fraction of allowed and asked decisions kept while decision_log_all is off (the active profiles'
   * decision_log.sample; absent or 0: none), chosen by the decision id (sampling.ts)
   */
  decisionSampleRate?(): number;
  /** argument keys whose values the active compliance profiles mask (lower case) */
  maskKeys?: ReadonlySet<string>;
}

/**
 * The trace as stored: `[decision, priority, rule_source, reason]` per rule, then one entry per before_tool_call hook
 * that is not the winning rule already, `[ALLOW|DENY, priority, hook:<id>, what it did, detail]`; the detail of a hook
 * that rewrote the arguments keeps the SHA-256 of the arguments the agent sent (the row stores the rewritten ones).
 */
const traceJson = (result: CheckResult) => {
  const rules: unknown[] = result.trace.map((r) => [r.decision, r.priority, ruleSourceOf(r.attribution), r.reason]);
  if (!result.hooks) return JSON.stringify(rules);
  for (const h of result.hooks) {
    if (h.blocks && result.ruleSource === `hook:${h.hook}`) continue;
    rules.push([
      h.blocks ? 'DENY' : 'ALLOW',
      PRIORITY.hook,
      `hook:${h.hook}`,
      hookSummary(h),
      { event: h.event, action: h.action, outcome: h.outcome, ...(h.changed ? { changed: h.changed, original_arguments_sha256: result.originalArgumentsSha256 } : {}) },
    ]);
  }
  return JSON.stringify(rules);
};

/** The denial row of a denied decision: attributed to the winning rule, arguments masked, the trace kept. */
export function denialOfDecision(context: PermissionContext, result: CheckResult, maskKeys?: ReadonlySet<string>): DenialInput {
  const isHttp = context.kind === 'http';
  const masked = maskedArgumentsJson(context.arguments, maskKeys);
  return {
    toolCallId: context.toolCallId ?? null,
    // The specification's column is NOT NULL: an HTTP request's "tool" is the HTTP surface itself.
    toolName: isHttp ? 'http' : context.tool,
    agentName: context.agent ?? null,
    argumentsJson: masked.json,
    maskedPaths: masked.maskedPaths.length > 0 ? JSON.stringify(masked.maskedPaths) : null,
    ruleSource: result.ruleSource,
    reason: result.reason,
    userRole: context.principal.role,
    httpMethod: isHttp ? context.method : null,
    httpPath: isHttp ? context.path : null,
    // who asked: the person an agent acts for, when it acts for one (agent_name names the agent)
    principal: context.principal.onBehalfOf ?? context.principal.id,
    traceJson: traceJson(result),
    decisionId: result.decisionId ?? null,
  };
}

export class AuditRecorder implements Recorder {
  private readonly denials: ChainAppender;
  private readonly events: ChainAppender;
  private readonly insertRevision: Database.Statement<[string, string, number]>;
  /** the revisions this process stored (or found stored): each is written once, not with every row */
  private readonly storedRevisions = new Set<string>();

  constructor(
    private readonly sqlite: Database.Database,
    private readonly options: RecorderOptions,
  ) {
    this.denials = new ChainAppender(sqlite, 'permission_denials');
    this.events = new ChainAppender(sqlite, 'security_events');
    this.insertRevision = sqlite.prepare('INSERT INTO policy_revisions (revision, content_json, first_seen_at) VALUES (?, ?, ?) ON CONFLICT (revision) DO NOTHING');
  }

  record(event: AuditEvent): Recorded | undefined {
    const row = auditRowOf(event, this.options);
    if (!row) return undefined;
    this.storeRevision(row.revision);
    return { table: row.chain, id: (row.chain === 'permission_denials' ? this.denials : this.events).append(row.values) };
  }

  /** Append one denial row (the engine's denials, and approvals that ended in a denial). Returns its id. */
  appendDenial(d: DenialInput): number {
    const revision = d.policyRevision === undefined ? this.options.revision() : d.policyRevision;
    this.storeRevision(revision);
    return this.denials.append(denialValues(d, revision));
  }

  /** Append one security event row. Returns its id. */
  appendEvent(e: EventRow): number {
    const revision = this.options.revision();
    this.storeRevision(revision);
    return this.events.append(eventValues(e, revision));
  }

  /**
   * Forget which revisions are stored: after a rolled-back transaction (a batch, a group commit), one stored inside it
   * may not be, so it is stored again with the next row that names it.
   */
  forgetStoredRevisions(): void {
    this.storedRevisions.clear();
  }

  /**
   * Store the content of a revision a row is about to name, synchronously and in the row's transaction when there is
   * one (the decision path on SQLite never yields). A revision whose content this process does not know (computed by
   * another process, which stores it itself) is left as it is.
   */
  private storeRevision(revision: string | null | undefined): void {
    if (!revision || this.storedRevisions.has(revision)) return;
    const content = this.options.revisionContent?.(revision);
    if (!content) return;
    // Inside the group commit's transaction when there is one (db/write-intent.ts), as the row that names it.
    announceWrite(this.sqlite);
    this.insertRevision.run(revision, canonicalJson(content), Date.now() / 1000);
    this.storedRevisions.add(revision);
  }

  /**
   * Record inside a transaction of the dialect port (an approval's transition: its store is written once for both
   * databases) on this recorder's connection: written at once, within it (TransitionRecorder).
   */
  recordWithin(tx: TxRunner, event: AuditEvent): Recorded | undefined {
    this.assertJoins(tx);
    return this.record(event);
  }

  /** appendDenial inside a transaction of the dialect port on this recorder's connection. */
  appendDenialWithin(tx: TxRunner, d: DenialInput): number {
    this.assertJoins(tx);
    return this.appendDenial(d);
  }

  /** A row written on another connection than the transaction's would not commit (or roll back) with it. */
  private assertJoins(tx: TxRunner): void {
    if (sqliteTx(tx).client !== this.sqlite) throw new Error('The audit recorder writes on its own connection; this transaction runs on another one.');
  }
}

/**
 * Where an event is recorded and its chained values (both databases write these): a denied decision in
 * permission_denials, an allowed or asked one in security_events when decision_log_all is on or the profiles' sampling
 * keeps it (undefined otherwise), every other event in security_events.
 */
export function auditRowOf(event: AuditEvent, options: RecorderOptions): { chain: ChainName; values: unknown[]; revision: string | null } | undefined {
  if (!isDecision(event)) {
    const revision = options.revision();
    return { chain: 'security_events', values: eventValues(eventRow(event), revision), revision };
  }
  const { context, result } = event;
  // A decision names the revision of the snapshot it was taken under, not whatever is in force when it is written.
  const revision = event.revision ?? options.revision();
  if (result.decision === 'DENY') return { chain: 'permission_denials', values: denialValues(denialOfDecision(context, result, options.maskKeys), revision), revision };
  // A console page refreshing itself in the background is not an agent's or a person's decision: logging it would
  // bury the trail under the poll (the route sets `background` only for a signed-in session, never for a token).
  if (event.background === true) return undefined;
  // Under decision_log_all every decision is kept; else the profiles' rate keeps a fraction, and the row says which
  // rate, so that a replay or a report knows it stands for 1/rate calls. A rate of 1 is every decision: no mark.
  let sampleRate = 1;
  if (!options.logAllDecisions()) {
    sampleRate = options.decisionSampleRate?.() ?? 0;
    if (!isSampled(result.decisionId, sampleRate)) return undefined;
  }
  const masked = maskedArgumentsJson(context.arguments, options.maskKeys);
  const row: EventRow = {
    decisionId: result.decisionId ?? null,
    type: result.decision === 'ALLOW' ? 'decision.allowed' : 'decision.asked',
    actor: principalLabel(context.principal),
    actorRole: context.principal.role,
    outcome: 'succeeded',
    target: context.kind === 'http' ? `${context.method} ${context.path}` : `${context.agent} ${context.tool}`,
    // The arguments and the trace are JSON already: spliced in, not parsed and serialised again.
    detailJson:
      `{"rule_source":${JSON.stringify(result.ruleSource)},"reason":${JSON.stringify(result.reason)},` +
      `"approval_id":${JSON.stringify(result.approvalId ?? null)},"arguments":${masked.json ?? 'null'},` +
      `"masked_paths":${JSON.stringify(masked.maskedPaths)},"trace":${traceJson(result)}` +
      (sampleRate < 1 ? `,"sample_rate":${sampleRate}}` : '}'),
    ip: event.ip ?? null,
  };
  return { chain: 'security_events', values: eventValues(row, revision), revision };
}

/** A denial's chained values, in the order of CHAIN_COLUMNS.permission_denials (both databases write these). */
export function denialValues(d: DenialInput, revision: string | null): unknown[] {
  return [
    d.toolCallId ?? null,
    d.toolName,
    d.agentName ?? null,
    d.argumentsJson ?? null,
    d.ruleSource,
    d.reason ?? null,
    d.userRole ?? null,
    d.httpMethod ?? null,
    d.httpPath ?? null,
    d.timestamp ?? nowSeconds(),
    d.principal ?? null,
    d.traceJson ?? null,
    d.decisionId ?? null,
    revision,
    d.maskedPaths ?? null,
  ];
}

/** A security event's chained values, in the order of CHAIN_COLUMNS.security_events. */
export function eventValues(e: EventRow, revision: string | null): unknown[] {
  return [
    e.decisionId ?? null,
    e.type,
    e.actor,
    e.actorRole ?? null,
    e.outcome,
    e.target ?? null,
    e.detailJson ?? (e.detail ? JSON.stringify(e.detail) : null),
    revision,
    e.ip ?? null,
    e.timestamp ?? nowSeconds(),
  ];
}

function isDecision(e: AuditEvent): e is DecisionEvent {
  return e.kind === 'tool' || e.kind === 'http';
}

function eventRow(e: SecurityEvent): EventRow {
  return {
    decisionId: e.decisionId ?? null,
    type: e.type,
    actor: e.actor,
    actorRole: e.actorRole ?? null,
    outcome: e.outcome,
    target: e.target ?? null,
    detail: e.detail ?? null,
    ip: e.ip ?? null,
  };
}
