import { AppError } from '@/lib/errors';
import { flagToJson } from '@/lib/flags/view';
import { requireRole, route } from '@/lib/http/route';
import { flagNameSchema, flagOverrideBodySchema, flagUnsetBodySchema } from '@/lib/http/schemas';

export const dynamic = 'force-dynamic';

export const GET = route({ role: requireRole('viewer'), params: flagNameSchema }, ({ app, params }) => flagToJson(app.flags.get(params.name)));

/** Set a runtime override (admins). Turning off an invariant is refused and recorded as a denial. */
export const PUT = route(
  { role: requireRole('admin'), params: flagNameSchema, body: flagOverrideBodySchema },
  ({ app, params, body, principal, request }) => {
    try {
      return flagToJson(app.flags.setOverride(params.name, body.value, principal.id, body.reason));
    } catch (error) {
      if (error instanceof AppError && error.code === 'INVARIANT') {
        app.denials.record({
          toolName: 'http',
          ruleSource: `flag:${params.name}`,
          reason: error.message,
          userRole: principal.role,
          httpMethod: request.method,
          httpPath: new URL(request.url).pathname,
          principal: principal.id,
          argumentsJson: JSON.stringify({ value: body.value, reason: body.reason }),
        });
      }
      throw error;
    }
  },
);

/** Remove a runtime override (admins); the flag falls back to environment, alias or default. */
export const DELETE = route({ role: requireRole('admin'), params: flagNameSchema, body: flagUnsetBodySchema }, ({ app, params, body, principal }) =>
  flagToJson(app.flags.unsetOverride(params.name, principal.id, body.reason)),
);
