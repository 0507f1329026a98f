/**
 * Operator YAML policy: parse, validate (zod) and compile once. Errors carry file, line and column.
 * Pure: takes text, returns a compiled policy or throws PolicyError. Reading and watching the file is lib/config's job.
 */
import { z } from 'zod';
import { BoundedPairCache } from './bounded-cache';
import { idList, parseYamlConfigLocated } from './yaml-config';
import { compileCondition, conditionSchema, type Condition } from './condition';
import { compileNames, matchesName, type NameMatcher } from './glob';
import { annotationRequirementSchema, annotationsMatch, compileAnnotations, type AnnotationMatcher } from './annotations';
import { DECISIONS, PRIORITY, ROLES, type Decision, type PermissionRule, type Role, type ToolAnnotations } from './types';

const pattern = z.string().min(1, 'must not be empty');
const patterns = z.union([pattern, z.array(pattern).min(1, 'must list at least one value')]);
const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const argumentValue = z.union([scalar, z.array(scalar).min(1)]);

/** ALLOW, DENY or ASK, in any letter case (policy rules, and the expectations of policy tests). */
export const decisionSchema = z.preprocess(
  (v) => (typeof v === 'string' ? v.toUpperCase() : v),
  z.enum(DECISIONS, { error: 'decision must be ALLOW, DENY or ASK' }),
);

export const policyRuleSchema = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'id must be letters, digits, "_", "." or "-"'),
  decision: decisionSchema,
  priority: z.number().int().min(0).max(1_000_000).default(PRIORITY.policyDefault),
  reason: z.string().optional(),
  description: z.string().optional(),
  /**
   * a CEL condition over agent, tool, args, principal, method, path, flags, now, tool_annotations: the rule applies only
   * when it holds
   */
  when: conditionSchema.optional(),
  match: z
    .strictObject({
      agent: patterns.optional(),
      tool: patterns.optional(),
      role: z.union([z.enum(ROLES), z.array(z.enum(ROLES)).min(1)]).optional(),
      method: patterns.optional(),
      path: patterns.optional(),
      arguments: z.record(z.string(), argumentValue).optional(),
      /**
       * MCP tool annotations the call's tool must have, with the specification's defaults for a hint it does not
       * declare (annotations.ts). Tool calls only; a call without annotations (not through the MCP gateway) never matches.
       */
      annotations: annotationRequirementSchema.optional(),
    })
    .default({}),
});

export const policyFileSchema = z.strictObject({
  version: z.literal(1).default(1),
  rules: idList(policyRuleSchema, 'rule'),
});

export type PolicyRuleInput = z.infer<typeof policyRuleSchema>;

type ArgumentMatcher = { key: string; strings: NameMatcher; others: ReadonlySet<number | boolean | null> };

export interface CompiledRule {
  readonly id: string;
  readonly decision: Decision;
  readonly priority: number;
  readonly reason: string;
  readonly ruleSource: string;
  readonly appliesToTools: boolean;
  readonly appliesToHttp: boolean;
  readonly agent?: NameMatcher;
  readonly tool?: NameMatcher;
  readonly roles?: ReadonlySet<Role>;
  readonly methods?: ReadonlySet<string>;
  readonly path?: NameMatcher;
  readonly args?: readonly ArgumentMatcher[];
  /** the MCP annotations the call must carry (tested per call, like roles and arguments) */
  readonly annotations?: AnnotationMatcher;
  readonly condition?: Condition;
  /** where the rule is written, `file:line:column` (for warnings and test output) */
  readonly position?: string;
  /** the rule as written, for display on /transparency */
  readonly source: PolicyRuleInput;
  /** the rule the source emits when it matches (built once, shared by every check) */
  readonly emitted: PermissionRule;
}

export interface CompiledPolicy {
  readonly rules: readonly CompiledRule[];
  /** tool-call rules naming exact tools, by tool */
  readonly byTool: ReadonlyMap<string, readonly CompiledRule[]>;
  /** tool-call rules without an exact tool, by exact agent */
  readonly anyToolByAgent: ReadonlyMap<string, readonly CompiledRule[]>;
  /** tool-call rules without an exact tool or agent */
  readonly anyTool: readonly CompiledRule[];
  readonly http: readonly CompiledRule[];
  /** tools for which some ASK rule may match (the engine then looks up the call's approval) */
  readonly askTools: ReadonlySet<string>;
  readonly askAnyTool: boolean;
  /** (tool, agent) -> the rules whose tool and agent match: filled lazily, so a check tests only these (bounded) */
  readonly candidates: BoundedPairCache<readonly CompiledRule[]>;
}

