import { changeFlag } from '@/lib/flags/change';
import { flagToJson } from '@/lib/flags/view';
import { requireRole, route } from '@/lib/http/route';
import { flagNameSchema, flagOverrideBodySchema, flagUnsetBodySchema } from '@/lib/http/schemas';

export const dynamic = 'force-dynamic';

export const GET = route({ role: requireRole('viewer'), params: flagNameSchema }, ({ app, params }) => flagToJson(app.flags.get(params.name)));

/** Set a runtime override (admins). Turning off an invariant is refused and recorded as a denial. */
export const PUT = route(
  { role: requireRole('admin'), params: flagNameSchema, body: flagOverrideBodySchema },
  async ({ app, params, body, principal, ip }) => flagToJson(await changeFlag(app, { name: params.name, value: body.value, reason: body.reason }, principal, ip)),
);

/** Remove a runtime override (admins); the flag falls back to environment, alias or default. */
export const DELETE = route({ role: requireRole('admin'), params: flagNameSchema, body: flagUnsetBodySchema }, async ({ app, params, body, principal, ip }) =>
  flagToJson(await changeFlag(app, { name: params.name, value: null, reason: body.reason }, principal, ip)),
);
