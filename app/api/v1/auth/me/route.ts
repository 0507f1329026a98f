import { requireRole, route } from '@/lib/http/route';

export const dynamic = 'force-dynamic';

export const GET = route({ role: requireRole('viewer') }, ({ principal }) => ({
  kind: principal.kind,
  id: principal.id,
  role: principal.role,
  agent: principal.agent ?? null,
}));
