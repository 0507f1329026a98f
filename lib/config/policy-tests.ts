/**
 * Policy tests as code: `config/policy_tests.yaml` (and `*.test.yaml` beside a profile's policy file) hold cases
 *   { name, input: { agent, tool, args, principal?, flags?, approval?, annotations? }, expect: { decision, rule_source } }
 * run against a configuration (agents, policy, gates) with an engine of its own: no database, nothing recorded.
 * `swarm policy test` runs them; a hot reload whose tests fail is refused like a malformed file.
 */
import type { HooksConfig } from '@/lib/hooks/config';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';
import { z } from 'zod';
import { authorize, ROLES, type ApprovalStatus, type CheckResult, type Principal } from '@/lib/permissions';
import type { GateSet } from '@/lib/permissions/gates';
import { decisionSchema, type CompiledPolicy } from '@/lib/permissions/policy';
import type { AgentDirectory } from '@/lib/permissions/sources';
import { parseYamlConfigLocated } from '@/lib/permissions/yaml-config';
import { toolAnnotationsSchema } from '@/lib/permissions/annotations';
import { agentDirectory, agentMapSchema } from './agents';
import { builtInSources, DEFAULT_FLAG_VALUES } from './sources';
import { brand } from '@/lib/errors';

const caseSchema = z.strictObject({
  name: z.string().trim().min(1),
  input: z.strictObject({
    agent: z.string().min(1),
    tool: z.string().min(1),
    args: z.record(z.string(), z.unknown()).default({}),
    principal: z
      .strictObject({ id: z.string().min(1), role: z.enum(ROLES).default('viewer'), kind: z.enum(['user', 'agent']).default('user') })
      .optional(),
    /** flag values for this case; every other flag has its declared default */
    flags: z.record(z.string(), z.boolean()).default({}),
    /** the approval state of this exact call (default: none) */
    approval: z.enum(['none', 'pending', 'approved', 'rejected', 'expired']).default('none'),
    /** the time conditions see as `now`, ISO 8601 */
    now: z.iso.datetime({ offset: true }).optional(),
    /**
     * the MCP annotations the call's tool declares, as if it came through the MCP gateway (`{}`: a tool that declares
     * none, so the specification's defaults apply); absent: a call from elsewhere, which no annotations rule matches
     */
    annotations: toolAnnotationsSchema.optional(),
  }),
  expect: z.strictObject({ decision: decisionSchema, rule_source: z.string().min(1).optional() }),
});

export const policyTestsFileSchema = z.strictObject({
  version: z.literal(1).default(1),
  /**
   * agents of the file's own (optional): its cases run with these instead of config/agents.yaml, so a compliance
   * profile's tests hold whatever agents an operator runs
   */
  agents: agentMapSchema.optional(),
  tests: z.array(caseSchema).nullable().default([]),
});

export interface PolicyTestCase extends z.output<typeof caseSchema> {
  /** file:line:column of the case */
  position: string;
  /** the file's own agents, when it declares them */
  agents?: AgentDirectory;
}

export interface PolicyTests {
  readonly files: readonly string[];
  readonly cases: readonly PolicyTestCase[];
}

export const NO_POLICY_TESTS: PolicyTests = { files: [], cases: [] };

export function parsePolicyTests(text: string, file: string): PolicyTests {
  const { data, at } = parseYamlConfigLocated(text, file, policyTestsFileSchema);
  const agents = data.agents === undefined ? undefined : agentDirectory(data.agents);
  const cases = (data.tests ?? []).map((c, i) => {
    const p = at(['tests', i]);
    return { ...c, position: `${file}:${p.line}:${p.column}`, ...(agents ? { agents } : {}) };
  });
  return { files: [file], cases };
}

/** The test files of a configuration: `<configDir>/policy_tests.yaml` and `<policy file>.test.yaml`, those that exist. */
export function policyTestFiles(configDir: string, policyFile: string): string[] {
  // Paths chosen at run time: the build must not trace the file system for them.
  const beside = join(/*turbopackIgnore: true*/ dirname(policyFile), `${basename(policyFile).replace(/\.ya?ml$/, '')}.test.yaml`);
  return [join(/*turbopackIgnore: true*/ configDir, 'policy_tests.yaml'), beside].filter((f, i, all) => existsSync(f) && all.indexOf(f) === i);
}

