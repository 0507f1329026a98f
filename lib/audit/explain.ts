/**
 * `swarm audit explain DECISION_ID`: find the recorded decision, re-run it against the policy revision it was made
 * under (the configuration texts and flag values kept in policy_revisions) and against today's configuration, and say
 * whether each gives the recorded outcome. Pure reads: the engines used here record nothing.
 *
 * Reading and re-running are apart: the rows come through a small port (ExplainReads: the row of a decision id, its
 * approval, a revision's content), implemented once over the dialect port for both databases (explainReads); the
 * re-run (explainRecorded) is pure.
 */
import { ruleOrigin, type RuleOrigin } from '@/lib/change-control/origin';
import { ChangeControlStore } from '@/lib/change-control/store';
import { sql, type SQL } from 'drizzle-orm';
import type { SqlDatabase } from '@/db/dialect';
import { columnsAs } from '@/db/columns';
import { permissionDenials, securityEvents, type ApprovalRow, type DenialRow, type SecurityEventRow } from '@/db/schema';
import { parseAgents } from '@/lib/config/agents';
import { builtInSources } from '@/lib/config/sources';
import { AppError } from '@/lib/errors';
import { authorize, isRole, type ApprovalState, type CheckInput, type CheckResult, type ConfigSnapshot, type Role, type RuleSource } from '@/lib/permissions';
import type { GateSet, GateSpec } from '@/lib/permissions/gates';
import type { DecisionSnapshot } from '@/lib/permissions/authorize';
import { EMPTY_POLICY, parsePolicy } from '@/lib/permissions/policy';
import { EMPTY_AGENTS } from '@/lib/config/agents';
import { combineProfiles, gatesWithProfiles, NO_PROFILES, withProfileRules } from '@/lib/profiles/load';
import { revisionOf, SqlRevisionStore, type RevisionContent } from './revisions';
import { denialPrincipal, eventPrincipal, parseArgs } from './recorded-call';

/** The columns of permission_denials explain reads. */
const DENIAL_KEYS = ['id', 'toolName', 'agentName', 'argumentsJson', 'ruleSource', 'reason', 'userRole', 'httpMethod', 'httpPath', 'timestamp', 'principal', 'traceJson', 'policyRevision', 'maskedPaths'] as const;
/** The columns of security_events explain reads of a decision event (decision.allowed, decision.asked). */
const EVENT_KEYS = ['id', 'type', 'actor', 'actorRole', 'target', 'detailJson', 'policyRevision', 'timestamp'] as const;
type RecordedDenial = Pick<DenialRow, (typeof DENIAL_KEYS)[number]>;
type RecordedEvent = Pick<SecurityEventRow, (typeof EVENT_KEYS)[number]>;

/** What a decision id leads to: its denial or its decision event, and the approval the call was bound to. */
export interface RecordedDecision {
  denial?: RecordedDenial;
  event?: RecordedEvent;
  approval?: Pick<ApprovalRow, 'id' | 'status' | 'decisionReason'>;
}

/** The reading port of explain (explainReads on either database; a test may give rows of its own). */
export interface ExplainReads {
  /** the rows of a decision id (both empty: not recorded) */
  decision(decisionId: string): Promise<RecordedDecision>;
  /** the content of a kept policy revision */
  revision(revision: string): Promise<RevisionContent | undefined>;
  /** under change control, the proposal that brought in the rule that decided (lib/change-control/origin.ts) */
  ruleOrigin?(ruleSource: string, agent: string | null, at: number): Promise<RuleOrigin | null>;
}

/** Today's configuration, to re-run the decision under: what the application has. */
export interface ExplainConfig {
  /** the gates declared in code, the base of a kept revision's gates */
  readonly codeGates: readonly GateSpec[];
  defaultSources(): RuleSource[];
  readonly gates: GateSet;
  flagValues(): ReadonlyMap<string, boolean>;
  /** the SHA-256 pinned today for an MCP server's tool (lib/mcp/pins), if any */
  mcpPin?(server: string, tool: string): string | undefined;
}

/** What explain takes of an application (SQLite or PostgreSQL; the application gives itself). */
export interface ExplainSource {
  readonly codeGates: readonly GateSpec[];
  configSnapshot(): Pick<ConfigSnapshot, 'sources'>;
  readonly gates: GateSet;
  readonly flags: { values(): ReadonlyMap<string, boolean> };
  readonly mcpPins: { inForce(): ReadonlyMap<string, ReadonlyMap<string, { sha256: string }>> };
}

