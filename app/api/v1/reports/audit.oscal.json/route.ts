import { requireRole, route } from '@/lib/http/route';
import { reportQuerySchema } from '@/lib/reports/period';
import { reportResponse } from '../report-response';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/**
 * The same findings as the PDF as OSCAL 1.1 assessment results (JSON), for GRC tools (auditor and above).
 * Every report generated is a security event.
 */
export const GET = route({ role: requireRole('auditor'), query: reportQuerySchema }, ({ app, query, principal, ip }) => reportResponse(app, principal, query, 'oscal', ip));