/**
 * The most (tool, agent) candidate lists a policy keeps: about 7 MB at most (measured: some 210 bytes a list when every
 * call names a new agent). Names come from callers, so the least recently used lists are forgotten and computed again;
 * half of the bound holds the engine benchmark's 15,183 pairs.
 */
export const MAX_CANDIDATE_ENTRIES = 32_768;

/**
 * The tool-call rules whose tool and agent match this call. Computed once per (tool, agent) from the indexes and
 * memoised, so the cost of a check does not grow with the number of rules about other tools and agents.
 */
export function candidateRules(p: CompiledPolicy, tool: string, agent: string): readonly CompiledRule[] {
  const hit = p.candidates.get(tool, agent);
  if (hit) return hit;
  const out: CompiledRule[] = [];
  const consider = (rules: readonly CompiledRule[] | undefined) => {
    if (!rules) return;
    for (const r of rules) {
      if (r.tool && !matchesName(r.tool, tool)) continue;
      if (r.agent && !matchesName(r.agent, agent)) continue;
      out.push(r);
    }
  };
  consider(p.byTool.get(tool));
  consider(p.anyToolByAgent.get(agent));
  consider(p.anyTool);
  const frozen = Object.freeze(out);
  p.candidates.set(tool, agent, frozen);
  return frozen;
}

/**
 * The parts of a match that depend on the call itself, not on its tool and agent (those are in candidateRules): the
 * role, the arguments and the MCP annotations. Annotations belong here, not in the (tool, agent) memo: two upstreams
 * may offer a tool of one name with different annotations, and a call without annotations names the same tool too.
 */
export function callMatches(
  rule: CompiledRule,
  role: Role,
  args: Readonly<Record<string, unknown>> | undefined,
  annotations?: ToolAnnotations,
): boolean {
  if (rule.roles && !rule.roles.has(role)) return false;
  if (rule.annotations && !annotationsMatch(rule.annotations, annotations)) return false;
  return argsMatch(rule, args);
}

/** Every argument the rule names is the call's own and matches (true when it names none). */
function argsMatch(rule: CompiledRule, args: Readonly<Record<string, unknown>> | undefined): boolean {
  if (!rule.args) return true;
  const a = args ?? {};
  for (const m of rule.args) {
    if (!Object.prototype.hasOwnProperty.call(a, m.key) || !argumentMatches(m, a[m.key])) return false;
  }
  return true;
}

const list = <T>(v: T | readonly T[] | undefined): readonly T[] | undefined =>
  v === undefined ? undefined : Array.isArray(v) ? (v as readonly T[]) : [v as T];

function exactOnly(m: NameMatcher | undefined): readonly string[] | undefined {
  return m && !m.any && m.globs.length === 0 ? [...m.exact] : undefined;
}

