/**
 * Compliance profiles. A profile is a folder `config/profiles/<name>/`:
 *
 *   profile.yaml   what it is, the flags it locks, retention, masking, approval requirements, the lock of a user name
 *                  after failed sign-ins, its control mapping
 *   policy.yaml    its policy rules (optional), attributed `policy:<name>/<rule id>`
 *   gates.yaml     its human-approval gates (optional), merged with the code's and config/gates.yaml
 *   tests.yaml     its policy tests (optional), run like config/policy_tests.yaml
 *
 * Pure: text in, a LoadedProfile out (or ConfigFileError with file:line:column). Selection and loading from disk are
 * in load.ts.
 */
import { z } from 'zod';
import { FLAGS_BY_NAME } from '@/lib/flags/catalog';
import { GATE_RISKS, type GateRisk } from '@/lib/permissions/gates';
import { compilePolicy, policyFileSchema, type PolicyRuleInput } from '@/lib/permissions/policy';
import { ConfigFileError, parseYamlConfigLocated, type ConfigIssue } from '@/lib/permissions/yaml-config';

export const PROFILE_NAME = /^[a-z][a-z0-9_]*$/;

/**
 * What the audit report shows as the evidence of a control (see lib/reports): each kind is one query over the audit
 * trail of the report's period.
 */
export const EVIDENCE_KINDS = [
  'denials',
  'decisions_logged',
  'approvals',
  'two_person_approvals',
  'sign_ins',
  'security_events',
  'flag_changes',
  'policy_revisions',
  'audit_reads',
  'chain_verification',
  'signed_checkpoints',
  'retention',
  'masking',
] as const;
export type EvidenceKind = (typeof EVIDENCE_KINDS)[number];

export const SERVED_BY_KINDS = ['rule', 'gate', 'flag', 'invariant', 'setting'] as const;
export type ServedByKind = (typeof SERVED_BY_KINDS)[number];
/** The settings of a profile that a control may name. */
export const PROFILE_SETTINGS = ['retention', 'masking', 'approvals', 'sign_in', 'locks', 'identity', 'decision_log', 'change_control', 'mcp'] as const;

const servedBy = z
  .string()
  .regex(/^(rule|gate|flag|invariant|setting):[A-Za-z0-9_./-]+$/, 'write kind:name, kind one of rule, gate, flag, invariant, setting')
  .transform((s) => {
    const i = s.indexOf(':');
    return { kind: s.slice(0, i) as ServedByKind, ref: s.slice(i + 1) };
  });

const controlSchema = z.strictObject({
  /** the control's identifier in its framework, e.g. "10.2.1" or "Art. 12(1)" */
  id: z.string().trim().min(1),
  framework: z.string().trim().min(1),
  title: z.string().trim().min(1),
  served_by: z.array(servedBy).min(1, 'a control is served by at least one rule, gate, flag, invariant or setting'),
  evidence: z.array(z.enum(EVIDENCE_KINDS, { error: `evidence is one of ${EVIDENCE_KINDS.join(', ')}` })).min(1),
  /** how the product serves the control, in a sentence an auditor can check */
  how: z.string().trim().min(1),
});

