import type { FlagChangeRow } from '@/db/schema';
import { FLAGS_BY_NAME } from './catalog';
import type { ResolvedFlag } from './resolve';

/** The API's, the CLI's and the page's shape of one flag. */
export function flagToJson(f: ResolvedFlag) {
  const def = FLAGS_BY_NAME.get(f.name);
  return {
    name: f.name,
    tier: f.tier,
    value: f.value,
    layer: f.layer,
    variable: f.variable ?? null,
    default: def?.defaultValue ?? null,
    env_var: def?.envVar ?? null,
    aliases: def?.aliases ?? [],
    owner: def?.owner ?? null,
    description: def?.description ?? '',
    guards: def?.guards ?? { tools: [], paths: [] },
    override: f.override ? { value: f.override.value, set_by: f.override.setBy, set_at: f.override.setAt, reason: f.override.reason } : null,
    /** the compliance profiles that hold it at its value (null: not locked) */
    locked_by: f.lockedBy ? [...f.lockedBy] : null,
    /** can a runtime change take effect at all (invariants and locked flags: no, so pages show no button) */
    changeable: f.tier !== 'invariant' && !f.lockedBy,
  };
}

/**
 * One entry of the flag history. Every runtime change is made in the override layer: `set` puts an override in
 * place, `unset` removes it (the flag then falls back to environment, alias or default, and `new_value` is what it
 * fell back to at that moment); `refused` is an attempt that did not take effect (`new_value` is what was asked, null
 * for a reset), with the refusal in `reason`.
 */
export function changeToJson(c: FlagChangeRow) {
  return {
    id: c.id,
    name: c.name,
    action: c.action,
    layer: 'override' as const,
    old_value: c.oldValue,
    new_value: c.newValue,
    changed_by: c.changedBy,
    changed_at: c.changedAt,
    reason: c.reason,
  };
}
