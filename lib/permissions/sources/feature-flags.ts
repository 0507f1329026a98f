import { compileGlob } from '@/lib/permissions/glob';
import { PRIORITY, type PermissionRule, type RuleSource } from '@/lib/permissions/types';

/** What one flag guards. A guarded tool or path is denied while the flag is off. */
export interface FlagGuard {
  flag: string;
  /** the declared default, used when the engine was given no value for this flag */
  defaultValue: boolean;
  tools: readonly string[];
  /** HTTP path globs, e.g. /api/v1/schedules/** */
  paths: readonly string[];
}

const NONE: readonly PermissionRule[] = Object.freeze([]);

/** Feature flags: a tool or HTTP path bound to a flag that is off is denied as `flag:<name>` (priority 800). */
export function createFlagSource(guards: readonly FlagGuard[]): RuleSource {
  const byTool = new Map<string, { guard: FlagGuard; rule: PermissionRule }[]>();
  const byPath: { guard: FlagGuard; re: RegExp }[] = [];
  const deny = (g: FlagGuard, what: string): PermissionRule =>
    Object.freeze({
      decision: 'DENY',
      priority: PRIORITY.flag,
      attribution: Object.freeze({ source: 'flag', id: g.flag }),
      reason: `Feature flag "${g.flag}" is off, so ${what} is disabled.`,
    });
  for (const g of guards) {
    for (const t of g.tools) {
      const entry = { guard: g, rule: deny(g, `tool "${t}"`) };
      const list = byTool.get(t);
      if (list) list.push(entry);
      else byTool.set(t, [entry]);
    }
    for (const p of g.paths) byPath.push({ guard: g, re: compileGlob(p) });
  }
  return {
    name: 'feature_flags',
    attributedTo: 'flag',
    rules(context) {
      let out: PermissionRule[] | undefined;
      if (context.kind === 'tool') {
        const list = byTool.get(context.tool);
        if (!list) return NONE;
        for (const { guard, rule } of list) {
          if (!(context.flags.get(guard.flag) ?? guard.defaultValue)) (out ??= []).push(rule);
        }
      } else {
        for (const { guard, re } of byPath) {
          if (re.test(context.path) && !(context.flags.get(guard.flag) ?? guard.defaultValue)) {
            (out ??= []).push(deny(guard, `${context.method} ${context.path}`));
          }
        }
      }
      return out ?? NONE;
    },
  };
}
