/**
 * The answer of the report routes: the generated file as an attachment, named for its period, never cached. The
 * generation is recorded (audit.report_generated) with the signed-in person as its actor.
 */
import type { App } from '@/lib/app';
import type { Principal } from '@/lib/permissions';
import { generateReport } from '@/lib/reports/generate';
import type { ReportFormat, ReportQuery } from '@/lib/reports/period';

export async function reportResponse(app: App, principal: Principal, query: ReportQuery, format: ReportFormat, ip: string | undefined): Promise<Response> {
  const actor = principal.kind === 'agent' ? `agent:${principal.id}` : principal.id;
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
