import { nextHandlers } from '@/lib/http/next-handlers';

export const dynamic = 'force-dynamic';
// jsPDF and node:crypto: the Node.js runtime.
export const runtime = 'nodejs';

/** /api/v1/reports/audit.pdf: the route table's entry (lib/http/route-table.ts), defined in lib/http/routes/reports.ts (GET auditReportPdf). */
export const { GET } = nextHandlers('/api/v1/reports/audit.pdf');
