import { nextHandlers } from '@/lib/http/next-handlers';

export const dynamic = 'force-dynamic';
// jsPDF and node:crypto: the Node.js runtime.
export const runtime = 'nodejs';

/** /api/v1/reports/audit.oscal.json: the route table's entry (lib/http/route-table.ts), defined in lib/http/routes/reports.ts (GET auditReportOscal). */
export const { GET } = nextHandlers('/api/v1/reports/audit.oscal.json');
