/**
 * Impact by replay: what a candidate configuration would change, decided again on the calls this database recorded.
 *
 * The recorded tool calls of a period (every denial; the allowed and asked calls kept under decision_log_all, or the
 * fraction a profile's decision_log.sample kept, which the report names) are
 * decided twice, without recording anything: under the configuration in force and under the candidate, with the same
 * flag values and no approval (so a gate asks under both). Every call whose decision or deciding rule differs is
 * counted by direction, agent and tool, and the first ones are kept as examples with their decision ids. A call whose
 * arguments were masked when recorded is replayed masked; where a rule or gate about its tool reads arguments under
 * either configuration, its decision depended on a value the replay cannot see, and it is counted as uncertain.
 * The hooks that block or rewrite (config/hooks.yaml, pure: a match, a condition, an action) run before the rules as
 * they would have; webhooks, shell hooks and rate limits are not replayed (their answers and windows cannot be asked
 * again after the fact).
 *
 * Reading (recordedCalls, in id order, a batch at a time, over the dialect port) and deciding (impactOf, pure) are
 * apart, so the replay is tested on generated traffic without a database.
 */
import { sql } from 'drizzle-orm';
import type { SqlDatabase } from '@/db/dialect';
import type { DenialRow, SecurityEventRow } from '@/db/schema';
import { builtInSources } from '@/lib/config/sources';
import type { PolicyConfig } from '@/lib/config/policy-tests';
import { authorize, type CallHooks, type CheckInput, type CheckResult, type Decision, type HookPass, type PermissionContext, type Principal, type ToolContext } from '@/lib/permissions';
import { contextOf, decideContext, gateOfCall, type DecisionSnapshot } from '@/lib/permissions/authorize';
import { compileHooks } from '@/lib/hooks/config';
import { HookRunner, nameMatches } from '@/lib/hooks/runner';
import { gatesOfCall } from '@/lib/permissions/gates';
import { candidateRules } from '@/lib/permissions/policy';
import { denialPrincipal, eventPrincipal, parseArgs } from './recorded-call';

export interface RecordedCall {
  /** the decision id of the recorded row (null for rows written before decision ids) */
  decisionId: string | null;
  agent: string;
  tool: string;
  principal: Principal;
  arguments: Record<string, unknown>;
  /** some argument values were masked when recorded: the replay sees `[MASKED]` where the call had a value */
  masked: boolean;
  /** seconds since the epoch */
  timestamp: number;
  /**
   * an allowed or asked call of the decision log: the fraction of such calls that was kept when it was recorded (1 under
   * decision_log_all, a profile's decision_log.sample otherwise); absent for a denial, which is always recorded
   */
  sampleRate?: number;
}

export type Direction = 'newly_denied' | 'newly_allowed' | 'newly_asking' | 'other_rule';

export interface ImpactChange {
  decision_id: string | null;
  agent: string;
  tool: string;
  direction: Direction;
  before: { decision: Decision; rule_source: string };
  after: { decision: Decision; rule_source: string; reason: string };
  uncertain: boolean;
}

export interface ImpactReport {
  replayed: number;
  changed: number;
  /**
   * replayed calls whose recorded arguments were masked while a rule or gate about their tool reads arguments: their
   * replayed decisions (changed or not) may not be what the real values would get
   */
  uncertain: number;
  by_direction: Record<Direction, number>;
  by_agent: { agent: string; count: number }[];
  by_tool: { tool: string; count: number }[];
  /** the first changes, in the order recorded */
  examples: ImpactChange[];
  /**
   * the sampling in force for the allowed and asked calls replayed: 1 when every one was logged, the rate of a
   * profile's decision_log.sample when only a fraction was (the lowest, when the rate changed within the period), null
   * when none was replayed. Below 1, changes of such calls (newly denied ones above all) are counts of the sample.
   */
  allowed_sample_rate: number | null;
}

export const IMPACT_EXAMPLES = 20;

/** A configuration to replay calls under: its decision snapshot (sources, gates, these flags) and its pure hooks. */
export interface ReplayConfiguration {
  readonly snapshot: DecisionSnapshot;
  /** the hooks whose effect is a function of the call (a block, a rewrite); none: no such hook */
  readonly hooks?: CallHooks;
}

