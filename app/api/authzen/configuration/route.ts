import { metadata, publicBase } from '@/lib/decisions/authzen';
import { requireRole, route } from '@/lib/http/route';

export const dynamic = 'force-dynamic';

/** AuthZEN PDP metadata, public on purpose; served at /.well-known/authzen-configuration (a rewrite in next.config). */
export const GET = route({ role: requireRole('anonymous') }, ({ app, request }) => metadata(publicBase(request, app.env)));