export function compilePolicy(rules: readonly PolicyRuleInput[], positions: readonly string[] = []): CompiledPolicy {
  const compiled: CompiledRule[] = [];
  const byTool = new Map<string, CompiledRule[]>();
  const anyToolByAgent = new Map<string, CompiledRule[]>();
  const anyTool: CompiledRule[] = [];
  const http: CompiledRule[] = [];
  const askTools = new Set<string>();
  let askAnyTool = false;
  const push = <K>(map: Map<K, CompiledRule[]>, key: K, rule: CompiledRule) => {
    const l = map.get(key);
    if (l) l.push(rule);
    else map.set(key, [rule]);
  };
  for (const [index, r] of rules.entries()) {
    const m = r.match;
    const isHttpOnly = m.method !== undefined || m.path !== undefined;
    const isToolOnly = m.tool !== undefined || m.arguments !== undefined || m.annotations !== undefined;
    const rule: CompiledRule = {
      id: r.id,
      decision: r.decision,
      priority: r.priority,
      reason: r.reason ?? `Policy rule "${r.id}" (${r.decision}).`,
      ruleSource: `policy:${r.id}`,
      appliesToTools: !isHttpOnly,
      appliesToHttp: !isToolOnly,
      agent: m.agent ? compileNames(list(m.agent)!) : undefined,
      tool: m.tool ? compileNames(list(m.tool)!) : undefined,
      roles: m.role ? new Set(list(m.role)) : undefined,
      methods: m.method ? new Set(list(m.method)!.map((x) => x.toUpperCase())) : undefined,
      path: m.path ? compileNames(list(m.path)!) : undefined,
      args: m.arguments ? Object.entries(m.arguments).map(([key, v]) => compileArgument(key, list(v)!)) : undefined,
      annotations: m.annotations ? compileAnnotations(m.annotations) : undefined,
      condition: r.when === undefined ? undefined : compileCondition(r.when),
      position: positions[index],
      source: r,
      emitted: Object.freeze({ decision: r.decision, priority: r.priority, attribution: Object.freeze({ source: 'policy', id: r.id }), reason: r.reason ?? `Policy rule "${r.id}" (${r.decision}).` }),
    };
    compiled.push(rule);
    if (rule.appliesToHttp) http.push(rule);
    if (!rule.appliesToTools) continue;
    const tools = exactOnly(rule.tool);
    const agents = exactOnly(rule.agent);
    if (tools) for (const t of tools) push(byTool, t, rule);
    else if (agents) for (const a of agents) push(anyToolByAgent, a, rule);
    else anyTool.push(rule);
    if (rule.decision === 'ASK') {
      if (tools) for (const t of tools) askTools.add(t);
      else askAnyTool = true;
    }
  }
  return { rules: compiled, byTool, anyToolByAgent, anyTool, http, askTools, askAnyTool, candidates: new BoundedPairCache(MAX_CANDIDATE_ENTRIES) };
}

export const EMPTY_POLICY: CompiledPolicy = compilePolicy([]);

function compileArgument(key: string, values: readonly (string | number | boolean | null)[]): ArgumentMatcher {
  const strings: string[] = [];
  const others = new Set<number | boolean | null>();
  for (const v of values) {
    if (typeof v === 'string') strings.push(v);
    else others.add(v);
  }
  return { key, strings: compileNames(strings), others };
}

function argumentMatches(m: ArgumentMatcher, actual: unknown): boolean {
  if (typeof actual === 'string') return matchesName(m.strings, actual);
  return (typeof actual === 'number' || typeof actual === 'boolean' || actual === null) && m.others.has(actual);
}

/** Does a compiled rule match this call? Used by the policy source; exported for the transparency view and tests. */
export function ruleMatches(
  rule: CompiledRule,
  c: {
    kind: 'tool' | 'http';
    agent?: string;
    tool?: string;
    role: Role;
    method?: string;
    path?: string;
    arguments?: Readonly<Record<string, unknown>>;
    annotations?: ToolAnnotations;
  },
): boolean {
  if (c.kind === 'tool' ? !rule.appliesToTools : !rule.appliesToHttp) return false;
  if (rule.agent && !matchesName(rule.agent, c.agent)) return false;
  if (rule.tool && !matchesName(rule.tool, c.tool)) return false;
  if (rule.roles && !rule.roles.has(c.role)) return false;
  if (rule.methods && (c.method === undefined || !rule.methods.has(c.method.toUpperCase()))) return false;
  if (rule.path && !matchesName(rule.path, c.path)) return false;
  if (rule.annotations && !annotationsMatch(rule.annotations, c.annotations)) return false;
  return argsMatch(rule, c.arguments);
}

/** Parse and validate policy YAML. Throws ConfigFileError with line and column for every problem found. */
export function parsePolicy(text: string, file = 'permission_policies.yaml'): CompiledPolicy {
  const { data, at } = parseYamlConfigLocated(text, file, policyFileSchema);
  const rules = data.rules ?? [];
  return compilePolicy(
    rules,
    rules.map((_, i) => {
      const p = at(['rules', i]);
      return `${file}:${p.line}:${p.column}`;
    }),
  );
}
