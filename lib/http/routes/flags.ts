/** Feature flags: every flag, one flag, its runtime override, the change history, and the transparency report. */
import { FLAGS_BY_NAME } from '@/lib/flags/catalog';
import { changeFlag, recordRefusal } from '@/lib/flags/change';
import { flagHistoryQuerySchema } from '@/lib/flags/query';
import { historyToJson, readHistory, transparencyReport } from '@/lib/flags/transparency';
import { flagToJson } from '@/lib/flags/view';
import { requireRole, route, type RouteRefusal } from '../route';
import { flagNameSchema, flagOverrideBodySchema, flagUnsetBodySchema } from '../schemas';

/** Every flag with its tier, effective value and the layer that decided it, and any configuration problems. */
export const listFlags = route({ role: requireRole('viewer') }, ({ app }) => {
  const resolution = app.flags.resolution();
  return { flags: [...resolution.flags.values()].map(flagToJson), problems: resolution.problems };
});

/**
 * Every flag change, newest first: who, when, old and new value, reason, layer. Filter by flag (?name=) and by who
 * (?by=, exactly as recorded); page with ?before=<next_cursor> and ?limit= (100 by default, at most 1000).
 */
export const listFlagHistory = route({ role: requireRole('viewer'), query: flagHistoryQuerySchema }, async ({ app, query }) => historyToJson(query, await readHistory(app, query)));

export const getFlag = route({ role: requireRole('viewer'), params: flagNameSchema }, ({ app, params }) => flagToJson(app.flags.get(params.name)));

/**
 * A change of a known flag refused for the role (or a token's scope) is in the flag history too, with what was asked:
 * the history shows every attempt, whoever made it (the denial itself is in the audit trail as every denial is).
 */
function refusedChange(value: (body: Record<string, unknown>) => boolean | null) {
  return async ({ app, principal, params, body, ip, message }: RouteRefusal): Promise<void> => {
    const name = params.name;
    if (typeof name !== 'string' || !FLAGS_BY_NAME.has(name)) return;
    const asked = body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : {};
    await recordRefusal(app, { name, value: value(asked), reason: typeof asked.reason === 'string' ? asked.reason : '' }, principal, ip, message);
  };
}

/** Set a runtime override (admins). Turning off an invariant, or changing a locked flag, is refused and recorded. */
export const setFlagOverride = route(
  {
    role: requireRole('admin'),
    params: flagNameSchema,
    body: flagOverrideBodySchema,
    onRefused: refusedChange((asked) => (typeof asked.value === 'boolean' ? asked.value : null)),
  },
  async ({ app, params, body, principal, ip }) => flagToJson(await changeFlag(app, { name: params.name, value: body.value, reason: body.reason }, principal, ip)),
);

/** Remove a runtime override (admins); the flag falls back to environment, alias or default. */
export const removeFlagOverride = route(
  { role: requireRole('admin'), params: flagNameSchema, body: flagUnsetBodySchema, onRefused: refusedChange(() => null) },
  async ({ app, params, body, principal, ip }) => flagToJson(await changeFlag(app, { name: params.name, value: null, reason: body.reason }, principal, ip)),
);

/**
 * What /transparency shows, as JSON: the flags by tier (value, layer, description, guards, last change), the
 * configuration problems, the rule sources in force and the flag history (filtered by ?name= and ?by=, paged by
 * ?before=<next_cursor>, ?limit=).
 */
export const getTransparencyReport = route({ role: requireRole('viewer'), query: flagHistoryQuerySchema }, ({ app, query }) => transparencyReport(app, query));