export function loadPolicyTests(files: readonly string[], display: (f: string) => string = (f) => f): PolicyTests {
  const parsed = files.map((f) => parsePolicyTests(readFileSync(f, 'utf8'), display(f)));
  return { files: parsed.flatMap((p) => p.files), cases: parsed.flatMap((p) => p.cases) };
}

export interface PolicyConfig {
  agents: AgentDirectory;
  policy: CompiledPolicy;
  gates: GateSet;
  /** flag values before a case's own (default: every flag at its declared default); the profiles' locks are here */
  flags?: ReadonlyMap<string, boolean>;
  /** the hooks in force (config/hooks.yaml): the impact replay runs those that block or rewrite */
  hooks?: HooksConfig;
}

export interface CaseResult {
  case: PolicyTestCase;
  passed: boolean;
  got: Pick<CheckResult, 'decision' | 'ruleSource' | 'reason'>;
}

/** Run every case against this configuration. Pure: an engine of its own, no store, nothing recorded. */
export function runPolicyTests(config: PolicyConfig, tests: PolicyTests): CaseResult[] {
  return tests.cases.map((c) => {
    const flags = new Map(config.flags ?? DEFAULT_FLAG_VALUES);
    for (const [k, v] of Object.entries(c.input.flags)) flags.set(k, v);
    const approval: ApprovalStatus = c.input.approval;
    // The pure decision: this configuration, the case's flags, and the approval state the case names (no store).
    const snapshot = { sources: builtInSources(() => c.agents ?? config.agents, () => config.policy), gates: config.gates, flags };
    const principal: Principal = c.input.principal
      ? { kind: c.input.principal.kind, id: c.input.principal.id, role: c.input.principal.role, agent: c.input.principal.kind === 'agent' ? c.input.principal.id : undefined }
      : { kind: 'agent', id: c.input.agent, role: 'viewer', agent: c.input.agent };
    const r = authorize(
      snapshot,
      {
        kind: 'tool',
        principal,
        agent: c.input.agent,
        tool: c.input.tool,
        arguments: c.input.args,
        annotations: c.input.annotations,
        now: c.input.now === undefined ? undefined : Date.parse(c.input.now),
      },
      approval === 'none' ? {} : { approval: { status: approval, id: 'apr_policy_test' } },
    );
    const passed = r.decision === c.expect.decision && (c.expect.rule_source === undefined || r.ruleSource === c.expect.rule_source);
    return { case: c, passed, got: { decision: r.decision, ruleSource: r.ruleSource, reason: r.reason } };
  });
}

/** One line per failure, for a refused reload and for the CLI. */
export function describeFailure(r: CaseResult): string {
  const want = `${r.case.expect.decision}${r.case.expect.rule_source ? ` ${r.case.expect.rule_source}` : ''}`;
  return `${r.case.position}: policy test "${r.case.name}" failed: expected ${want}, got ${r.got.decision} ${r.got.ruleSource} (${r.got.reason})`;
}

export class PolicyTestsFailed extends Error {
  static readonly kind = 'PolicyTestsFailed';
  readonly code = 'POLICY_TESTS_FAILED';
  constructor(readonly failures: readonly CaseResult[]) {
    super(`${failures.length} policy test${failures.length === 1 ? '' : 's'} failed:\n${failures.map(describeFailure).join('\n')}`);
    brand(this, PolicyTestsFailed);
  }
}

/** Throws PolicyTestsFailed when a case fails: the check a reload must pass before it takes effect. */
export function assertPolicyTests(config: PolicyConfig, tests: PolicyTests): void {
  const failed = runPolicyTests(config, tests).filter((r) => !r.passed);
  if (failed.length > 0) throw new PolicyTestsFailed(failed);
}
