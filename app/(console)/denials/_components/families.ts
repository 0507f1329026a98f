/**
 * Rule-source families: the order the chart stacks them in, the colour it fills them with (the same hues as the
 * badges), and a sentence that says what each one means. Colour is never the only sign: every place that uses one
 * also writes the family's name.
 */
import { ruleSourceFamily } from '@/lib/audit/denials/vocabulary';

export { ruleSourceFamily };

export interface FamilyInfo {
  fill: string;
  meaning: string;
}

export const FAMILIES: Record<string, FamilyInfo> = {
  rbac: { fill: '#c2564e', meaning: 'the role is below what the endpoint requires, or an agent token acted as another agent' },
  agent_allowlist: { fill: '#4a70c2', meaning: 'the agent is unknown, or the tool is not in its allowlist' },
  flag: { fill: '#cf9530', meaning: 'a feature flag that guards the tool or path is off' },
  policy: { fill: '#8560c0', meaning: 'an operator rule in the YAML policy' },
  hitl: { fill: '#3c8c69', meaning: 'a person rejected the call, or its approval expired' },
  default: { fill: '#8b95a3', meaning: 'no rule matched the tool call, so it was denied (fail closed)' },
  csrf: { fill: '#5f6b7b', meaning: 'a state-changing request came from another origin' },
  auth: { fill: '#b0b8c4', meaning: 'a sign-in was refused' },
};

const OTHER: FamilyInfo = { fill: '#a8957a', meaning: 'a rule source added by a plugin' };

export const FAMILY_ORDER = Object.keys(FAMILIES);

export function familyInfo(family: string): FamilyInfo {
  return FAMILIES[family] ?? OTHER;
}

/** Families in stacking order: the known ones first in a fixed order, then any others by name. */
export function orderFamilies(families: readonly string[]): string[] {
  const known = FAMILY_ORDER.filter((f) => families.includes(f));
  const others = families.filter((f) => !FAMILIES[f]).sort();
  return [...known, ...others];
}

/** The class of the global badge colours (app/globals.css) for a rule source. */
export function badgeClass(ruleSource: string): string {
  return `badge badge-${ruleSourceFamily(ruleSource).replace(/[^a-z_]/g, '')}`;
}