/** A configuration as calls are replayed under it: no approval store, nothing recorded. */
export function replayConfiguration(config: PolicyConfig, flags: ReadonlyMap<string, boolean>): ReplayConfiguration {
  const agents = config.agents;
  const policy = config.policy;
  // Only the hooks whose effect is a function of the call: a block or a rewrite (a webhook's or shell's answer and a
  // rate limit's window belong to the moment of the call).
  const pure = compileHooks((config.hooks?.hooks ?? []).filter((h) => h.action === 'block' || h.action === 'rewrite'));
  const hooks =
    pure.hooks.length === 0
      ? undefined
      : new HookRunner({
          hooks: () => pure,
          flags: () => flags,
          cwd: '.',
          onFailure: () => undefined,
          rates: { take: () => { throw new Error('Rate limits are not replayed.'); } },
        });
  return { snapshot: { sources: builtInSources(() => agents, () => policy), gates: config.gates, flags }, ...(hooks ? { hooks } : {}) };
}

/**
 * A call decided as it would be, its blocking and rewriting hooks included, without recording anything: the pure
 * decision (authorize), the hooks run on what it allows or asks, and the decision again on the arguments they left.
 */
export function replayDecision(replay: ReplayConfiguration, input: CheckInput): CheckResult {
  const { snapshot, hooks } = replay;
  if (!hooks || input.kind !== 'tool' || !hooks.appliesBefore(input.agent, input.tool)) return authorize(snapshot, input);
  const context = contextOf(snapshot, input, undefined, gateOfCall(snapshot, input)) as PermissionContext & ToolContext;
  const first = decideContext(snapshot, context);
  if (first.decision === 'DENY') return first;
  const pass = hooks.before({ context, result: first }, { sync: true }) as HookPass;
  const result = pass.arguments === input.arguments ? first : authorize(snapshot, { ...input, arguments: pass.arguments });
  const blocked = pass.blocked;
  if (!blocked || result.decision === 'DENY') return result;
  // The hook's refusal outranks what the sources said, as when the call was made.
  return { ...result, decision: 'DENY', ruleSource: `hook:${blocked.hook}`, reason: blocked.reason, approvalId: undefined };
}

function directionOf(before: CheckResult, after: CheckResult): Direction {
  if (after.decision === before.decision) return 'other_rule';
  return after.decision === 'DENY' ? 'newly_denied' : after.decision === 'ALLOW' ? 'newly_allowed' : 'newly_asking';
}

/** A rule, gate or replayed hook of this configuration about this call reads its arguments (a `when`, an `arguments` match). */
function readsArguments(config: PolicyConfig, tool: string, agent: string): boolean {
  return (
    candidateRules(config.policy, tool, agent).some((r) => r.condition !== undefined || r.args !== undefined) ||
    gatesOfCall(config.gates, tool, undefined).some((g) => g.condition !== undefined) ||
    (config.hooks?.hooks ?? []).some(
      (h) => (h.action === 'block' || h.action === 'rewrite') && h.event === 'before_tool_call' && nameMatches(h.rule, agent, tool) && (h.rule.condition !== undefined || h.rule.args !== undefined),
    )
  );
}

/** Decide each call under both configurations (with these flag values) and report what differs. */
export async function impactOf(
  calls: AsyncIterable<RecordedCall> | Iterable<RecordedCall>,
  currentConfig: PolicyConfig,
  candidateConfig: PolicyConfig,
  flags: ReadonlyMap<string, boolean>,
): Promise<ImpactReport> {
  const current = replayConfiguration(currentConfig, flags);
  const candidate = replayConfiguration(candidateConfig, flags);
  const dependsMemo = new Map<string, boolean>();
  const depends = (tool: string, agent: string) => {
    const key = `${agent}\u0000${tool}`;
    let v = dependsMemo.get(key);
    if (v === undefined) dependsMemo.set(key, (v = readsArguments(currentConfig, tool, agent) || readsArguments(candidateConfig, tool, agent)));
    return v;
  };
  const byDirection: Record<Direction, number> = { newly_denied: 0, newly_allowed: 0, newly_asking: 0, other_rule: 0 };
  const byAgent = new Map<string, number>();
  const byTool = new Map<string, number>();
  const examples: ImpactChange[] = [];
  let replayed = 0;
  let changed = 0;
  let uncertain = 0;
  let allowedSampleRate: number | null = null;
  for await (const c of calls) {
    replayed++;
    if (c.sampleRate !== undefined && (allowedSampleRate === null || c.sampleRate < allowedSampleRate)) allowedSampleRate = c.sampleRate;
    const input = { kind: 'tool' as const, principal: c.principal, agent: c.agent, tool: c.tool, arguments: c.arguments, now: c.timestamp * 1000 };
    const before = replayDecision(current, input);
    const after = replayDecision(candidate, input);
    const doubtful = c.masked && depends(c.tool, c.agent);
    if (doubtful) uncertain++;
    if (before.decision === after.decision && before.ruleSource === after.ruleSource) continue;
    changed++;
    const direction = directionOf(before, after);
    byDirection[direction]++;
    byAgent.set(c.agent, (byAgent.get(c.agent) ?? 0) + 1);
    byTool.set(c.tool, (byTool.get(c.tool) ?? 0) + 1);
    if (examples.length < IMPACT_EXAMPLES) {
      examples.push({
        decision_id: c.decisionId,
        agent: c.agent,
        tool: c.tool,
        direction,
        before: { decision: before.decision, rule_source: before.ruleSource },
        after: { decision: after.decision, rule_source: after.ruleSource, reason: after.reason },
        uncertain: doubtful,
      });
    }
  }
  const ranked = <K extends string>(m: Map<string, number>, key: K) =>
    [...m].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([name, count]) => ({ [key]: name, count }) as Record<K, string> & { count: number });
  return { replayed, changed, uncertain, by_direction: byDirection, by_agent: ranked(byAgent, 'agent'), by_tool: ranked(byTool, 'tool'), examples, allowed_sample_rate: allowedSampleRate };
}