/** The configuration of an application (SQLite or PostgreSQL) as explain needs it. */
export function explainConfigOf(app: ExplainSource): ExplainConfig {
  return {
    codeGates: app.codeGates,
    defaultSources: () => [...app.configSnapshot().sources],
    gates: app.gates,
    flagValues: () => app.flags.values(),
    mcpPin: (server, tool) => app.mcpPins.inForce().get(server)?.get(tool)?.sha256,
  };
}

/**
 * What explain says of a denial of the MCP gateway's pins (`mcp_pin`): the definition the gateway saw is not input the
 * row keeps (its reason names its hash), so the re-runs show what the rules alone decide; the pins are part of the
 * revision, so the pin in force then and today are said.
 */
function mcpPinNote(config: ExplainConfig, reason: string | null, content: RevisionContent | undefined): string {
  const named = /MCP tool "(.+?)" of server "([a-z][a-z0-9-]*)"/.exec(reason ?? '');
  const head = "This denial came from the MCP gateway's pin of the tool's definition: the definition the gateway saw is not kept as input (its hash is in the reason), so the re-runs show what the rules alone decide.";
  if (!named) return head;
  const [, tool, server] = named as unknown as [string, string, string];
  const short = (v: string | undefined) => (v ? `${v.slice(0, 12)}…` : 'none (not pinned)');
  const then = content ? ` Pinned in the revision it was made under: ${short(content.mcp_pins?.[server]?.[tool])}.` : '';
  return `${head}${then} Pinned today: ${short(config.mcpPin?.(server, tool))}.`;
}

export type Replay = ReturnType<typeof replay>;

export interface Explanation {
  decision_id: string;
  recorded: { table: string; id: number; decision: string; rule_source: string; reason: string | null; timestamp: number; policy_revision: string | null };
  input: { kind: 'tool' | 'http'; agent: string | null; tool: string | null; method: string | null; path: string | null; principal: string | null; role: string | null };
  /** the decision re-run under the revision it was made under (null when that revision is not kept, or not intact) */
  at_the_time: Replay | null;
  /**
   * whether the kept content of that revision still hashes to its id (revisions are content-addressed: an edit of
   * policy_revisions is found here and never replayed); null when the revision is not kept
   */
  revision_intact: boolean | null;
  /** the same input under the configuration in force now */
  today: Replay;
  notes: string[];
  /**
   * under change control: the proposal whose activation brought in the rule that decided, as it was then (null: not a
   * rule of the files, or no activation before the decision); absent where it was not looked up
   */
  introduced_by?: RuleOrigin | null;
}

function replay(result: CheckResult, recorded: { decision: string; rule_source: string }) {
  // same: the same decision and attribution as recorded
  return { decision: result.decision, rule_source: result.ruleSource, reason: result.reason, same: result.decision === recorded.decision && result.ruleSource === recorded.rule_source };
}

/** The configuration of a kept revision, as a decision's snapshot: its files parsed again, its flag values. */
function snapshotOf(config: ExplainConfig, content: RevisionContent): DecisionSnapshot {
  const agents = content.files.agents === null ? EMPTY_AGENTS : parseAgents(content.files.agents, 'agents.yaml (kept revision)');
  // The profiles active then, rebuilt from their kept texts: their rules, gates and requirements were in force too.
  const profiles = content.profiles ? combineProfiles(content.profiles, 'SWARM_PROFILE') : NO_PROFILES;
  const operator = content.files.policy === null ? EMPTY_POLICY : parsePolicy(content.files.policy, `${content.files.policy_file} (kept revision)`);
  const policy = withProfileRules(operator, profiles);
  const gates = gatesWithProfiles(config.codeGates, profiles, content.files.gates === null ? undefined : { text: content.files.gates, file: 'gates.yaml (kept revision)' });
  const flags = new Map(Object.entries(content.flags));
  return { sources: builtInSources(() => agents, () => policy), gates, flags };
}

/** Explain a decision of this database: its rows read through `reads`, re-run under `config` as today's configuration. */
export async function explainDecisionWith(config: ExplainConfig, reads: ExplainReads, decisionId: string): Promise<Explanation> {
  const recorded = await reads.decision(decisionId);
  const revision = recorded.denial?.policyRevision ?? recorded.event?.policyRevision;
  const e = explainRecorded(config, decisionId, recorded, revision ? await reads.revision(revision) : undefined);
  if (!reads.ruleOrigin) return e;
  return { ...e, introduced_by: await reads.ruleOrigin(e.recorded.rule_source, e.input.agent, e.recorded.timestamp) };
}

