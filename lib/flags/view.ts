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
  };
}
