/**
 * What /transparency shows and GET /api/v1/transparency returns: every flag grouped by tier with the layer that
 * decided it and its last change, the configuration problems, the rule sources in force (registered sources, YAML
 * policy rules, agents and their allowlists, and the state of both files) and the flag history.
 * `buildTransparency` is pure (tested alone); `transparencyReport` gathers its input from a running application.
 */
import { NO_PROFILES, type ActiveProfiles } from '@/lib/profiles/load';
import type { FlagChangeRow } from '@/db/schema';
import type { App } from '@/lib/app';
import { mcpTransparency, type McpTransparency } from '@/lib/mcp/transparency';
import type { AgentsFile } from '@/lib/config/agents';
import { fileStatusJson, type WatchedFileStatus } from '@/lib/config/watched-file';
import { durationWords } from '@/lib/config/duration-words';
import type { PolicyRuleInput } from '@/lib/permissions/policy';
import type { GateSpec } from '@/lib/permissions/gates';
import { describeAnnotations } from '@/lib/permissions/annotations';
import { SHELL_HOOKS_FLAG, TS_HOOKS_FLAG, type CompiledHook } from '@/lib/hooks/config';
import { FLAG_CATALOG, FLAG_TIERS, FLAGS_BY_NAME, type FlagTier } from './catalog';
import type { FlagHistoryQuery } from './query';
import type { FlagResolution } from './resolve';
import { changeToJson, flagToJson } from './view';

export const TIER_INFO: Readonly<Record<FlagTier, { title: string; summary: string }>> = {
  invariant: {
    title: 'Invariants',
    summary: 'Can never be turned off: not by a runtime override, an environment variable or an alias.',
  },
  flag: {
    title: 'Flags',
    summary: 'Production features. Stable; an administrator may turn one off, with a recorded reason.',
  },
  experiment: {
    title: 'Experiments',
    summary: 'Opt-in features that may change or disappear. Off unless turned on.',
  },
};

/**
 * The built-in sources, in words a compliance officer can file. A source registered as a plugin is listed by its
 * name and marked as such; its rules are whatever its code emits.
 */
export const BUILT_IN_SOURCES: Readonly<Record<string, { title: string; description: string; priorities: string }>> = {
  rbac: {
    title: 'Roles (RBAC)',
    description: 'Denies an HTTP request when the role of the person or token is below the role the endpoint requires.',
    priorities: 'DENY 1000',
  },
  agent_allowlist: {
    title: 'Agent allowlists',
    description: 'Denies an unknown agent, or a tool missing from the agent’s list in agents.yaml; allows a listed tool.',
    priorities: 'DENY 900, ALLOW 100',
  },
  feature_flags: {
    title: 'Feature flags',
    description: 'Denies a tool or HTTP path guarded by a flag that is off, as flag:<name>.',
    priorities: 'DENY 800',
  },
  policy: {
    title: 'YAML policy',
    description: 'The operator rules of the policy file listed below, each attributed as policy:<id>.',
    priorities: 'each rule’s own, 500 by default',
  },
  hitl: {
    title: 'Human approval gates',
    description:
      'Asks a person before a gated call runs; denies a rejected or expired request. A gate is a requirement: no policy rule at any priority turns a gated call into ALLOW without an approval (invariant hitl_gates).',
    priorities: 'ASK, ALLOW or DENY 400',
  },
  mcp_pins: {
    title: 'MCP tool pins',
    description:
      'Denies a call through the MCP gateway whose upstream tool definition (name, description, schemas, annotations) is not the one reviewed and pinned, above every rule, until an operator accepts the new definition (the MCP gateway section below).',
    priorities: 'DENY above every rule',
  },
};

const list = <T>(v: T | readonly T[] | undefined): readonly T[] => (v === undefined ? [] : Array.isArray(v) ? (v as readonly T[]) : [v as T]);

const show = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

function alternatives(values: readonly unknown[]): string {
  const shown = values.map(show);
  return shown.length <= 1 ? (shown[0] ?? '') : `${shown.slice(0, -1).join(', ')} or ${shown[shown.length - 1]}`;
}

/** A policy rule's `match`, in one line per condition: "tool is export_raw_data", "argument contains_pii is true". */
export function describeMatch(match: PolicyRuleInput['match']): string[] {
  const out: string[] = [];
  for (const what of ['agent', 'tool', 'role', 'method', 'path'] as const) {
    const values = list<unknown>(match[what]);
    if (values.length > 0) out.push(`${what} is ${alternatives(values)}`);
  }
  for (const [key, value] of Object.entries(match.arguments ?? {})) out.push(`argument ${key} is ${alternatives(list(value))}`);
  if (match.annotations) out.push(`annotations: ${describeAnnotations(match.annotations)}`);
  return out.length > 0 ? out : ['every tool call and every HTTP request'];
}

