/**
 * Rules that can never decide anything: `swarm policy validate` warns about them with both rules' positions.
 * - shadowed: a rule of higher priority matches every call this one matches (priority orders the tiers);
 * - outvoted: a rule of the same priority with a stronger decision (ALLOW > DENY > ASK) matches every call this one
 *   matches, e.g. a DENY beside an ALLOW of the same match and priority.
 * Conservative: a rule is reported only when the cover is certain (same condition text, globs compared as written).
 */
import { isGlob, matchesName, type NameMatcher } from './glob';
import type { CompiledRule, CompiledPolicy } from './policy';
import type { Decision } from './types';

export interface PolicyWarning {
  rule: CompiledRule;
  by: CompiledRule;
  message: string;
}

const STRENGTH: Record<Decision, number> = { ALLOW: 3, DENY: 2, ASK: 1 };

/** Does matcher `b` accept every value that patterns `a` accept? Undefined means "any". */
function coversNames(b: NameMatcher | undefined, bPatterns: readonly string[] | undefined, aPatterns: readonly string[] | undefined): boolean {
  if (!b) return true;
  if (b.any) return true;
  if (!aPatterns) return false;
  return aPatterns.every((p) => (isGlob(p) ? (bPatterns ?? []).includes(p) : matchesName(b, p)));
}

const asList = (v: string | readonly string[] | undefined): readonly string[] | undefined => (v === undefined ? undefined : typeof v === 'string' ? [v] : v);

/** Does rule `b` match every call that rule `a` matches? */
export function covers(b: CompiledRule, a: CompiledRule): boolean {
  if (a.appliesToTools && !b.appliesToTools) return false;
  if (a.appliesToHttp && !b.appliesToHttp) return false;
  if (b.condition && b.condition.text !== a.condition?.text) return false;
  const am = a.source.match;
  const bm = b.source.match;
  if (!coversNames(b.agent, asList(bm.agent), asList(am.agent))) return false;
  if (!coversNames(b.tool, asList(bm.tool), asList(am.tool))) return false;
  if (!coversNames(b.path, asList(bm.path), asList(am.path))) return false;
  if (b.methods && (!a.methods || [...a.methods].some((m) => !b.methods!.has(m)))) return false;
  if (b.roles && (!a.roles || [...a.roles].some((r) => !b.roles!.has(r)))) return false;
  // Annotations as written: b covers a only if a requires each hint b requires, with the same value.
  for (const [hint, want] of b.annotations ?? []) if (am.annotations?.[hint] !== want) return false;
  for (const bArg of b.args ?? []) {
    const aValues = am.arguments?.[bArg.key];
    if (aValues === undefined) return false;
    for (const v of Array.isArray(aValues) ? aValues : [aValues]) {
      if (typeof v === 'string' ? isGlob(v) || !matchesName(bArg.strings, v) : !bArg.others.has(v)) return false;
    }
  }
  return true;
}

export function lintPolicy(policy: CompiledPolicy): PolicyWarning[] {
  const out: PolicyWarning[] = [];
  for (const a of policy.rules) {
    for (const b of policy.rules) {
      if (a === b || !covers(b, a)) continue;
      if (b.priority > a.priority) {
        out.push({
          rule: a,
          by: b,
          message: `rule "${a.id}" can never decide: rule "${b.id}"${b.position ? ` (${b.position})` : ''} has a higher priority (${b.priority} > ${a.priority}) and matches every call it matches`,
        });
        break;
      }
      if (b.priority === a.priority && STRENGTH[b.decision] > STRENGTH[a.decision]) {
        out.push({
          rule: a,
          by: b,
          message: `rule "${a.id}" (${a.decision}) can never decide: rule "${b.id}"${b.position ? ` (${b.position})` : ''} has the same priority, matches every call it matches, and ${b.decision} wins over ${a.decision} within a tier`,
        });
        break;
      }
    }
  }
  return out;
}
