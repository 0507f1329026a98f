/**
 * Streamed exports of a filter (CSV and NDJSON). One batch of rows per pull: a 100,000-row export neither holds the
 * result in memory nor keeps the server's event loop busy for longer than one batch.
 */
import type { DenialRow } from '@/db/schema';
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

/** The response of an export: a download named after the format, never cached. */
export function denialExportResponse(rows: Iterator<DenialRow>, format: ExportFormat): Response {
  const type = EXPORT_TYPES[format];
  return new Response(denialExportStream(rows, format), {
    headers: {
      'content-type': type.contentType,
      'content-disposition': `attachment; filename="permission_denials.${type.extension}"`,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    },
  });
}