function appliesTo(match: PolicyRuleInput['match']): 'tool calls' | 'HTTP requests' | 'tool calls and HTTP requests' {
  const http = match.method !== undefined || match.path !== undefined;
  const tool = match.tool !== undefined || match.arguments !== undefined || match.annotations !== undefined;
  if (http && !tool) return 'HTTP requests';
  if (tool && !http) return 'tool calls';
  // A rule naming both a tool and a path can match neither; it is shown as written so the mistake is visible.
  return 'tool calls and HTTP requests';
}

function changedFlags(names: readonly string[]): string[] {
  const changed = new Set(names);
  const inCatalog = FLAG_CATALOG.map((f) => f.name).filter((n) => changed.has(n));
  return [...inCatalog, ...names.filter((n) => !FLAGS_BY_NAME.has(n))];
}

/**
 * One page of the flag history. `rows` is what was read with limit + 1: if the extra row came back, an older page
 * exists and `next_cursor` points at it (pass it as `before`).
 */
export function historyToJson(filter: FlagHistoryQuery, rows: readonly FlagChangeRow[]) {
  const page = rows.slice(0, filter.limit);
  return {
    filter: { name: filter.name ?? null, by: filter.by ?? null },
    changes: page.map(changeToJson),
    next_cursor: rows.length > filter.limit && page.length > 0 ? String(page[page.length - 1]!.id) : null,
  };
}

/** Read one page of the history for `historyToJson` (one row more than the page, to know whether another follows). */
export async function readHistory(app: App, filter: FlagHistoryQuery): Promise<FlagChangeRow[]> {
  return app.flags.history({ name: filter.name, by: filter.by, before: filter.before, limit: filter.limit + 1 });
}

export interface TransparencyInput {
  resolution: FlagResolution;
  lastChanges: ReadonlyMap<string, FlagChangeRow>;
  /** the registered rule sources, in the order the engine consults them */
  sources: readonly { name: string }[];
  policy: { status: WatchedFileStatus; rules: readonly PolicyRuleInput[] };
  agents: { status: WatchedFileStatus; file: AgentsFile };
  gates: { status: WatchedFileStatus; gates: readonly GateSpec[] };
  /** the policy test files, their state, and how many cases they hold */
  tests: readonly { status: WatchedFileStatus; cases: number }[];
  /** `rows`: newest first, up to filter.limit + 1 (the extra row only says that an older page exists) */
  history: { filter: FlagHistoryQuery; rows: readonly FlagChangeRow[]; names: readonly string[]; authors: readonly string[] };
  /** seconds since the epoch */
  now: number;
  /** the active compliance profiles (default: none) */
  profiles?: ActiveProfiles;
  /** config/hooks.yaml and the TypeScript hooks registered in code (default: none) */
  hooks?: { status: WatchedFileStatus; hooks: readonly CompiledHook[]; registered: readonly { id: string; event: string }[] };
}

