/**
 * swarm policy validate|test: check a policy without opening the database.
 *   validate [FILE]  parse and compile; warn about rules that can never decide (exit 1 on an invalid file)
 *   test [FILE]      run the policy tests against the configuration, the active compliance profiles (SWARM_PROFILE)
 *                    included (exit 0 all pass, 3 does not compile, 4 a test failed)
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAgents } from '@/lib/config/agents';
import { codeGateSpecs } from '@/lib/approvals/gates';
import { PLATFORM_TOOLS } from '@/lib/agents/platform-tools';
import { describeFailure, loadPolicyTests, policyTestFiles, runPolicyTests, type PolicyConfig } from '@/lib/config/policy-tests';
import { DEFAULT_FLAG_VALUES } from '@/lib/config/sources';
import { activeProfiles, gatesWithProfiles, lockedFlagDefaults, profileTestFiles, withProfileRules, type ActiveProfiles } from '@/lib/profiles/load';
import { parsePolicy } from '@/lib/permissions/policy';
import { lintPolicy } from '@/lib/permissions/policy-lint';
import { ConfigFileError } from '@/lib/permissions/yaml-config';
import { expectPositionals, parseCommand, runSubcommand } from '@/cli/args';
import type { CliContext, Env } from '@/cli/context';
import { CliError } from '@/cli/errors';
import { clean, plural } from '@/cli/format';
import { messageOf } from '@/lib/errors';

/** Exit statuses of `swarm policy test`, as `cerbos compile` uses them. */
export const EXIT_DOES_NOT_COMPILE = 3;
export const EXIT_TEST_FAILED = 4;

export function configDir(env: Env): string {
  return env.SWARM_CONFIG_DIR || 'config';
}

export function defaultPolicyFile(env: Env): string {
  if (env.SWARM_POLICY_FILE) return env.SWARM_POLICY_FILE;
  return join(configDir(env), 'permission_policies.yaml');
}

export function policyCommand(ctx: CliContext, sub: string | undefined, args: string[]): number {
  return runSubcommand(ctx, 'policy', sub, args, { validate, test }, ' [FILE]');
}

function readText(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read ${what} ${file}: ${readProblem(error)}`);
  }
}

function printIssues(ctx: CliContext, error: ConfigFileError): void {
  for (const i of error.issues) ctx.io.err(`${error.file}:${i.line}:${i.column}: ${i.path ? `${i.path}: ` : ''}${clean(i.message)}\n`);
  ctx.io.err(`${error.file}: invalid (${plural(error.issues.length, 'problem')}).\n`);
}

function validate(ctx: CliContext, args: string[]): number {
  const { positionals } = parseCommand(args, {});
  const [given] = expectPositionals(positionals, [], ['FILE']);
  const file = given ?? defaultPolicyFile(ctx.env);
  const text = readText(file, 'policy file');
  try {
    const policy = parsePolicy(text, file);
    const byDecision = new Map<string, number>();
    for (const r of policy.rules) byDecision.set(r.decision, (byDecision.get(r.decision) ?? 0) + 1);
    const detail = [...byDecision].map(([d, n]) => `${n} ${d}`).join(', ');
    ctx.io.out(`OK: ${plural(policy.rules.length, 'rule')}${detail ? ` (${detail})` : ''} in ${file}\n`);
    for (const w of lintPolicy(policy)) ctx.io.err(`${w.rule.position ?? file}: warning: ${clean(w.message)}\n`);
    return 0;
  } catch (error) {
    if (!(error instanceof ConfigFileError)) throw error;
    printIssues(ctx, error);
    return 1;
  }
}

/**
 * The configuration the server would run: agents, the policy file with the active compliance profiles' rules, and the
 * gates (code and profiles merged with gates.yaml, the profiles' requirements applied), flags at their defaults with
 * the profiles' locks.
 */
function loadConfig(env: Env, profiles: ActiveProfiles): PolicyConfig {
  const dir = configDir(env);
  const agentsPath = join(dir, 'agents.yaml');
  const gatesPath = join(dir, 'gates.yaml');
  const policyPath = defaultPolicyFile(env);
  return {
    agents: parseAgents(readText(agentsPath, 'agents file'), agentsPath),
    policy: withProfileRules(parsePolicy(readText(policyPath, 'policy file'), policyPath), profiles),
    gates: gatesWithProfiles(codeGateSpecs(PLATFORM_TOOLS), profiles, existsSync(gatesPath) ? { text: readText(gatesPath, 'gates file'), file: gatesPath } : undefined),
    flags: lockedFlagDefaults(DEFAULT_FLAG_VALUES, profiles),
  };
}

function test(ctx: CliContext, args: string[]): number {
  const { positionals } = parseCommand(args, {});
  const [given] = expectPositionals(positionals, [], ['FILE']);
  let profiles: ActiveProfiles;
  try {
    profiles = activeProfiles(ctx.env, configDir(ctx.env));
  } catch (error) {
    if (!(error instanceof ConfigFileError)) throw error;
    printIssues(ctx, error);
    ctx.io.err('A compliance profile does not compile; no test was run.\n');
    return EXIT_DOES_NOT_COMPILE;
  }
  const files = given ? [given] : [...policyTestFiles(configDir(ctx.env), defaultPolicyFile(ctx.env)), ...profileTestFiles(configDir(ctx.env), profiles)];
  if (files.length === 0) {
    throw new CliError(`no policy tests: write ${join(configDir(ctx.env), 'policy_tests.yaml')} (see the README, "Testing policy").`);
  }
  for (const f of files) readText(f, 'policy test file');
  let config: PolicyConfig;
  let tests;
  try {
    config = loadConfig(ctx.env, profiles);
    tests = loadPolicyTests(files);
  } catch (error) {
    if (!(error instanceof ConfigFileError)) throw error;
    printIssues(ctx, error);
    ctx.io.err('The policy does not compile; no test was run.\n');
    return EXIT_DOES_NOT_COMPILE;
  }
  const results = runPolicyTests(config, tests);
  for (const r of results) {
    if (r.passed) ctx.io.out(`PASS  ${clean(r.case.name)}  (${r.got.decision} ${r.got.ruleSource})\n`);
    else ctx.io.out(`FAIL  ${clean(r.case.name)}\n      ${clean(describeFailure(r))}\n`);
  }
  const failed = results.filter((r) => !r.passed).length;
  ctx.io.out(`${results.length - failed} passed, ${failed} failed (${plural(results.length, 'test')} in ${files.join(', ')})\n`);
  return failed > 0 ? EXIT_TEST_FAILED : 0;
}

function readProblem(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ENOENT') return 'no such file.';
  if (code === 'EISDIR') return 'it is a directory, not a file.';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied.';
  return messageOf(error);
}