export const profileFileSchema = z.strictObject({
  version: z.literal(1).default(1),
  title: z.string().trim().min(1),
  description: z.string().trim().min(1),
  /** the frameworks it maps, as cited: "PCI DSS v4.0 requirement 10" */
  frameworks: z.array(z.string().trim().min(1)).min(1),
  /** flags held at a value while the profile is active: every layer that tries to change them is refused and recorded */
  locks: z.record(z.string(), z.boolean()).default({}),
  retention: z
    .strictObject({
      /** audit rows younger than this are never archived out of the live trail */
      min_days: z.number().int().min(1).max(36_500),
      basis: z.string().trim().min(1),
    })
    .optional(),
  masking: z
    .strictObject({
      /** argument keys (any depth, case-insensitive) whose values are masked in the trail, beyond the built-in detectors */
      keys: z.array(z.string().regex(/^[A-Za-z0-9_-]+$/, 'a key name: letters, digits, "_" or "-"')).min(1),
      basis: z.string().trim().min(1),
    })
    .optional(),
  approvals: z
    .strictObject({
      /** every gate of this risk or higher needs at least this many distinct approvers while the profile is active */
      two_person_from_risk: z.enum(GATE_RISKS, { error: 'two_person_from_risk is low, medium or high' }),
      basis: z.string().trim().min(1),
    })
    .optional(),
  sign_in: z
    .strictObject({
      /** a user name is locked after this many failed sign-ins in a row (PCI DSS 8.3.4: at most 10) */
      lock_after_failures: z.number().int().min(1).max(1_000),
      /** and stays locked this long (PCI DSS 8.3.4: at least 30 minutes) */
      lock_minutes: z.number().int().min(1).max(10_080),
      basis: z.string().trim().min(1),
    })
    .optional(),
  identity: z
    .strictObject({
      /** a new token expires this many days after it is made (`swarm tokens add --expires` may ask for less) */
      token_max_days: z.number().int().min(1).max(3_650).optional(),
      /** a token unused this many days is disabled by the sweeper (recorded as token.disabled) */
      token_inactive_days: z.number().int().min(1).max(3_650).optional(),
      /** break_glass: passwords only for config/sso.yaml's break_glass_user, whatever the file says (password: no demand) */
      local_login: z.enum(['password', 'break_glass']).optional(),
      basis: z.string().trim().min(1),
    })
    .optional(),
  change_control: z
    .strictObject({
      /** how many people other than the proposer must approve a change to the rules before it is activated */
      approvers: z.number().int().min(1).max(10),
      /** the roles whose members may approve */
      roles: z.array(z.enum(['viewer', 'auditor', 'operator', 'admin'], { error: 'a role: viewer, auditor, operator or admin' })).min(1),
      basis: z.string().trim().min(1),
    })
    .optional(),
  decision_log: z
    .strictObject({
      /**
       * the fraction of allowed and asked decisions kept in the trail while decision_log_all is off (denials are all
       * kept): chosen by the decision id, so every server keeps the same ones (lib/audit/trail/sampling.ts)
       */
      sample: z.number({ error: 'sample is a number, more than 0 and at most 1' }).gt(0, 'sample is more than 0 (to keep none, leave decision_log out)').max(1, 'sample is at most 1 (1 keeps every decision)'),
      basis: z.string().trim().min(1),
    })
    .optional(),
  mcp: z
    .strictObject({
      /**
       * a tool an MCP upstream lists for the first time is held until an operator accepts its definition, as a changed
       * one is (lib/mcp/pins), instead of being pinned as it is at first sight
       */
      hold_new_tools: z.boolean(),
      basis: z.string().trim().min(1),
    })
    .optional(),
  controls: z.array(controlSchema).default([]),
});

/** A profile as read (parseProfile): its settings under the product's names, its rules and its control mapping. */
export type LoadedProfile = ReturnType<typeof parseProfile>;
export type ControlMapping = LoadedProfile['controls'][number];

export interface ProfileTexts {
  profile: string;
  policy?: string;
  gates?: string;
  tests?: string;
}

/**
 * Parse a profile's profile.yaml and policy.yaml (its gates and tests are parsed where gates and tests are, with the
 * rest of the configuration). Throws ConfigFileError naming the file, line and column.
 */
