/**
 * Generate an audit report (PDF or OSCAL JSON) for a period, as the CLI, the API and the /reports page ask for it:
 * gather the findings, render them, and record the generation as a security event (audit.report_generated, naming
 * the report id, the period, the format and the profile) attributed to the person who asked.
 */
import { isRole } from '@/lib/permissions';
import type { App } from '@/lib/app';
import { gatherReport, type ReportOptions } from './data';
import { reportReaderFor, type ReportReader } from './reader';
import { controlRows } from './evidence';
import { buildOscal } from './oscal';
import { renderReportPdf } from './pdf';
import { isoSeconds, reportFileName, type ReportFormat } from './period';

export interface GenerateRequest extends ReportOptions {
  format: ReportFormat;
  /** the client address, when known (API) */
  ip?: string | null;
}

export type GeneratedReport = Awaited<ReturnType<typeof buildReport>>;

/**
 * Gather and render a report; does not record anything (see generateReport). `reader`: where the trail is read
 * (default: the application's own database, SQLite or PostgreSQL).
 */
export async function buildReport(app: App, request: GenerateRequest, reader?: ReportReader) {
  const t0 = performance.now();
  const data = await gatherReport(reader ?? reportReaderFor(app), request);
  const rows = controlRows(app, data);
  const t1 = performance.now();
  const bytes = request.format === 'pdf' ? renderReportPdf(data, rows) : Buffer.from(`${JSON.stringify(buildOscal(data, rows), null, 2)}\n`, 'utf8');
  const t2 = performance.now();
  return {
    id: data.id,
    format: request.format,
    contentType: request.format === 'pdf' ? 'application/pdf' : 'application/json',
    fileName: reportFileName(request.period, request.format),
    bytes,
    data,
    /** each control of the profiles in scope with its status for the period */
    rows,
    /** milliseconds spent gathering and rendering */
    timings: { gatherMs: t1 - t0, renderMs: t2 - t1 },
  };
}

/** Gather, render, and record the generation in the audit trail. */
export async function generateReport(app: App, request: GenerateRequest, reader?: ReportReader): Promise<GeneratedReport> {
  const report = await buildReport(app, request, reader);
  await app.recorder.record({
    kind: 'audit',
    type: 'audit.report_generated',
    actor: request.generatedBy.actor,
    actorRole: request.generatedBy.role !== null && isRole(request.generatedBy.role) ? request.generatedBy.role : null,
    outcome: 'succeeded',
    target: report.id,
    ip: request.ip ?? null,
    detail: {
      report_id: report.id,
      format: request.format,
      from: isoSeconds(request.period.from),
      to: isoSeconds(request.period.to),
      profile: request.profile ?? null,
      profiles: report.data.scope.profiles.map((p) => p.name),
      denials: report.data.denials.total,
      integrity: report.data.integrity.ok ? 'verified' : 'failed',
      bytes: report.bytes.length,
    },
  });
  return report;
}
