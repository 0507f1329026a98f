/**
 * Which profiles are active, and what they add up to. `SWARM_PROFILE=bfsi` (or `bfsi,eu_ai_act_high_risk`), else
 * `profile:` in `<config dir>/swarm.yaml`, else none. Profiles are read once, at start: an unknown profile or a
 * malformed file stops the start with the list of known profiles or the file, line and column. Combining profiles
 * takes the strictest of each setting; two profiles that lock one flag to different values cannot be combined.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { displayPath } from '@/lib/config/watched-file';
import { z } from 'zod';
import { AppError } from '@/lib/errors';
import { GATE_RISKS, type GateRisk, type GateSet, type GateSpec, mergeGates, parseGates, parseGateSpecs } from '@/lib/permissions/gates';
import { compilePolicy, type CompiledPolicy, type PolicyRuleInput } from '@/lib/permissions/policy';
import { ConfigFileError, parseYamlConfigLocated } from '@/lib/permissions/yaml-config';
import { parseProfile, PROFILE_NAME, type LoadedProfile, type ProfileTexts } from './profile';

export interface ProfileSource {
  name: string;
  /** the folder as shown to people (relative) */
  folder: string;
  texts: ProfileTexts;
}

export interface ActiveProfiles {
  readonly names: readonly string[];
  readonly profiles: readonly LoadedProfile[];
  /** where the selection came from */
  readonly selectedBy: 'SWARM_PROFILE' | 'swarm.yaml' | 'none';
  /** locked flag -> its value and the profiles that lock it */
  readonly locks: ReadonlyMap<string, { value: boolean; profiles: readonly string[] }>;
  /** the longest retention minimum, and whose it is */
  readonly retention?: { minDays: number; profile: string; basis: string };
  /** argument keys masked in the trail (lower case) */
  readonly maskKeys: ReadonlySet<string>;
  /** the lowest risk from which gates need two people, and whose requirement it is */
  readonly twoPerson?: { fromRisk: GateRisk; profiles: readonly string[] };
  /**
   * the lock of a user name after failed sign-ins: the fewest failures and the longest lock of the profiles that ask
   * for one (each may come from another profile), and which profiles ask
   */
  readonly lockout?: { afterFailures: number; lockSeconds: number; profiles: readonly string[] };
  /**
   * the lifecycle of tokens: the shortest longest-life and the shortest inactivity of the profiles that set one (each
   * may come from another profile), and which profiles ask; none: tokens never expire and are never disabled for disuse
   */
  readonly tokens?: { maxDays?: number; inactiveDays?: number; profiles: readonly string[] };
  /** the profiles that turn passwords off but for the break-glass administrator (identity.local_login: break_glass) */
  readonly breakGlassOnly?: { profiles: readonly string[] };
  /**
   * change control: the most approvers any profile asks for, from the roles every such profile allows, and which
   * profiles ask; none: the files on disk are the rules, and proposals are advisory
   */
  readonly changeControl?: { approvers: number; roles: readonly ('viewer' | 'auditor' | 'operator' | 'admin')[]; profiles: readonly string[]; basis: string };
  /**
   * the fraction of allowed and asked decisions the trail keeps while decision_log_all is off: the largest rate the
   * profiles ask for (its profile and basis), and every profile that asks for one
   */
  readonly decisionLog?: { sample: number; profile: string; basis: string; profiles: readonly string[] };
  /** the profiles that hold the tools an MCP upstream lists for the first time (mcp.hold_new_tools); none: first sight pins */
  readonly holdNewMcpTools?: { profiles: readonly string[]; basis: string };
  /** the gates the profiles declare (origin `profile <name>: <file>:<line>:<col>`) */
  readonly gates: readonly GateSpec[];
  /** their policy rules, ids prefixed with the profile's name */
  readonly rules: readonly PolicyRuleInput[];
  readonly rulePositions: readonly string[];
  /** the texts, for the policy revision and explain */
  readonly sources: readonly ProfileSource[];
}

export const NO_PROFILES: ActiveProfiles = combineProfiles([], 'none');

/** The profiles shipped or added under `<config dir>/profiles`: folders with a profile.yaml. */
export function knownProfiles(profilesDir: string): string[] {
  if (!existsSync(profilesDir)) return [];
  return readdirSync(profilesDir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(/*turbopackIgnore: true*/ profilesDir, d.name, 'profile.yaml')))
    .map((d) => d.name)
    .sort();
}