/** Explain a decision of an application, on either database, under its configuration in force. */
export function explainDecision(app: ExplainSource & { readonly database: SqlDatabase }, decisionId: string): Promise<Explanation> {
  return explainDecisionWith(explainConfigOf(app), explainReads(app.database), decisionId);
}

/**
 * The re-run of a recorded decision: under `content` (the revision it names, when kept) and under today's `config`.
 * Throws AppError NOT_FOUND when the decision id has no row.
 */
export function explainRecorded(config: ExplainConfig, decisionId: string, rows: RecordedDecision, content: RevisionContent | undefined): Explanation {
  const notes: string[] = [];
  const denial = rows.denial;
  const event = denial ? undefined : rows.event;
  if (!denial && !event) {
    throw new AppError('NOT_FOUND', `No recorded decision has the id ${decisionId} (allowed decisions are recorded only while decision_log_all is on).`);
  }

  let input: CheckInput;
  let recorded: Explanation['recorded'];
  let shown: Explanation['input'];
  if (denial) {
    recorded = { table: 'permission_denials', id: denial.id, decision: 'DENY', rule_source: denial.ruleSource, reason: denial.reason, timestamp: denial.timestamp, policy_revision: denial.policyRevision };
    const principal = denialPrincipal(denial);
    if (denial.toolName === 'http') {
      const rbac = /^rbac:(\w+)$/.exec(denial.ruleSource);
      const requiredRole: Role = rbac && isRole(rbac[1]) ? rbac[1] : 'anonymous';
      if (!rbac) notes.push('The route\'s required role is not kept in the row: RBAC is re-checked only for RBAC denials.');
      // A cross-origin refusal is the row's own rule: the request is replayed as one.
      const crossOrigin = denial.ruleSource === 'csrf:origin';
      input = { kind: 'http', principal, method: denial.httpMethod ?? 'GET', path: denial.httpPath ?? '/', requiredRole, ...(crossOrigin ? { crossOrigin } : {}), now: denial.timestamp * 1000 };
    } else {
      input = { kind: 'tool', principal, agent: denial.agentName ?? '', tool: denial.toolName, arguments: parseArgs(denial.argumentsJson, notes), now: denial.timestamp * 1000 };
    }
    shown = { kind: input.kind, agent: denial.agentName, tool: denial.toolName === 'http' ? null : denial.toolName, method: denial.httpMethod, path: denial.httpPath, principal: denial.principal, role: denial.userRole };
  } else {
    const e = event!;
    const detail = (e.detailJson ? JSON.parse(e.detailJson) : {}) as { rule_source?: string; reason?: string; arguments?: Record<string, unknown> };
    recorded = {
      table: 'security_events',
      id: e.id,
      decision: e.type === 'decision.allowed' ? 'ALLOW' : 'ASK',
      rule_source: detail.rule_source ?? '',
      reason: detail.reason ?? null,
      timestamp: e.timestamp,
      policy_revision: e.policyRevision,
    };
    const [first, second] = (e.target ?? '').split(' ');
    const principal = eventPrincipal(e);
    if (first && /^[A-Z]+$/.test(first)) {
      input = { kind: 'http', principal, method: first, path: second ?? '/', requiredRole: 'anonymous', now: e.timestamp * 1000 };
      notes.push('The route\'s required role is not kept in the row: RBAC is not re-checked.');
    } else {
      input = { kind: 'tool', principal, agent: first ?? '', tool: second ?? '', arguments: detail.arguments ?? {}, now: e.timestamp * 1000 };
    }
    shown = { kind: input.kind, agent: input.kind === 'tool' ? input.agent : null, tool: input.kind === 'tool' ? input.tool : null, method: input.kind === 'http' ? input.method : null, path: input.kind === 'http' ? input.path : null, principal: e.actor, role: e.actorRole };
  }
  if (shown.kind === 'tool' && denial?.maskedPaths) notes.push(`Masked argument values are re-run as recorded (masked): ${denial.maskedPaths}.`);
  if (recorded.rule_source.startsWith('hook:')) {
    notes.push(
      `This denial came from the hook ${recorded.rule_source.slice('hook:'.length)}. Hooks are not replayed (a webhook's or a program's answer, a rate-limit window, cannot be asked again after the fact): the re-runs show what the rules alone decide.`,
    );
  } else if (denial?.traceJson?.includes('"hook:')) {
    notes.push('Hooks acted on this call (see its trace); they are not replayed: the re-runs show what the rules alone decide.');
  }
  if (recorded.rule_source === 'mcp_pin') notes.push(mcpPinNote(config, recorded.reason, content));

  // The approval this call was bound to, as it stands: a rejection or an expiry is what made such a denial.
  const approvalRow = rows.approval;
  const approval: ApprovalState | undefined = approvalRow
    ? { status: (approvalRow.status === 'consumed' ? 'approved' : approvalRow.status) as ApprovalState['status'], id: approvalRow.id, reason: approvalRow.decisionReason ?? undefined }
    : undefined;

  let atTheTime: Replay | null = null;
  const intact = content && recorded.policy_revision ? revisionOf(content) === recorded.policy_revision : null;
  if (content && recorded.policy_revision && !intact) {
    notes.push(
      `The kept content of revision ${recorded.policy_revision} does not hash to its id: it was changed in the database after it was recorded, so the decision is not replayed under it.`,
    );
  } else if (content && recorded.policy_revision) {
    atTheTime = replay(authorize(snapshotOf(config, content), input, { approval }), recorded);
  } else {
    notes.push(recorded.policy_revision ? `Revision ${recorded.policy_revision} is not kept in this database.` : 'The row was written before policy revisions were recorded.');
  }
  // Today's configuration, the same pure decision: the approval state as recorded.
  const today = replay(authorize({ sources: config.defaultSources(), gates: config.gates, flags: config.flagValues() }, { ...input, now: undefined }, { approval }), recorded);
  return { decision_id: decisionId, recorded, input: shown, at_the_time: atTheTime, revision_intact: intact, today, notes };
}

