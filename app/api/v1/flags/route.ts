import { flagToJson } from '@/lib/flags/view';
import { requireRole, route } from '@/lib/http/route';

export const dynamic = 'force-dynamic';

/** Every flag with its tier, effective value and the layer that decided it, and any configuration problems. */
export const GET = route({ role: requireRole('viewer') }, ({ app }) => {
  const resolution = app.flags.resolution();
  return { flags: [...resolution.flags.values()].map(flagToJson), problems: resolution.problems };
});