const swarmFileSchema = z.strictObject({
  version: z.literal(1).default(1),
  /** the active compliance profiles: a name, a comma-separated list or a list */
  profile: z.union([z.string(), z.array(z.string()), z.null()]).optional(),
});

function splitNames(value: string | readonly string[] | null | undefined): string[] {
  const parts = typeof value === 'string' ? value.split(',') : (value ?? []);
  return [...new Set(parts.map((s) => s.trim()).filter((s) => s.length > 0))];
}

/** The names selected by the environment, else by `<config dir>/swarm.yaml`. */
export function selectedProfileNames(env: Readonly<Record<string, string | undefined>>, configDir: string): { names: string[]; selectedBy: ActiveProfiles['selectedBy'] } {
  if (env.SWARM_PROFILE !== undefined && env.SWARM_PROFILE.trim() !== '') return { names: splitNames(env.SWARM_PROFILE), selectedBy: 'SWARM_PROFILE' };
  const file = join(/*turbopackIgnore: true*/ configDir, 'swarm.yaml');
  if (!existsSync(file)) return { names: [], selectedBy: 'none' };
  const { data } = parseYamlConfigLocated(readFileSync(file, 'utf8'), displayPath(file), swarmFileSchema);
  const names = splitNames(data.profile);
  return { names, selectedBy: names.length > 0 ? 'swarm.yaml' : 'none' };
}

/** Read the selected profiles from disk. Throws AppError('BAD_REQUEST') naming the known profiles for an unknown one. */
export function readProfiles(names: readonly string[], profilesDir: string): ProfileSource[] {
  const known = knownProfiles(profilesDir);
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length > 0) {
    const list = known.length > 0 ? known.join(', ') : `none (no folder with a profile.yaml under ${displayPath(profilesDir)})`;
    throw new AppError('BAD_REQUEST', `Unknown compliance profile${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `"${n}"`).join(', ')}. Known profiles: ${list}.`);
  }
  return names.map((name) => {
    if (!PROFILE_NAME.test(name)) throw new AppError('BAD_REQUEST', `"${name}" is not a profile name (lower-case letters, digits and "_").`);
    const dir = join(/*turbopackIgnore: true*/ profilesDir, name);
    const read = (file: string) => (existsSync(join(/*turbopackIgnore: true*/ dir, file)) ? readFileSync(join(/*turbopackIgnore: true*/ dir, file), 'utf8') : undefined);
    return {
      name,
      folder: displayPath(dir),
      texts: { profile: read('profile.yaml')!, policy: read('policy.yaml'), gates: read('gates.yaml'), tests: read('tests.yaml') },
    };
  });
}

