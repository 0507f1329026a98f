/** Feature flags: every flag, one flag, its runtime override, the change history, and the transparency report. */
import { changeFlag } from '@/lib/flags/change';
import { flagHistoryQuerySchema } from '@/lib/flags/query';
import { historyToJson, readHistory, transparencyReport } from '@/lib/flags/transparency';
import { flagToJson } from '@/lib/flags/view';
import { requireRole, route } from '../route';
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

/** Set a runtime override (admins). Turning off an invariant is refused and recorded as a denial. */
export const setFlagOverride = route(
  { role: requireRole('admin'), params: flagNameSchema, body: flagOverrideBodySchema },
  async ({ app, params, body, principal, ip }) => flagToJson(await changeFlag(app, { name: params.name, value: body.value, reason: body.reason }, principal, ip)),
);

/** Remove a runtime override (admins); the flag falls back to environment, alias or default. */
export const removeFlagOverride = route({ role: requireRole('admin'), params: flagNameSchema, body: flagUnsetBodySchema }, async ({ app, params, body, principal, ip }) =>
  flagToJson(await changeFlag(app, { name: params.name, value: null, reason: body.reason }, principal, ip)),
);

/**
 * What /transparency shows, as JSON: the flags by tier (value, layer, description, guards, last change), the
 * configuration problems, the rule sources in force and the flag history (filtered by ?name= and ?by=, paged by
 * ?before=<next_cursor>, ?limit=).
 */
export const getTransparencyReport = route({ role: requireRole('viewer'), query: flagHistoryQuerySchema }, ({ app, query }) => transparencyReport(app, query));
