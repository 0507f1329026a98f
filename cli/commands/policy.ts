/** swarm policy validate: parse and check a policy file without opening the database. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parsePolicy } from '@/lib/permissions/policy';
import { ConfigFileError } from '@/lib/permissions/yaml-config';
import { expectPositionals, parseCommand } from '@/cli/args';
import type { CliContext, Env } from '@/cli/context';
import { CliError, UsageError } from '@/cli/errors';
import { clean, plural } from '@/cli/format';

export function defaultPolicyFile(env: Env): string {
  if (env.SWARM_POLICY_FILE) return env.SWARM_POLICY_FILE;
  return join(env.SWARM_CONFIG_DIR || 'config', 'permission_policies.yaml');
}

export function policyCommand(ctx: CliContext, sub: string | undefined, args: string[]): number {
  if (sub !== 'validate') throw new UsageError(sub ? `unknown command "policy ${sub}".` : 'missing subcommand: swarm policy validate [FILE].', [], true);
  const { positionals } = parseCommand(args, {});
  const [given] = expectPositionals(positionals, [], ['FILE']);
  const file = given ?? defaultPolicyFile(ctx.env);

  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read policy file ${file}: ${readProblem(error)}`);
  }
  try {
    const policy = parsePolicy(text, file);
    const byDecision = new Map<string, number>();
    for (const r of policy.rules) byDecision.set(r.decision, (byDecision.get(r.decision) ?? 0) + 1);
    const detail = [...byDecision].map(([d, n]) => `${n} ${d}`).join(', ');
    ctx.io.out(`OK: ${plural(policy.rules.length, 'rule')}${detail ? ` (${detail})` : ''} in ${file}\n`);
    return 0;
  } catch (error) {
    if (!(error instanceof ConfigFileError)) throw error;
    for (const i of error.issues) {
      ctx.io.err(`${file}:${i.line}:${i.column}: ${i.path ? `${i.path}: ` : ''}${clean(i.message)}\n`);
    }
    ctx.io.err(`${file}: invalid (${plural(error.issues.length, 'problem')}).\n`);
    return 1;
  }
}

function readProblem(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ENOENT') return 'no such file.';
  if (code === 'EISDIR') return 'it is a directory, not a file.';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied.';
  return error instanceof Error ? error.message : String(error);
}