/** Parse and combine profile sources (from disk, or from a kept policy revision). Pure. */
export function combineProfiles(sources: readonly ProfileSource[], selectedBy: ActiveProfiles['selectedBy']): ActiveProfiles {
  const profiles = sources.map((s) => parseProfile(s.name, s.folder, s.texts));
  const locks = new Map<string, { value: boolean; profiles: string[] }>();
  let retention: ActiveProfiles['retention'];
  let twoPerson: { fromRisk: GateRisk; profiles: string[] } | undefined;
  let lockout: { afterFailures: number; lockSeconds: number; profiles: string[] } | undefined;
  let tokens: { maxDays?: number; inactiveDays?: number; profiles: string[] } | undefined;
  let breakGlassOnly: { profiles: string[] } | undefined;
  let changeControl: { approvers: number; roles: ('viewer' | 'auditor' | 'operator' | 'admin')[]; profiles: string[]; basis: string } | undefined;
  let decisionLog: { sample: number; profile: string; basis: string; profiles: string[] } | undefined;
  let holdNewMcpTools: { profiles: string[]; basis: string } | undefined;
  const least = (a: number | undefined, b: number | undefined) => (a === undefined ? b : b === undefined ? a : Math.min(a, b));
  for (const p of profiles) {
    for (const [flag, value] of p.locks) {
      const prev = locks.get(flag);
      if (prev && prev.value !== value) {
        throw new AppError(
          'BAD_REQUEST',
          `Profiles ${prev.profiles.join(', ')} and ${p.name} lock the flag "${flag}" to different values (${prev.value ? 'on' : 'off'} and ${value ? 'on' : 'off'}); they cannot be active together.`,
        );
      }
      if (prev) prev.profiles.push(p.name);
      else locks.set(flag, { value, profiles: [p.name] });
    }
    if (p.retention && (!retention || p.retention.minDays > retention.minDays)) retention = { minDays: p.retention.minDays, profile: p.name, basis: p.retention.basis };
    const r = p.approvals?.twoPersonFromRisk;
    if (r && (!twoPerson || GATE_RISKS.indexOf(r) < GATE_RISKS.indexOf(twoPerson.fromRisk))) twoPerson = { fromRisk: r, profiles: [p.name] };
    else if (r && twoPerson?.fromRisk === r) twoPerson.profiles.push(p.name);
    if (p.signIn) {
      lockout ??= { afterFailures: p.signIn.lockAfterFailures, lockSeconds: p.signIn.lockMinutes * 60, profiles: [] };
      lockout.afterFailures = Math.min(lockout.afterFailures, p.signIn.lockAfterFailures);
      lockout.lockSeconds = Math.max(lockout.lockSeconds, p.signIn.lockMinutes * 60);
      lockout.profiles.push(p.name);
    }
    if (p.identity && (p.identity.tokenMaxDays !== undefined || p.identity.tokenInactiveDays !== undefined)) {
      tokens ??= { profiles: [] };
      tokens.maxDays = least(tokens.maxDays, p.identity.tokenMaxDays);
      tokens.inactiveDays = least(tokens.inactiveDays, p.identity.tokenInactiveDays);
      tokens.profiles.push(p.name);
    }
    if (p.identity?.localLogin === 'break_glass') (breakGlassOnly ??= { profiles: [] }).profiles.push(p.name);
    if (p.changeControl) {
      if (!changeControl) changeControl = { ...p.changeControl, roles: [...p.changeControl.roles], profiles: [p.name] };
      else {
        const roles = changeControl.roles.filter((r) => p.changeControl!.roles.includes(r));
        if (roles.length === 0) {
          throw new AppError('BAD_REQUEST', `Profiles ${changeControl.profiles.join(', ')} and ${p.name} let no role in common approve changes to the rules; they cannot be active together.`);
        }
        changeControl.roles = roles;
        if (p.changeControl.approvers > changeControl.approvers) changeControl.basis = p.changeControl.basis;
        changeControl.approvers = Math.max(changeControl.approvers, p.changeControl.approvers);
        changeControl.profiles.push(p.name);
      }
    }
    if (p.mcp?.holdNewTools) (holdNewMcpTools ??= { profiles: [], basis: p.mcp.basis }).profiles.push(p.name);
    if (p.decisionLog) {
      // The largest rate wins: a profile that asks for a tenth must get at least a tenth, whatever another asks for.
      if (!decisionLog || p.decisionLog.sample > decisionLog.sample) decisionLog = { sample: p.decisionLog.sample, profile: p.name, basis: p.decisionLog.basis, profiles: [...(decisionLog?.profiles ?? [])] };
      decisionLog.profiles.push(p.name);
    }
  }
  const gates: GateSpec[] = [];
  for (const s of sources) {
    if (s.texts.gates === undefined) continue;
    const file = `${s.folder}/gates.yaml`;
    for (const g of parseGateSpecs(s.texts.gates, file)) gates.push({ ...g, origin: `profile ${s.name}: ${g.origin}` });
  }
  return {
    names: profiles.map((p) => p.name),
    profiles,
    selectedBy,
    locks,
    retention,
    maskKeys: new Set(profiles.flatMap((p) => p.masking?.keys ?? []).map((k) => k.toLowerCase())),
    twoPerson,
    lockout,
    tokens,
    breakGlassOnly,
    changeControl,
    decisionLog,
    holdNewMcpTools,
    gates,
    rules: profiles.flatMap((p) => p.rules),
    rulePositions: profiles.flatMap((p) => p.rulePositions),
    sources,
  };
}

/** Where the active profiles' policy tests are (`<config dir>/profiles/<name>/tests.yaml`). */
export function profileTestFiles(configDir: string, active: ActiveProfiles): string[] {
  return active.sources.filter((p) => p.texts.tests !== undefined).map((p) => join(/*turbopackIgnore: true*/ configDir, 'profiles', p.name, 'tests.yaml'));
}