/** The time (seconds) a UUIDv7 decision id was made at: its first 48 bits are milliseconds. */
export function decisionTime(decisionId: string): number | undefined {
  const hex = decisionId.replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/.test(hex) || hex[12] !== '7') return undefined;
  return parseInt(hex.slice(0, 12), 16) / 1000;
}

const DENIAL_COLUMNS = sql.raw(columnsAs(permissionDenials, DENIAL_KEYS));

/**
 * The reads of explain, on either database (plain reads, no transaction: each row is immutable once written).
 *
 * The denial of a decision id: decision_id has no index (it would cost every durable write a page), so the row is
 * looked for through the timestamp index a minute around the id's time first; a rejection or expiry is written later
 * than the call that asked, so the whole table is the fallback.
 */
export function explainReads(db: SqlDatabase): ExplainReads {
  const revisions = new SqlRevisionStore(db);
  return {
    async decision(decisionId) {
      const at = decisionTime(decisionId);
      const denialWhere = (window: SQL) => sql`SELECT ${DENIAL_COLUMNS} FROM permission_denials WHERE ${window}decision_id = ${decisionId} ORDER BY id LIMIT 1`;
      const denial =
        (at !== undefined ? await db.one<RecordedDenial>(denialWhere(sql`timestamp BETWEEN ${at - 60} AND ${at + 60} AND `)) : undefined) ??
        (await db.one<RecordedDenial>(denialWhere(sql``)));
      // A decision event: its type starts with `decision.`, in that case (substr, not LIKE: LIKE ignores case on SQLite).
      const event = denial
        ? undefined
        : await db.one<RecordedEvent>(
            sql`SELECT ${sql.raw(columnsAs(securityEvents, EVENT_KEYS))}
                  FROM security_events WHERE decision_id = ${decisionId} AND substr(type, 1, 9) = 'decision.' ORDER BY id LIMIT 1`,
          );
      const approval = await db.one<NonNullable<RecordedDecision['approval']>>(
        sql`SELECT id, status, decision_reason AS "decisionReason" FROM approvals WHERE decision_id = ${decisionId} LIMIT 1`,
      );
      return { denial, event, approval };
    },
    revision: (revision) => revisions.get(revision),
    ruleOrigin: (ruleSource, agent, at) => ruleOrigin(new ChangeControlStore(db), revisions, ruleSource, agent, at),
  };
}
