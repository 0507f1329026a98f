/** swarm features list|set|unset: the flag catalog with effective values, and runtime overrides (SQLite or PostgreSQL). */
import { changeFlag } from '@/lib/flags/change';
import type { ResolvedFlag } from '@/lib/flags/resolve';
import { FLAG_TIERS } from '@/lib/flags/catalog';
import { changeToJson, flagToJson } from '@/lib/flags/view';
import { flagNameSchema, flagUnsetBodySchema } from '@/lib/http/schemas';
import { expectPositionals, parseCommand, requireOption, validate } from '@/cli/args';
import { actAs, withAnyApp, type CliContext } from '@/cli/context';
import { UsageError } from '@/cli/errors';
import { cell, clean, table } from '@/cli/format';

const onOff = (v: boolean) => (v ? 'on' : 'off');
const VALUES: Readonly<Record<string, boolean>> = { on: true, off: false, true: true, false: false };

export function featuresCommand(ctx: CliContext, sub: string | undefined, args: string[]): Promise<number> {
  switch (sub) {
    case 'list':
      return list(ctx, args);
    case 'set':
      return set(ctx, args);
    case 'unset':
      return unset(ctx, args);
    default:
      throw new UsageError(sub ? `unknown command "features ${sub}".` : 'missing subcommand: swarm features list|set|unset.', [], true);
  }
}

function list(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, { json: { type: 'boolean' } });
  expectPositionals(positionals, []);
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
      ctx.io.out(`${JSON.stringify({ flags: entries, problems: resolution.problems }, null, 2)}\n`);
      return 0;
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

function changeOptions(args: string[]) {
  return parseCommand(args, { reason: { type: 'string' }, as: { type: 'string' } });
}

function set(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = changeOptions(args);
  const [name, rawValue] = expectPositionals(positionals, ['NAME', 'on|off']);
  validate(flagNameSchema, { name }, () => 'NAME');
  const value = VALUES[rawValue!.toLowerCase()];
  if (value === undefined) throw new UsageError(`the value is on or off, not "${rawValue}".`);
  const reason = validate(flagUnsetBodySchema, { reason: requireOption(values.reason, '--reason', 'every flag change is recorded with a reason') }).reason;
  const as = requireOption(values.as, '--as', 'the admin who makes the change');
  return withAnyApp(ctx, async (app) => {
    // The same check as PUT /api/v1/flags/{name}, for the acting user.
    const principal = await actAs(app, as, { method: 'PUT', path: `/api/v1/flags/${name}`, role: 'admin' });
    // Like the API: the change, or the refusal of an invariant, is a security event.
    const flag = await changeFlag(app, { name: name!, value, reason }, principal);
    ctx.io.out(`${flag.name} is now ${onOff(flag.value)} (runtime override by ${principal.id}).\n`);
    return 0;
  });
}

function unset(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = changeOptions(args);
  const [name] = expectPositionals(positionals, ['NAME']);
  validate(flagNameSchema, { name }, () => 'NAME');
  const reason = validate(flagUnsetBodySchema, { reason: requireOption(values.reason, '--reason', 'every flag change is recorded with a reason') }).reason;
  const as = requireOption(values.as, '--as', 'the admin who makes the change');
  return withAnyApp(ctx, async (app) => {
    // The same check as DELETE /api/v1/flags/{name}, for the acting user.
    const principal = await actAs(app, as, { method: 'DELETE', path: `/api/v1/flags/${name}`, role: 'admin' });
    const flag = await changeFlag(app, { name: name!, value: null, reason }, principal);
    ctx.io.out(`${flag.name}: override removed by ${principal.id}; it is now ${onOff(flag.value)} (from ${layerCell(flag)}).\n`);
    return 0;
  });
}
