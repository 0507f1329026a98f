import { requireRole, route } from '@/lib/http/route';
import { reportQuerySchema } from '@/lib/reports/period';
import { reportResponse } from '../report-response';

export const dynamic = 'force-dynamic';
// jsPDF and node:crypto: the Node.js runtime.
export const runtime = 'nodejs';

/**
 * The audit report of the period from <= t < to as a PDF (auditor and above): `from` and `to` are dates (midnight
 * UTC) or ISO date-times with an offset; `profile` restricts the control mapping to one active profile.
 * Every report generated is a security event.
 */
export const GET = route({ role: requireRole('auditor'), query: reportQuerySchema }, ({ app, query, principal, ip }) => reportResponse(app, principal, query, 'pdf', ip));
