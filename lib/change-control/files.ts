/**
 * The files a change to the rules is made of: the same five that make a policy revision (lib/audit/revisions.ts):
 * agents, the policy, gates, hooks and MCP servers. A proposal carries their texts (null: the file is absent); this
 * module reads them from a folder, compares them with the files in force, and compiles them into the configuration
 * the policy tests and the impact replay decide under, with the active compliance profiles beside them.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { codeGateSpecs } from '@/lib/approvals/gates';
import { PLATFORM_TOOLS } from '@/lib/agents/platform-tools';
import { EMPTY_AGENTS, parseAgents } from '@/lib/config/agents';
import { DEFAULT_FLAG_VALUES } from '@/lib/config/sources';
import type { PolicyConfig } from '@/lib/config/policy-tests';
import type { RevisionContent } from '@/lib/audit/revisions';
import { AppError, isError } from '@/lib/errors';
import { NO_HOOKS, parseHooks } from '@/lib/hooks/config';
import { parseMcpConfig } from '@/lib/mcp/config';
import { EMPTY_POLICY, parsePolicy } from '@/lib/permissions/policy';
import { ConfigFileError } from '@/lib/permissions/yaml-config';
import { gatesWithProfiles, lockedFlagDefaults, withProfileRules, type ActiveProfiles } from '@/lib/profiles/load';

export const RULE_FILES = ['agents', 'policy', 'gates', 'hooks', 'mcp'] as const;
export type RuleFile = (typeof RULE_FILES)[number];

/** The texts of the five files (null: absent). */
export type RuleTexts = Record<RuleFile, string | null>;

/** The name each file has in a configuration folder (the policy's may be another in force: SWARM_POLICY_FILE). */
export const RULE_FILE_NAMES: Readonly<Record<RuleFile, string>> = {
  agents: 'agents.yaml',
  policy: 'permission_policies.yaml',
  gates: 'gates.yaml',
  hooks: 'hooks.yaml',
  mcp: 'mcp.yaml',
};

/** The largest file a proposal takes (a policy of thousands of rules is well under it). */
export const MAX_RULE_FILE_BYTES = 1024 * 1024;

/** The texts of a revision's files. */
export function textsOfRevision(content: RevisionContent): RuleTexts {
  const { agents, policy, gates, hooks = null, mcp = null } = content.files;
  return { agents, policy, gates, hooks, mcp };
}

/**
 * The texts of the five files in a folder. Throws AppError BAD_REQUEST when the folder holds none of them, or a file
 * is not a readable text file of at most MAX_RULE_FILE_BYTES.
 */
export function readRuleFolder(dir: string): RuleTexts {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new AppError('BAD_REQUEST', `${dir} is not a folder.`);
  const texts = {} as RuleTexts;
  for (const f of RULE_FILES) {
    const path = join(dir, RULE_FILE_NAMES[f]);
    if (!existsSync(path)) {
      texts[f] = null;
      continue;
    }
    if (statSync(path).size > MAX_RULE_FILE_BYTES) throw new AppError('BAD_REQUEST', `${path} is larger than ${MAX_RULE_FILE_BYTES / 1024} KiB.`);
    texts[f] = readFileSync(path, 'utf8');
  }
  if (texts.agents === null && texts.policy === null) {
    throw new AppError('BAD_REQUEST', `${dir} holds neither agents.yaml nor permission_policies.yaml: give the folder of a configuration.`);
  }
  return texts;
}

/** The files that differ between two sets of texts. */
export function changedFiles(before: RuleTexts, after: RuleTexts): RuleFile[] {
  return RULE_FILES.filter((f) => before[f] !== after[f]);
}

/**
 * Compile the texts as the server would, with these profiles (their rules, gates and locked flags), the gates declared
 * in code, and the flags at their defaults. Every file is checked, hooks and MCP servers too (their secrets need not be
 * set here); the problems of all files are thrown together as one AppError BAD_REQUEST whose details list each at its
 * file:line:column (the file named `<label>/<file name>`).
 */
export function configOfTexts(texts: RuleTexts, profiles: ActiveProfiles, label: string, options: { allowedCommands?: ReadonlySet<string> } = {}): PolicyConfig {
  const problems: ConfigFileError[] = [];
  const attempt = <T>(f: RuleFile, parse: (text: string, file: string) => T, absent: T): T => {
    const text = texts[f];
    if (text === null) return absent;
    try {
      return parse(text, `${label}/${RULE_FILE_NAMES[f]}`);
    } catch (error) {
      if (!isError(error, ConfigFileError)) throw error;
      problems.push(error);
      return absent;
    }
  };
  const agents = attempt('agents', parseAgents, EMPTY_AGENTS);
  const policy = attempt('policy', parsePolicy, EMPTY_POLICY);
  const codeGates = codeGateSpecs(PLATFORM_TOOLS);
  const gates = attempt('gates', (text, file) => gatesWithProfiles(codeGates, profiles, { text, file }), gatesWithProfiles(codeGates, profiles));
  const hooks = attempt('hooks', (text, file) => parseHooks(text, file, {}, { secrets: 'optional' }), NO_HOOKS);
  attempt('mcp', (text, file) => parseMcpConfig(text, file, {}, { secrets: 'optional', ...(options.allowedCommands ? { allowedCommands: options.allowedCommands } : {}) }), undefined);
  if (problems.length > 0) {
    throw new AppError('BAD_REQUEST', `The proposed files do not compile:\n${problems.map((p) => p.message).join('\n')}`, {
      issues: problems.flatMap((p) => p.issues.map((i) => ({ file: p.file, line: i.line, column: i.column, path: i.path, message: i.message }))),
    });
  }
  return { agents, policy: withProfileRules(policy, profiles), gates, hooks, flags: lockedFlagDefaults(DEFAULT_FLAG_VALUES, profiles) };
}
