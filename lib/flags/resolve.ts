/**
 * Flag resolution: runtime override -> environment variable -> alias -> declared default. Pure.
 * Each answer names the layer that decided. Invariants refuse anything that would turn them off, and every value
 * that could not be used (unknown flag, not a boolean, refused) is reported as a problem, never ignored silently.
 */
import type { FlagOverrideRow } from '@/db/schema';
import { AppError } from '@/lib/errors';
import { FLAG_CATALOG, FLAG_ENV_PREFIX, type FlagDefinition, type FlagTier } from './catalog';

export type FlagLayer = 'override' | 'env' | 'alias' | 'profile' | 'default';

/** Flags a compliance profile holds at a value: flag name -> the value and the profiles that lock it. */
export type FlagLocks = ReadonlyMap<string, { value: boolean; profiles: readonly string[] }>;

export const NO_LOCKS: FlagLocks = new Map();

/** A runtime override: its flag_overrides row, without the name it is kept under and its seal (checked when read). */
export type FlagOverride = Omit<FlagOverrideRow, 'name' | 'mac'>;

export interface ResolvedFlag {
  name: string;
  tier: FlagTier;
  value: boolean;
  layer: FlagLayer;
  /** the variable that decided, for env and alias */
  variable?: string;
  override?: FlagOverride;
  /** the profiles that lock this flag at its value (nothing else can change it while they are active) */
  lockedBy?: readonly string[];
}

export type FlagProblemKind = 'unknown_flag' | 'not_boolean' | 'invariant_refused' | 'locked_refused';

export interface FlagProblem {
  /** what went wrong, so the page and the API can label it without parsing the message */
  kind: FlagProblemKind;
  flag?: string;
  variable?: string;
  message: string;
}

export interface FlagResolution {
  flags: ReadonlyMap<string, ResolvedFlag>;
  values: ReadonlyMap<string, boolean>;
  problems: readonly FlagProblem[];
}

/**
 * Families of legacy variable names that aliases come from. A variable of such a family that is not a declared alias
 * most likely meant a flag (a typo, or a flag that was renamed), so it is reported like an unknown SWARM_FLAG_*.
 */
export const ALIAS_PREFIXES: readonly string[] = ['ML_TEAM_'];

const TRUE = new Set(['1', 'true', 'on', 'yes', 'enabled']);
const FALSE = new Set(['0', 'false', 'off', 'no', 'disabled']);

/** A boolean from an environment value, or undefined when it is not one. */
export function parseBoolean(raw: string): boolean | undefined {
  const v = raw.trim().toLowerCase();
  if (TRUE.has(v)) return true;
  if (FALSE.has(v)) return false;
  return undefined;
}

export function resolveFlags(
  overrides: ReadonlyMap<string, FlagOverride>,
  env: Readonly<Record<string, string | undefined>>,
  catalog: readonly FlagDefinition[] = FLAG_CATALOG,
  locks: FlagLocks = NO_LOCKS,
): FlagResolution {
  const flags = new Map<string, ResolvedFlag>();
  const values = new Map<string, boolean>();
  const problems: FlagProblem[] = [];
  const known = new Set(catalog.map((f) => f.envVar));
  const knownAliases = new Set(catalog.flatMap((f) => f.aliases));

  for (const key of Object.keys(env)) {
    if (key.startsWith(FLAG_ENV_PREFIX) && !known.has(key)) {
      problems.push({ kind: 'unknown_flag', variable: key, message: `${key} names no flag in the catalog; it has no effect.` });
    } else if (ALIAS_PREFIXES.some((p) => key.startsWith(p)) && !knownAliases.has(key)) {
      problems.push({ kind: 'unknown_flag', variable: key, message: `${key} is not an alias of any flag in the catalog; it has no effect.` });
    }
  }
  for (const name of overrides.keys()) {
    if (!catalog.some((f) => f.name === name)) {
      problems.push({ kind: 'unknown_flag', flag: name, message: `A stored override names the unknown flag "${name}"; it has no effect.` });
    }
  }

  for (const def of catalog) {
    let resolved: ResolvedFlag = { name: def.name, tier: def.tier, value: def.defaultValue, layer: 'default' };
    const layers: { layer: FlagLayer; variable?: string; value: boolean; override?: FlagOverride }[] = [];
    const o = overrides.get(def.name);
    if (o) layers.push({ layer: 'override', value: o.value, override: o });
    const vars: [FlagLayer, string][] = [['env', def.envVar], ...def.aliases.map((a): [FlagLayer, string] => ['alias', a])];
    for (const [layer, variable] of vars) {
      const raw = env[variable];
      if (raw === undefined || raw === '') continue;
      const value = parseBoolean(raw);
      if (value === undefined) {
        problems.push({ kind: 'not_boolean', flag: def.name, variable, message: `${variable}="${raw}" is not a boolean (use true/false, on/off, 1/0); it is ignored.` });
        continue;
      }
      layers.push({ layer, variable, value });
    }
    const lock = locks.get(def.name);
    if (lock) {
      // A locked flag behaves like an invariant at the profile's value: every layer that says otherwise is refused.
      for (const candidate of layers) {
        if (candidate.value === lock.value) continue;
        const by = candidate.layer === 'override' ? 'a runtime override' : `${candidate.variable}`;
        problems.push({
          kind: 'locked_refused',
          flag: def.name,
          variable: candidate.variable,
          message: `${by} tries to turn ${candidate.value ? 'on' : 'off'} "${def.name}", which the compliance profile ${lock.profiles.join(', ')} locks ${lock.value ? 'on' : 'off'}; it is refused.`,
        });
      }
      resolved = { ...resolved, value: lock.value, layer: 'profile', lockedBy: lock.profiles };
      flags.set(def.name, resolved);
      values.set(def.name, resolved.value);
      continue;
    }
    for (const candidate of layers) {
      if (def.tier === 'invariant' && candidate.value !== def.defaultValue) {
        const by = candidate.layer === 'override' ? 'a runtime override' : `${candidate.variable}`;
        problems.push({
          kind: 'invariant_refused',
          flag: def.name,
          variable: candidate.variable,
          message: `${by} tries to turn off the invariant "${def.name}"; invariants cannot be disabled, so it is refused.`,
        });
        continue;
      }
      resolved = { ...resolved, value: candidate.value, layer: candidate.layer, variable: candidate.variable, override: candidate.override };
      break;
    }
    flags.set(def.name, resolved);
    values.set(def.name, resolved.value);
  }
  return { flags, values, problems };
}

/** One flag of a resolution, or AppError NOT_FOUND (both flag services answer `get` with it). */
export function flagNamed(resolution: FlagResolution, name: string): ResolvedFlag {
  const f = resolution.flags.get(name);
  if (!f) throw new AppError('NOT_FOUND', `There is no flag named "${name}".`);
  return f;
}
