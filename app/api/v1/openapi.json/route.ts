import { requireRole, route } from '@/lib/http/route';
import { openApiDocument } from '@/lib/http/openapi';

export const dynamic = 'force-dynamic';

/** The OpenAPI 3.1 document of this API, generated from the routes' roles and zod schemas; public on purpose. */
export const GET = route({ role: requireRole('anonymous') }, () => openApiDocument());
