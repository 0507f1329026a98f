/** swarm features list|set|unset: the flag catalog with effective values, and runtime overrides (SQLite or PostgreSQL). */
import { changeFlag } from '@/lib/flags/change';
import type { ResolvedFlag } from '@/lib/flags/resolve';
import { FLAG_TIERS } from '@/lib/flags/catalog';
import { changeToJson, flagToJson } from '@/lib/flags/view';
import { flagNameSchema, flagUnsetBodySchema } from '@/lib/http/schemas';
import { expectPositionals, parseCommand, parseOptions, requireOption, runSubcommand, validate } from '@/cli/args';
import { actAs, withAnyApp, type CliContext } from '@/cli/context';
import { UsageError } from '@/cli/errors';
import { cell, clean, printJson, table } from '@/cli/format';

const onOff = (v: boolean) => (v ? 'on' : 'off');
const VALUES: Readonly<Record<string, boolean>> = { on: true, off: false, true: true, false: false };

export function featuresCommand(ctx: CliContext, sub: string | undefined, args: string[]): Promise<number> {
  return runSubcommand(ctx, 'features', sub, args, { list, set: (c, a) => change(c, a, true), unset: (c, a) => change(c, a, false) });
}

function list(ctx: CliContext, args: string[]): Promise<number> {
  const values = parseOptions(args, { json: { type: 'boolean' } });
  return withAnyApp(ctx, async (app) => {
    const resolution = app.flags.resolution();
    // Grouped by tier like /transparency (invariants, flags, experiments); catalog order within a tier.
    const flags = [...resolution.flags.values()].sort((a, b) => FLAG_TIERS.indexOf(a.tier) - FLAG_TIERS.indexOf(b.tier));
    if (values.json) {
      // The same flag entries as GET /api/v1/transparency, last change included.
      const last = await app.flags.lastChanges();
      const entries = flags.map((f) => {
        const change = last.get(f.name);
        return { ...flagToJson(f), last_change: change ? changeToJson(change) : null };
      });
      return printJson(ctx.io, { flags: entries, problems: resolution.problems });
    }
    ctx.io.out(
      table(
        ['NAME', 'TIER', 'VALUE', 'LAYER', 'DESCRIPTION'],
        flags.map((f) => {
          const j = flagToJson(f);
          return [f.name, f.tier, onOff(f.value), layerCell(f), cell(j.description, 60)];
        }),
      ),
    );
    if (resolution.problems.length > 0) {
      ctx.io.out('\nProblems:\n');
      for (const p of resolution.problems) ctx.io.out(`  - ${clean(p.message)}\n`);
    }
    return 0;
  });
}

function layerCell(f: ResolvedFlag): string {
  if (f.layer === 'override' && f.override) return cell(`override by ${f.override.setBy}`, 40);
  if ((f.layer === 'env' || f.layer === 'alias') && f.variable) return `${f.layer} ${f.variable}`;
  return f.layer;
}

/** set NAME on|off, or unset NAME (the override removed): the same options and checks, and a security event. */
function change(ctx: CliContext, args: string[], set: boolean): Promise<number> {
  const { values, positionals } = parseCommand(args, { reason: { type: 'string' }, as: { type: 'string' } });
  const [name, rawValue] = expectPositionals(positionals, set ? ['NAME', 'on|off'] : ['NAME']);
  validate(flagNameSchema, { name }, () => 'NAME');
  const value = set ? VALUES[rawValue!.toLowerCase()] : null;
  if (value === undefined) throw new UsageError(`the value is on or off, not "${rawValue}".`);
  const reason = validate(flagUnsetBodySchema, { reason: requireOption(values.reason, '--reason', 'every flag change is recorded with a reason') }).reason;
  const as = requireOption(values.as, '--as', 'the admin who makes the change');
  return withAnyApp(ctx, async (app) => {
    // The same check as PUT (set) or DELETE (unset) /api/v1/flags/{name}, for the acting user.
    const principal = await actAs(app, as, { method: set ? 'PUT' : 'DELETE', path: `/api/v1/flags/${name}`, role: 'admin' });
    // Like the API: the change, or the refusal of an invariant, is a security event.
    const flag = await changeFlag(app, { name: name!, value, reason }, principal);
    ctx.io.out(
      set
        ? `${flag.name} is now ${onOff(flag.value)} (runtime override by ${principal.id}).\n`
        : `${flag.name}: override removed by ${principal.id}; it is now ${onOff(flag.value)} (from ${layerCell(flag)}).\n`,
    );
    return 0;
  });
}
