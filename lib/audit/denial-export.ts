/**
 * Streamed exports of a filter (CSV and NDJSON). One batch of rows per pull: a 100,000-row export neither holds the
 * result in memory nor keeps the server's event loop busy for longer than one batch.
 */
import type { DenialRow } from '@/db/schema';
import type { DenialMatch } from './denial-filter';
import { denialCsvHeader, denialCsvLine, denialToJson } from './denials';

export type ExportFormat = 'csv' | 'ndjson';

const BATCH = 500;

export const EXPORT_TYPES: Record<ExportFormat, { contentType: string; extension: string }> = {
  csv: { contentType: 'text/csv; charset=utf-8', extension: 'csv' },
  // One JSON object per line, the same fields as the API's page: every line parses alone, so a reader can stream it.
  ndjson: { contentType: 'application/x-ndjson; charset=utf-8', extension: 'ndjson' },
};

export function denialNdjsonLine(row: DenialRow): string {
  return `${JSON.stringify(denialToJson(row))}\n`;
}

export function denialExportStream(rows: Iterator<DenialRow>, format: ExportFormat): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const line = format === 'csv' ? denialCsvLine : denialNdjsonLine;
  let started = false;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      let chunk = '';
      if (!started) {
        started = true;
        if (format === 'csv') chunk = denialCsvHeader();
      }
      for (let i = 0; i < BATCH; i++) {
        const next = rows.next();
        if (next.done) {
          if (chunk) controller.enqueue(encoder.encode(chunk));
          controller.close();
          return;
        }
        chunk += line(next.value);
      }
      controller.enqueue(encoder.encode(chunk));
    },
    cancel() {
      // The browser gave up on the download: stop reading the table.
      rows.return?.(undefined);
    },
  });
}

/** A file-name part: letters, digits, dot, dash and underscore only. */
const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40);

/** `20251123T024329Z`: a compact UTC time for a file name. */
export function fileTime(seconds: number): string {
  return new Date(Math.floor(seconds) * 1000).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

function spanText(seconds: number): string {
  for (const [unit, n] of [['d', 86400], ['h', 3600], ['m', 60]] as const) if (seconds % n === 0) return `${seconds / n}${unit}`;
  return `${Math.round(seconds)}s`;
}

/**
 * The download's name: what was filtered and when it was exported, so two exports on a desk are told apart
 * (`permission_denials_agent-shadow_agent_last-1h_exported-20251123T024329Z.csv`, or the absolute window `20251120T000000Z-20251121T000000Z`).
 */
export function denialExportFileName(filter: DenialMatch, format: ExportFormat, now = Date.now() / 1000): string {
  const parts = ['permission_denials'];
  if (filter.from !== undefined || filter.to !== undefined) parts.push(`${filter.from !== undefined ? fileTime(filter.from) : 'start'}-${filter.to !== undefined ? fileTime(filter.to) : 'now'}`);
  if (filter.since !== undefined) parts.push(`last-${spanText(filter.since)}`);
  if (filter.agent) parts.push(`agent-${safe(filter.agent)}`);
  if (filter.tool) parts.push(`tool-${safe(filter.tool)}`);
  if (filter.ruleSource) parts.push(`rule-${safe(filter.ruleSource)}`);
  if (filter.role) parts.push(`role-${safe(filter.role)}`);
  if (filter.q) parts.push(`text-${safe(filter.q)}`);
  parts.push(`exported-${fileTime(now)}`);
  return `${parts.filter((p) => p !== '' && !p.endsWith('-')).join('_')}.${EXPORT_TYPES[format].extension}`;
}

/** The response of an export: a download named after the filter and the time (or the format alone), never cached. */
export function denialExportResponse(rows: Iterator<DenialRow>, format: ExportFormat, fileName = `permission_denials.${EXPORT_TYPES[format].extension}`): Response {
  const type = EXPORT_TYPES[format];
  return new Response(denialExportStream(rows, format), {
    headers: {
      'content-type': type.contentType,
      'content-disposition': `attachment; filename="${fileName.replace(/[^A-Za-z0-9._-]/g, '_')}"`,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    },
  });
}