export function buildTransparency(input: TransparencyInput) {
  const flags = [...input.resolution.flags.values()].map((f) => {
    const last = input.lastChanges.get(f.name);
    return { ...flagToJson(f), last_change: last ? changeToJson(last) : null };
  });
  return {
    generated_at: input.now,
    summary: {
      flags: flags.length,
      on: flags.filter((f) => f.value).length,
      overridden: flags.filter((f) => f.layer === 'override').length,
      problems: input.resolution.problems.length,
    },
    tiers: FLAG_TIERS.map((tier) => ({ tier, ...TIER_INFO[tier], flags: flags.filter((f) => f.tier === tier) })),
    problems: input.resolution.problems.map((p) => ({ kind: p.kind, flag: p.flag ?? null, variable: p.variable ?? null, message: p.message })),
    sources: {
      registered: input.sources.map((s, i) => {
        const known = BUILT_IN_SOURCES[s.name];
        return {
          order: i + 1,
          name: s.name,
          built_in: known !== undefined,
          title: known?.title ?? s.name,
          description: known?.description ?? 'A rule source registered as a plugin; its rules come from its own code.',
          priorities: known?.priorities ?? null,
        };
      }),
      policy: {
        file: fileStatusJson(input.policy.status),
        rules: input.policy.rules.map((r) => ({
          id: r.id,
          rule_source: `policy:${r.id}`,
          decision: r.decision,
          priority: r.priority,
          applies_to: appliesTo(r.match),
          match: r.match,
          conditions: describeMatch(r.match),
          reason: r.reason ?? null,
          description: r.description ?? null,
          /** the compliance profile the rule comes from (null: the operator's policy file) */
          profile: input.profiles?.names.find((n) => r.id.startsWith(`${n}/`)) ?? null,
        })),
      },
      gates: {
        file: fileStatusJson(input.gates.status),
        gates: input.gates.gates.map((g) => ({
          id: g.id,
          rule_source: `hitl:${g.id}`,
          tools: g.tools,
          /** the MCP annotations the gated tools must have, in words ("destructiveHint"); null: any tool it names */
          annotations: g.annotations ? describeAnnotations(g.annotations) : null,
          when: g.when ?? null,
          approvals_required: g.approvers.count,
          approver_roles: g.approvers.roles,
          expires_in_seconds: g.expiresInSeconds,
          risk: g.risk,
          description: g.description ?? null,
          declared_in: declaredIn(g.origin),
        })),
      },
      tests: input.tests.map((t) => ({ file: fileStatusJson(t.status), cases: t.cases })),
      agents: {
        file: fileStatusJson(input.agents.status),
        agents: Object.entries(input.agents.file.agents ?? {}).map(([name, a]) => ({
          name,
          owner: a.owner ?? null,
          description: a.description ?? null,
          tools: a.tools,
        })),
      },
    },
    profiles: profilesToJson(input.profiles ?? NO_PROFILES, input.gates.gates),
    hooks: hooksToJson(input.hooks, input.resolution),
    history: {
      ...historyToJson(input.history.filter, input.history.rows),
      /**
       * What the filter can usefully choose from: the flags that have changes (catalog order first, then flags since
       * removed from the catalog) and everyone who made one. Any other flag name still works in the URL.
       */
      options: { names: changedFlags(input.history.names), by: [...input.history.authors] },
    },
  };
}

/** The lifecycle hooks as the page and the API show them: what each acts on, what it does, and whether it runs now. */
function hooksToJson(hooks: TransparencyInput['hooks'], resolution: FlagResolution) {
  const on = (flag: string) => resolution.flags.get(flag)?.value === true;
  const shellOn = on(SHELL_HOOKS_FLAG);
  const tsOn = on(TS_HOOKS_FLAG);
  return {
    file: hooks ? fileStatusJson(hooks.status) : null,
    flags: { [SHELL_HOOKS_FLAG]: shellOn, [TS_HOOKS_FLAG]: tsOn },
    hooks: (hooks?.hooks ?? []).map((h) => ({
      id: h.id,
      rule_source: `hook:${h.id}`,
      event: h.event,
      action: h.action,
      // an empty match applies to every tool call (hooks never see HTTP requests)
      conditions: Object.keys(h.source.match ?? {}).length > 0 ? describeMatch(h.source.match!) : [],
      when: h.source.when ?? null,
      does: hookDoes(h),
      on_error: h.event === 'before_tool_call' && (h.action === 'webhook' || h.action === 'shell') ? h.onError : null,
      /** null: it runs; otherwise why it does not */
      off_because: h.action === 'shell' && !shellOn ? `the flag ${SHELL_HOOKS_FLAG} is off` : null,
      description: h.description ?? null,
      position: h.position.replace(/^.*[\\/]/, ''),
    })),
    registered: (hooks?.registered ?? []).map((h) => ({ id: h.id, rule_source: `hook:${h.id}`, event: h.event, off_because: tsOn ? null : `the flag ${TS_HOOKS_FLAG} is off` })),
  };
}

/** What a hook does, in words. */
function hookDoes(h: CompiledHook): string {
  switch (h.action) {
    case 'block':
      return `Blocks the call: "${h.block}"`;
    case 'rewrite': {
      const r = h.rewrite!;
      const parts = [
        ...(r.set.length ? [`sets ${r.set.map(([p]) => p).join(', ')}`] : []),
        ...(r.remove.length ? [`removes ${r.remove.join(', ')}`] : []),
        ...(r.mask.length ? [`masks ${r.mask.join(', ')}`] : []),
      ];
      return `Rewrites the arguments: ${parts.join('; ')}`;
    }
    case 'rate_limit':
      return `Allows ${h.rateLimit!.calls} call${h.rateLimit!.calls === 1 ? '' : 's'} per agent and tool every ${durationWords(h.rateLimit!.perSeconds)}, then denies`;
    case 'webhook':
      return `${h.event === 'before_tool_call' ? 'Asks' : 'Tells'} ${h.webhook!.urlShown} (signed with $${h.webhook!.secretEnv}; ${h.webhook!.timeoutMs / 1000}s timeout, ${h.webhook!.retries} retr${h.webhook!.retries === 1 ? 'y' : 'ies'})`;
    case 'shell':
      return `Runs ${h.shell!.command.join(' ')} (${h.shell!.timeoutMs / 1000}s timeout)`;
  }
}

