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
import { actAs, cliActor, withAnyApp, type CliContext, type Env } from '@/cli/context';
import { configOfTexts, readRuleFolder } from '@/lib/change-control/files';
import { AppError, messageOf, isError } from '@/lib/errors';
import { impactDigest, type Actor } from '@/lib/change-control/service';
import type { Proposal } from '@/lib/change-control/store';
import type { App } from '@/lib/app';
import { CliError, UsageError } from '@/cli/errors';
import { impactOf, recordedCalls, type ImpactReport } from '@/lib/audit/impact';
import { durationSchema } from '@/lib/permissions/gates';
import { clean, plural, printJson } from '@/cli/format';

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

export function policyCommand(ctx: CliContext, sub: string | undefined, args: string[]): number | Promise<number> {
  return runSubcommand<number | Promise<number>>(ctx, 'policy', sub, args, { validate, test, impact, propose, proposals, vote, history, rollback }, ' [FILE]');
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
    if (!isError(error, ConfigFileError)) throw error;
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
  const agentsPath = join(configDir(env), 'agents.yaml');
  const gatesPath = join(configDir(env), 'gates.yaml');
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
    if (!isError(error, ConfigFileError)) throw error;
    printIssues(ctx, error);
    ctx.io.err('A compliance profile does not compile; no test was run.\n');
    return EXIT_DOES_NOT_COMPILE;
  }
  const files = given ? [given] : [...policyTestFiles(configDir(ctx.env), defaultPolicyFile(ctx.env)), ...profileTestFiles(configDir(ctx.env), profiles)];
  if (files.length === 0) {
    throw new CliError(`no policy tests: write ${join(configDir(ctx.env), 'policy_tests.yaml')} (see docs/permissions.md, "Testing policy").`);
  }
  for (const f of files) readText(f, 'policy test file');
  let config: PolicyConfig;
  let tests;
  try {
    config = loadConfig(ctx.env, profiles);
    tests = loadPolicyTests(files);
  } catch (error) {
    if (!isError(error, ConfigFileError)) throw error;
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

/** Exit status of `swarm policy impact` when some recorded call would be decided otherwise (0: none would). */
export const EXIT_IMPACT = 5;

/** The start of the period `--since` names (default: the last seven days), in seconds since the epoch. */
function sinceOf(value: string | undefined): number {
  const since = durationSchema.safeParse(value ?? '7d');
  if (!since.success) throw new UsageError(`--since: ${since.error.issues[0]?.message ?? 'not a duration'}`);
  return Date.now() / 1000 - since.data;
}

/** Whether an error is the refusal of files that do not compile (configOfTexts: its details list each problem). */
function doesNotCompile(error: unknown): error is AppError {
  return isError(error, AppError) && typeof error.details === 'object' && error.details !== null && 'issues' in error.details;
}

/** Seconds since the epoch to the minute, as the listings show it. */
const minute = (seconds: number): string => `${new Date(seconds * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/**
 * `swarm policy impact DIR [--since 7d] [--json]`: the recorded calls of the period decided again under the
 * configuration in DIR and under the one in force (lib/audit/impact.ts). Exit 0 when nothing changes, 5 when
 * something does, 3 when DIR does not compile: a CI job on a policy repository shows it on every pull request.
 */
async function impact(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, { since: { type: 'string' }, json: { type: 'boolean' } });
  const [dir] = expectPositionals(positionals, ['DIR']);
  const from = sinceOf(values.since);
  let candidate: PolicyConfig;
  try {
    candidate = configOfTexts(readRuleFolder(dir!), activeProfiles(ctx.env, dir!), dir!);
  } catch (error) {
    if (doesNotCompile(error)) {
      ctx.io.err(`${error.message}\nThe proposed configuration does not compile; nothing was replayed.\n`);
      return EXIT_DOES_NOT_COMPILE;
    }
    // any other refusal (not a folder, a file too large) is an AppError, reported as `error: …` like a CliError
    if (!isError(error, ConfigFileError)) throw error;
    printIssues(ctx, error);
    ctx.io.err('A compliance profile does not compile; nothing was replayed.\n');
    return EXIT_DOES_NOT_COMPILE;
  }
  return withAnyApp(ctx, async (app) => {
    const started = performance.now();
    const report = await impactOf(recordedCalls(app.database, from), app.policyConfig(), candidate, app.flags.values());
    const seconds = (performance.now() - started) / 1000;
    const status = report.changed > 0 ? EXIT_IMPACT : 0;
    if (values.json) return printJson(ctx.io, { directory: dir, since: from, ...report, seconds: Math.round(seconds * 1000) / 1000 }, status);
    printImpact(ctx, dir!, from, report, seconds);
    return status;
  });
}

/** A sampling rate as people read it: 10%, 2.5%, 0.1%. */
function samplePercent(rate: number): string {
  return `${Number((rate * 100).toPrecision(3))}%`;
}

function printImpact(ctx: CliContext, dir: string, from: number, r: ImpactReport, seconds: number): void {
  const out = (line = '') => ctx.io.out(`${line}\n`);
  out(`Replayed ${r.replayed.toLocaleString('en-US')} recorded tool calls since ${minute(from)} under ${dir} and under the configuration in force (${seconds.toFixed(1)} s).`);
  // Denials are all recorded; allowed calls may be a profile's sample: a newly denied count is then of the sample.
  if (r.allowed_sample_rate !== null && r.allowed_sample_rate < 1) {
    out(`Allowed calls are a ${samplePercent(r.allowed_sample_rate)} sample: counts of newly denied calls are of the sample.`);
  }
  if (r.changed === 0) {
    out('Nothing changes: every call is decided alike, by the same rule.');
    return;
  }
  out(`${plural(r.changed, 'call')} would be decided otherwise:`);
  const d = r.by_direction;
  out(`  newly denied ${d.newly_denied}, newly allowed ${d.newly_allowed}, newly asking ${d.newly_asking}, same decision by another rule ${d.other_rule}`);
  out(`  by agent: ${r.by_agent.slice(0, 10).map((a) => `${clean(a.agent)} ${a.count}`).join(', ')}`);
  out(`  by tool:  ${r.by_tool.slice(0, 10).map((t) => `${clean(t.tool)} ${t.count}`).join(', ')}`);
  out('Examples:');
  if (r.uncertain > 0) out(`(${plural(r.uncertain, 'replayed call')} had masked arguments that a rule reads: uncertain, marked below where they changed)`);
  for (const e of r.examples) {
    out(`  ${e.decision_id ?? '(no id)'}  ${clean(e.agent)} ${clean(e.tool)}: ${e.before.decision} ${clean(e.before.rule_source)} -> ${e.after.decision} ${clean(e.after.rule_source)}${e.uncertain ? ' (uncertain)' : ''}`);
  }
}

/** Who proposes or rolls back: the user of --as (checked like the REST route), else the command line's user as an admin. */
async function actorOf(app: App, as: string | undefined, ctx: CliContext, path: string): Promise<Actor> {
  if (!as) return { id: cliActor(ctx.env), role: 'admin' };
  const p = await actAs(app, as, { method: 'POST', path, role: 'admin' });
  return { id: p.id, role: p.role };
}

function printProposal(ctx: CliContext, p: Proposal): void {
  const out = (line = '') => ctx.io.out(`${line}\n`);
  const d = impactDigest(p.impact);
  out(`${p.id}  ${p.kind}  ${p.status}${p.emergency ? ' (emergency)' : ''}  by ${clean(p.proposedBy)}  ${minute(p.proposedAt)}`);
  out(`  ${clean(p.message)}`);
  out(`  revision ${p.revision} (against ${p.baseRevision ?? 'none'})`);
  out(`  tests: ${p.tests.passed} passed, ${p.tests.failed} failed${p.tests.failed > 0 ? ' (it cannot be approved)' : ''}`);
  for (const f of p.tests.failures) out(`    ${clean(f.message)}`);
  out(`  impact: ${d.replayed.toLocaleString('en-US')} calls replayed, ${d.changed} decided otherwise (newly denied ${d.newly_denied}, newly allowed ${d.newly_allowed}, newly asking ${d.newly_asking}, other rule ${d.other_rule}); ${d.uncertain} uncertain`);
  if (p.status === 'open') out(`  needs ${plural(p.approvalsRequired, 'approval')} from ${p.approverRoles.join(' or ')} users other than the proposer`);
}

/**
 * `swarm policy propose DIR -m "why" [--as USER] [--since 7d] [--json]`: store the files of DIR as a proposal with its
 * impact and its policy tests' result (DIR's policy_tests.yaml when it has one). Exit 0; 3 when DIR does not compile.
 */
async function propose(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, { message: { type: 'string', short: 'm' }, as: { type: 'string' }, since: { type: 'string' }, json: { type: 'boolean' } });
  const [dir] = expectPositionals(positionals, ['DIR']);
  if (!values.message?.trim()) throw new UsageError('-m "why": a proposal says why the change is made.');
  const since = sinceOf(values.since);
  const texts = readRuleFolder(dir!);
  const testFile = join(dir!, 'policy_tests.yaml');
  const tests = existsSync(testFile) ? loadPolicyTests([testFile]) : undefined;
  return withAnyApp(ctx, async (app) => {
    const by = await actorOf(app, values.as, ctx, '/api/v1/policy/proposals');
    let p: Proposal;
    try {
      p = await app.changeControl.propose({ texts, message: values.message!, by, tests, since });
    } catch (error) {
      if (doesNotCompile(error)) {
        ctx.io.err(`${error.message}\nNothing was proposed.\n`);
        return EXIT_DOES_NOT_COMPILE;
      }
      throw error;
    }
    if (values.json) return printJson(ctx.io, p);
    printProposal(ctx, p);
    ctx.io.out(app.changeControl.enforced ? `Review it at /policy/${p.id}.\n` : `Change control is off (no active profile asks for it): the review at /policy/${p.id} is advisory; deploy the files as usual.\n`);
    return 0;
  });
}

/** `swarm policy proposals [--status open] [--json]`: the proposals, newest first. */
async function proposals(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, { status: { type: 'string' }, json: { type: 'boolean' } });
  expectPositionals(positionals, []);
  const statuses = ['open', 'approved', 'activated', 'rejected', 'withdrawn'] as const;
  const status = values.status as (typeof statuses)[number] | undefined;
  if (status !== undefined && !statuses.includes(status)) throw new UsageError(`--status is one of ${statuses.join(', ')}`);
  return withAnyApp(ctx, async (app) => {
    const list = await app.changeControl.store.proposals({ status });
    if (values.json) return printJson(ctx.io, list);
    if (list.length === 0) ctx.io.out('No proposals.\n');
    else for (const p of list) printProposal(ctx, p);
    return 0;
  });
}

/** `swarm policy vote ID approve|reject -m "why" --as USER`: a person's vote (the last approval needed activates it). */
async function vote(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, { message: { type: 'string', short: 'm' }, as: { type: 'string' } });
  const [id, choice] = expectPositionals(positionals, ['ID', 'approve|reject']);
  if (choice !== 'approve' && choice !== 'reject') throw new UsageError('the vote is approve or reject');
  if (!values.as) throw new UsageError('--as USER: a vote is a person\'s, and the proposer cannot approve their own.');
  if (!values.message?.trim()) throw new UsageError('-m "why": a vote needs a reason.');
  return withAnyApp(ctx, async (app) => {
    const p = await actAs(app, values.as!, { method: 'POST', path: `/api/v1/policy/proposals/${id}/votes`, role: 'viewer' });
    const r = await app.changeControl.vote(id!, { id: p.id, role: p.role }, choice, values.message!);
    printProposal(ctx, r.proposal);
    if (r.activation !== undefined) ctx.io.out(`Activated (activation ${r.activation}): every server puts it in force within a second.\n`);
    return 0;
  });
}

/** `swarm policy history [--json]`: every activation, newest first. */
async function history(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, { json: { type: 'boolean' } });
  expectPositionals(positionals, []);
  return withAnyApp(ctx, async (app) => {
    const list = await app.changeControl.store.activations();
    if (values.json) return printJson(ctx.io, list);
    if (list.length === 0) ctx.io.out(app.changeControl.enforced ? 'No activation yet.\n' : 'Change control is off: the files on disk are the rules, and nothing is activated.\n');
    for (const a of list) {
      ctx.io.out(`${String(a.seq).padStart(4)}  ${minute(a.activatedAt)}  ${a.revision}  ${a.kind.padEnd(9)}  ${a.proposalId ?? '-'}  by ${clean(a.activatedBy)}\n`);
    }
    return 0;
  });
}

/**
 * `swarm policy rollback REVISION -m "why" [--as USER] [--emergency]`: propose going back to an earlier activation's
 * files; with --emergency, the break-glass path: activated at once, without votes, recorded as an emergency rollback.
 */
async function rollback(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, { message: { type: 'string', short: 'm' }, as: { type: 'string' }, emergency: { type: 'boolean' } });
  const [revision] = expectPositionals(positionals, ['REVISION']);
  if (!values.message?.trim()) throw new UsageError('-m "why": a rollback says why.');
  return withAnyApp(ctx, async (app) => {
    const by = await actorOf(app, values.as, ctx, '/api/v1/policy/rollback');
    if (values.emergency) {
      const r = await app.changeControl.emergencyRollback(revision!, values.message!, by);
      printProposal(ctx, r.proposal);
      ctx.io.out(`Emergency rollback activated (activation ${r.activation}) and recorded as such; review it at /policy/${r.proposal.id}.\n`);
      return 0;
    }
    const p = await app.changeControl.proposeRollback(revision!, values.message!, by);
    printProposal(ctx, p);
    ctx.io.out(`Review it at /policy/${p.id}.\n`);
    return 0;
  });
}