const BATCH = 5_000;

type DenialCall = Pick<DenialRow, 'id' | 'decisionId' | 'agentName' | 'toolName' | 'argumentsJson' | 'principal' | 'userRole' | 'maskedPaths' | 'timestamp'>;
type EventCall = Pick<SecurityEventRow, 'id' | 'decisionId' | 'actor' | 'actorRole' | 'target' | 'detailJson' | 'timestamp'>;

/**
 * The tool calls recorded since `since` (seconds): the denials, then the allowed and asked decisions kept under
 * decision_log_all or a profile's sampling (each with its rate), each table in id order, a batch at a time (plain reads: rows are immutable once written).
 */
export async function* recordedCalls(db: SqlDatabase, since: number): AsyncGenerator<RecordedCall> {
  const notes: string[] = [];
  for (let after = 0; ; ) {
    const rows = await db.all<DenialCall>(
      sql`SELECT id, decision_id AS "decisionId", agent_name AS "agentName", tool_name AS "toolName", arguments_json AS "argumentsJson",
                 principal, user_role AS "userRole", masked_paths AS "maskedPaths", timestamp
            FROM permission_denials WHERE timestamp >= ${since} AND id > ${after} AND tool_name <> 'http' ORDER BY id LIMIT ${BATCH}`,
    );
    for (const d of rows) {
      yield {
        decisionId: d.decisionId,
        agent: d.agentName ?? '',
        tool: d.toolName,
        principal: denialPrincipal(d),
        arguments: parseArgs(d.argumentsJson, notes),
        masked: d.maskedPaths !== null,
        timestamp: d.timestamp,
      };
    }
    if (rows.length < BATCH) break;
    after = rows[rows.length - 1]!.id;
  }
  for (let after = 0; ; ) {
    const rows = await db.all<EventCall>(
      sql`SELECT id, decision_id AS "decisionId", actor, actor_role AS "actorRole", target, detail_json AS "detailJson", timestamp
            FROM security_events WHERE type IN ('decision.allowed', 'decision.asked') AND timestamp >= ${since} AND id > ${after}
           ORDER BY id LIMIT ${BATCH}`,
    );
    for (const e of rows) {
      const [agent, tool] = (e.target ?? '').split(' ');
      // an HTTP decision's target is `METHOD /path`: only tool calls are replayed
      if (!agent || !tool || /^[A-Z]+$/.test(agent)) continue;
      const detail = (e.detailJson ? JSON.parse(e.detailJson) : {}) as { arguments?: Record<string, unknown> | null; masked_paths?: string[]; sample_rate?: unknown };
      yield {
        decisionId: e.decisionId,
        agent,
        tool,
        principal: eventPrincipal(e),
        arguments: detail.arguments ?? {},
        masked: (detail.masked_paths?.length ?? 0) > 0,
        timestamp: e.timestamp,
        // a row kept by a profile's sampling says its rate (lib/audit/trail/sampling.ts); one without was logged with all
        sampleRate: typeof detail.sample_rate === 'number' && detail.sample_rate > 0 && detail.sample_rate <= 1 ? detail.sample_rate : 1,
      };
    }
    if (rows.length < BATCH) break;
    after = rows[rows.length - 1]!.id;
  }
}