/** Where a gate was declared, in words (never a server path). */
function declaredIn(origin: string): string {
  const two = / \+ two people \(profile ([^)]+)\)$/.exec(origin);
  const base = two ? origin.slice(0, two.index) : origin;
  const profile = /^profile ([a-z0-9_]+):/.exec(base);
  const where = profile ? `profile ${profile[1]}` : base === 'code' ? 'code' : base.startsWith('code + ') ? 'code, configured in gates.yaml' : 'gates.yaml';
  return two ? `${where}; two people required by profile ${two[1]}` : where;
}

/** The active compliance profiles as the page and the API show them. */
export function profilesToJson(active: ActiveProfiles, gates: readonly GateSpec[]) {
  const gateIds = new Set(gates.map((g) => g.id));
  return {
    selected_by: active.selectedBy,
    active: active.profiles.map((p) => ({
      name: p.name,
      title: p.title,
      description: p.description,
      frameworks: p.frameworks,
      folder: p.folder,
      locks: [...p.locks].map(([flag, value]) => ({ flag, value })),
      retention: p.retention ? { min_days: p.retention.minDays, basis: p.retention.basis } : null,
      masking: p.masking ? { keys: p.masking.keys, basis: p.masking.basis } : null,
      // the fraction of allowed and asked decisions the trail keeps while decision_log_all is off (issue 28)
      decision_log: p.decisionLog ? { sample: p.decisionLog.sample, basis: p.decisionLog.basis } : null,
      approvals: p.approvals ? { two_person_from_risk: p.approvals.twoPersonFromRisk, basis: p.approvals.basis } : null,
      sign_in: p.signIn ? { lock_after_failures: p.signIn.lockAfterFailures, lock_minutes: p.signIn.lockMinutes, basis: p.signIn.basis } : null,
      // the lifecycle of API tokens (issue 27): their longest life and the disuse that disables them
      tokens: p.identity && (p.identity.tokenMaxDays !== undefined || p.identity.tokenInactiveDays !== undefined)
        ? { max_days: p.identity.tokenMaxDays ?? null, inactive_days: p.identity.tokenInactiveDays ?? null, basis: p.identity.basis }
        : null,
      rules: p.rules.map((r) => r.id),
      gates: active.gates.filter((g) => g.origin.startsWith(`profile ${p.name}:`)).map((g) => g.id),
      controls: p.controls.map((c) => ({
        framework: c.framework,
        id: c.id,
        title: c.title,
        how: c.how,
        evidence: c.evidence,
        served_by: c.servedBy.map((s) => ({
          kind: s.kind,
          ref: s.ref,
          /** a gate named by a control that is not in force (its file changed) is shown as missing */
          in_force: s.kind !== 'gate' || gateIds.has(s.ref),
        })),
      })),
    })),
  };
}

export type TransparencyReport = ReturnType<typeof buildTransparency> & { mcp?: McpTransparency };
export type TransparencyFlag = TransparencyReport['tiers'][number]['flags'][number];

/** The report of a running application, with the history filtered as asked. */
export async function transparencyReport(app: App, filter: FlagHistoryQuery): Promise<TransparencyReport> {
  const [lastChanges, rows, names, authors, mcp] = await Promise.all([
    app.flags.lastChanges(),
    readHistory(app, filter),
    app.flags.historyNames(),
    app.flags.historyAuthors(),
    mcpTransparency(app),
  ]);
  const report = buildTransparency({
    resolution: app.flags.resolution(),
    lastChanges,
    sources: app.decisions.sources(),
    policy: { status: app.policyFile.status(), rules: app.policy.rules.map((r) => r.source) },
    agents: { status: app.agentsFile.status(), file: app.agentsFile.current.file },
    gates: { status: app.gatesFile.status(), gates: app.gates.gates },
    tests: app.testFiles.map((f) => ({ status: f.status(), cases: f.current.cases.length })),
    history: {
      filter,
      rows,
      names,
      authors,
    },
    now: Date.now() / 1000,
    profiles: app.profiles,
    hooks: { status: app.hooksFile.status(), hooks: app.hooksFile.current.hooks, registered: app.hooks.all().filter((h) => h.action === 'typescript') },
  });
  return { ...report, mcp };
}
