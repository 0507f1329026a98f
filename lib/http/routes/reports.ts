/**
 * The audit report of a period, as a PDF and as OSCAL assessment results (auditor and above). Every report generated
 * is a security event (audit.report_generated) with the signed-in person as its actor.
 */
import type { App } from '@/lib/app';
import { principalLabel, type Principal } from '@/lib/permissions';
import { reportQuerySchema, type ReportFormat, type ReportQuery } from '@/lib/reports/period';
import { requireRole, route } from '../route';

/** The generated file as an attachment, named for its period, never cached. */
async function reportResponse(app: App, principal: Principal, query: ReportQuery, format: ReportFormat, ip: string | undefined): Promise<Response> {
  // Loaded when a report is asked for: jsPDF takes about 0.6 s to load, and every process that reads the route table
  // (each Next.js route, the decision listener) would pay it at start otherwise.
  const { generateReport } = await import('@/lib/reports/generate');
  const actor = principalLabel(principal);
  const r = await generateReport(app, { period: { from: query.from, to: query.to }, profile: query.profile, format, generatedBy: { actor, role: principal.role }, ip });
  return new Response(new Uint8Array(r.bytes), {
    headers: {
      'content-type': format === 'pdf' ? 'application/pdf' : 'application/json; charset=utf-8',
      'content-disposition': `attachment; filename="${r.fileName}"`,
      'content-length': String(r.bytes.length),
      'cache-control': 'no-store',
      'x-report-id': r.id,
    },
  });
}

/**
 * The audit report of the period from <= t < to as a PDF: `from` and `to` are dates (midnight UTC) or ISO date-times
 * with an offset; `profile` restricts the control mapping to one active profile.
 */
export const auditReportPdf = route({ role: requireRole('auditor'), query: reportQuerySchema }, ({ app, query, principal, ip }) => reportResponse(app, principal, query, 'pdf', ip));

/** The same findings as the PDF as OSCAL 1.1 assessment results (JSON), for GRC tools. */
export const auditReportOscal = route({ role: requireRole('auditor'), query: reportQuerySchema }, ({ app, query, principal, ip }) => reportResponse(app, principal, query, 'oscal', ip));