/** The active profiles of a configuration folder, as the environment selects them (the server, the CLI). */
export function activeProfiles(env: Readonly<Record<string, string | undefined>>, configDir: string, profile?: string): ActiveProfiles {
  const selection = profile !== undefined ? { names: splitNames(profile), selectedBy: 'SWARM_PROFILE' as const } : selectedProfileNames(env, configDir);
  return combineProfiles(readProfiles(selection.names, join(/*turbopackIgnore: true*/ configDir, 'profiles')), selection.names.length > 0 ? selection.selectedBy : 'none');
}

/** Every flag at its default, with the active profiles' locks applied: what policy tests run against. */
export function lockedFlagDefaults(defaults: ReadonlyMap<string, boolean>, active: ActiveProfiles): Map<string, boolean> {
  const flags = new Map(defaults);
  for (const [name, lock] of active.locks) flags.set(name, lock.value);
  return flags;
}

/** The gates in force for a configuration: code and profile declarations merged with the gates file, requirements applied. */
export function gatesWithProfiles(codeGates: readonly GateSpec[], active: ActiveProfiles, gatesFile?: { text: string; file: string }): GateSet {
  const declared = [...codeGates, ...active.gates];
  const merged = gatesFile
    ? parseGates(gatesFile.text, gatesFile.file, declared, (specs) => assertNoProfileGateOverride(specs, active, gatesFile.file))
    : mergeGates(declared, []);
  return withProfileGates(merged, active);
}

/** The operator's policy with the profiles' rules beside it (the same engine source, `policy:<profile>/<id>`). */
export function withProfileRules(policy: CompiledPolicy, active: ActiveProfiles): CompiledPolicy {
  if (active.rules.length === 0) return policy;
  const ids = new Set(policy.rules.map((r) => r.id));
  const clash = active.rules.find((r) => ids.has(r.id));
  if (clash) throw new ConfigFileError(policy.rules.find((r) => r.id === clash.id)?.position ?? 'policy', [{ line: 1, column: 1, path: 'rules', message: `rule id "${clash.id}" is also a profile's rule` }]);
  return compilePolicy([...policy.rules.map((r) => r.source), ...active.rules], [...policy.rules.map((r) => r.position ?? ''), ...active.rulePositions]);
}

/**
 * The gates in force with the profiles' requirements applied: every gate at or above the profiles' two-person risk
 * needs at least two distinct approvers. A gate the operator's file declares with the id of a profile's gate would
 * weaken it, so it is refused.
 */
export function withProfileGates(set: GateSet, active: ActiveProfiles): GateSet {
  const two = active.twoPerson;
  if (!two) return set;
  const from = GATE_RISKS.indexOf(two.fromRisk);
  let changed = false;
  const specs: GateSpec[] = set.gates.map((g) => {
    if (GATE_RISKS.indexOf(g.risk) < from || g.approvers.count >= 2) return stripCompiled(g);
    changed = true;
    return { ...stripCompiled(g), approvers: { roles: g.approvers.roles, count: 2 }, origin: `${g.origin} + two people (profile ${two.profiles.join(', ')})` };
  });
  return changed ? mergeGates(specs, []) : set;
}

function stripCompiled(g: GateSpec): GateSpec {
  return {
    id: g.id,
    tools: g.tools,
    // a gate by annotations keeps them: without, it would cover nothing
    ...(g.annotations ? { annotations: g.annotations } : {}),
    when: g.when,
    approvers: g.approvers,
    expiresInSeconds: g.expiresInSeconds,
    risk: g.risk,
    description: g.description,
    origin: g.origin,
  };
}

/** The gate ids a profile declares; the operator's gates file may not reuse them. */
export function assertNoProfileGateOverride(fileSpecs: readonly GateSpec[], active: ActiveProfiles, file: string): void {
  const profileIds = new Map(active.gates.map((g) => [g.id, g.origin]));
  for (const g of fileSpecs) {
    const theirs = profileIds.get(g.id);
    if (theirs === undefined) continue;
    const where = /:(\d+):(\d+)$/.exec(g.origin);
    throw new ConfigFileError(file, [
      { line: where ? Number(where[1]) : 1, column: where ? Number(where[2]) : 1, path: 'gates', message: `gate "${g.id}" is declared by a compliance profile (${theirs}); choose another id` },
    ]);
  }
}