export function parseProfile(name: string, folder: string, texts: ProfileTexts) {
  const profileFile = `${folder}/profile.yaml`;
  const { data, at } = parseYamlConfigLocated(texts.profile, profileFile, profileFileSchema);
  const issues: ConfigIssue[] = [];
  const issue = (path: (string | number)[], message: string) => issues.push({ ...at(path), path: path.join('.'), message });

  for (const [flag, value] of Object.entries(data.locks)) {
    const def = FLAGS_BY_NAME.get(flag);
    if (!def) issue(['locks', flag], `"${flag}" names no flag in the catalog`);
    else if (def.tier === 'invariant' && value !== def.defaultValue) issue(['locks', flag], `"${flag}" is an invariant: it is always ${def.defaultValue ? 'on' : 'off'}`);
  }

  // A rate beside a lock of decision_log_all on would never apply (every decision is kept): refused, not ignored, so
  // that nobody reads the profile as sampling its decisions.
  if (data.decision_log && data.locks.decision_log_all === true) issue(['decision_log'], 'the profile locks decision_log_all on, which keeps every decision: a sample would never apply');

  const policyFile = `${folder}/policy.yaml`;
  let rules: PolicyRuleInput[] = [];
  let rulePositions: string[] = [];
  if (texts.policy !== undefined) {
    const policy = parseYamlConfigLocated(texts.policy, policyFile, policyFileSchema);
    rules = (policy.data.rules ?? []).map((r) => ({ ...r, id: `${name}/${r.id}` }));
    rulePositions = rules.map((_, i) => {
      const p = policy.at(['rules', i]);
      return `${policyFile}:${p.line}:${p.column}`;
    });
    // Conditions are compiled (and type-checked) here, so a bad `when` stops the profile at load with its position.
    compilePolicy(rules, rulePositions);
  }

  const ruleIds = new Set(rules.map((r) => r.id.slice(name.length + 1)));
  data.controls.forEach((c, i) =>
    c.served_by.forEach((s, j) => {
      const where = ['controls', i, 'served_by', j];
      if (s.kind === 'rule' && !ruleIds.has(s.ref)) issue(where, `rule "${s.ref}" is not a rule of ${policyFile}`);
      if ((s.kind === 'flag' || s.kind === 'invariant') && !FLAGS_BY_NAME.has(s.ref)) issue(where, `"${s.ref}" names no flag in the catalog`);
      if (s.kind === 'invariant' && FLAGS_BY_NAME.get(s.ref)?.tier !== 'invariant' && FLAGS_BY_NAME.has(s.ref)) issue(where, `"${s.ref}" is not an invariant`);
      if (s.kind === 'setting' && !(PROFILE_SETTINGS as readonly string[]).includes(s.ref)) issue(where, `setting is one of ${PROFILE_SETTINGS.join(', ')}`);
      if (s.kind === 'setting' && s.ref !== 'locks' && data[s.ref as Exclude<(typeof PROFILE_SETTINGS)[number], 'locks'>] === undefined) {
        issue(where, `the profile has no "${s.ref}" setting`);
      }
    }),
  );
  if (issues.length > 0) throw new ConfigFileError(profileFile, issues);

  return {
    name,
    title: data.title,
    description: data.description,
    frameworks: data.frameworks,
    /** the folder as shown to people: relative to the working directory, never an absolute server path */
    folder,
    locks: new Map(Object.entries(data.locks)),
    retention: data.retention && { minDays: data.retention.min_days, basis: data.retention.basis },
    masking: data.masking && { keys: data.masking.keys, basis: data.masking.basis },
    approvals: data.approvals && { twoPersonFromRisk: data.approvals.two_person_from_risk, basis: data.approvals.basis },
    /** the lock of a user name after failed sign-ins (lib/auth/login.ts) */
    signIn: data.sign_in && { lockAfterFailures: data.sign_in.lock_after_failures, lockMinutes: data.sign_in.lock_minutes, basis: data.sign_in.basis },
    /** the lifecycle of tokens (lib/auth/store.ts): their longest life and the inactivity that disables them */
    identity: data.identity && { tokenMaxDays: data.identity.token_max_days, tokenInactiveDays: data.identity.token_inactive_days, localLogin: data.identity.local_login, basis: data.identity.basis },
    /** policy change control (lib/change-control): the configuration in force changes only through approved proposals */
    changeControl: data.change_control && { approvers: data.change_control.approvers, roles: data.change_control.roles, basis: data.change_control.basis },
    /** the sampling of allowed and asked decisions into the trail while decision_log_all is off (the recorder) */
    decisionLog: data.decision_log && { sample: data.decision_log.sample, basis: data.decision_log.basis },
    /** the MCP gateway's pins (lib/mcp/pins): whether a tool first seen is held for review instead of pinned as it is */
    mcp: data.mcp && { holdNewTools: data.mcp.hold_new_tools, basis: data.mcp.basis },
    /** its policy rules, ids already prefixed `<name>/` (attributed `policy:<name>/<id>`) */
    rules,
    /** file:line:column of each rule */
    rulePositions,
    controls: data.controls.map((c, i) => {
      const p = at(['controls', i]);
      return { id: c.id, framework: c.framework, title: c.title, servedBy: c.served_by, evidence: c.evidence, how: c.how, position: `${profileFile}:${p.line}:${p.column}` };
    }),
    /** the files it was read from, for the revision and the report (display paths) */
    files: {
      profile: texts.profile,
      ...(texts.policy === undefined ? {} : { policy: texts.policy }),
      ...(texts.gates === undefined ? {} : { gates: texts.gates }),
      ...(texts.tests === undefined ? {} : { tests: texts.tests }),
    },
  };
}
