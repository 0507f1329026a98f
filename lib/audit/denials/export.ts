/**
 * Denials as the API, the CLI and the exports show them: the JSON shape with the specification's column names, CSV
 * lines, and streamed exports of a filter (CSV and NDJSON). One batch of rows per pull: a 100,000-row export neither
 * holds the result in memory nor keeps the server's event loop busy for longer than one batch. (The queries are
 * store.ts; the one writer is the recorder.)
 */
import type { DenialRow } from '@/db/schema';
import type { DenialMatch } from './filter';

/** The API's and the CLI's shape of a row: the spec's column names. */
export function denialToJson(row: DenialRow) {
  return {
    id: row.id,
    tool_call_id: row.toolCallId,
    tool_name: row.toolName,
    agent_name: row.agentName,
    arguments_json: row.argumentsJson,
    rule_source: row.ruleSource,
    reason: row.reason,
    user_role: row.userRole,
    http_method: row.httpMethod,
    http_path: row.httpPath,
    timestamp: row.timestamp,
    principal: row.principal,
    decision_id: row.decisionId,
    policy_revision: row.policyRevision,
    masked_paths: row.maskedPaths ? (JSON.parse(row.maskedPaths) as string[]) : [],
  };
}

export const DENIAL_CSV_COLUMNS = [
  'id',
  'timestamp',
  'timestamp_iso',
  'tool_call_id',
  'tool_name',
  'agent_name',
  'arguments_json',
  'rule_source',
  'reason',
  'user_role',
  'http_method',
  'http_path',
  'principal',
  'decision_id',
  'policy_revision',
] as const;

/** One CSV field: RFC 4180 quoting, and a leading quote on formula-like text so a spreadsheet never executes it. */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  let s = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function denialCsvHeader(): string {
  return `${DENIAL_CSV_COLUMNS.join(',')}\r\n`;
}

/** An epoch time in ISO 8601, UTC, with milliseconds (what a spreadsheet or a log tool reads as a time). */
export function isoTime(seconds: number): string {
  return new Date(Math.round(seconds * 1000)).toISOString();
}

export function denialCsvLine(row: DenialRow): string {
  const j = { ...denialToJson(row), timestamp_iso: isoTime(row.timestamp) };
  return `${DENIAL_CSV_COLUMNS.map((c) => csvField(j[c])).join(',')}\r\n`;
}


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

/**
 * What an export holds: its window as it was fixed when the export started (or as the view that asked for it was
 * loaded), the newest denial id it may hold, and how many rows follow. CSV carries it in response headers only (a
 * comment line would break the spreadsheets the CSV is for); JSON lines also as their first record, `{"export": …}`.
 */
export interface ExportMeta {
  kind: 'permission_denials';
  /** seconds since the epoch; null: open at that end */
  from: number | null;
  to: number | null;
  /** rows recorded after this id are not in the export */
  until_id: number;
  /** the number of denial rows that follow (null when a cursor started the export part-way) */
  rows: number | null;
  /** the attribute filters, as the API took them */
  filter: Record<string, string>;
  exported_at: number;
}

/** The window of an export in words for a header: `2026-11-25T18:00:00.000Z/2026-11-25T19:00:00.000Z until_id=461 rows=446`. */
export function exportWindowText(meta: ExportMeta): string {
  const end = (t: number | null, open: string) => (t === null ? open : isoTime(t));
  return `${end(meta.from, 'start')}/${end(meta.to, 'now')} until_id=${meta.until_id} rows=${meta.rows ?? 'unknown'}`;
}

/** The export's facts as response headers, for every format (x-swarm-export-*). */
export function exportMetaHeaders(meta: ExportMeta): Record<string, string> {
  const h: Record<string, string> = {
    'x-swarm-export-window': exportWindowText(meta),
    'x-swarm-export-until-id': String(meta.until_id),
  };
  if (meta.from !== null) h['x-swarm-export-from'] = isoTime(meta.from);
  if (meta.to !== null) h['x-swarm-export-to'] = isoTime(meta.to);
  if (meta.rows !== null) h['x-swarm-export-rows'] = String(meta.rows);
  return h;
}

export function denialExportStream(rows: Iterator<DenialRow> | AsyncIterator<DenialRow>, format: ExportFormat, meta?: ExportMeta): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const line = format === 'csv' ? denialCsvLine : denialNdjsonLine;
  let started = false;
  return new ReadableStream<Uint8Array>({
    // A synchronous iterator is read without a promise per row; an asynchronous one (the store's) is awaited.
    async pull(controller) {
      let chunk = '';
      if (!started) {
        started = true;
        if (format === 'csv') chunk = denialCsvHeader();
        else if (meta) chunk = `${JSON.stringify({ export: { ...meta, from_iso: meta.from === null ? null : isoTime(meta.from), to_iso: meta.to === null ? null : isoTime(meta.to) } })}\n`;
      }
      for (let i = 0; i < BATCH; i++) {
        let next = rows.next();
        if (next instanceof Promise) next = await next;
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
      void rows.return?.(undefined);
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
  for (const [label, value] of [['agent', filter.agent], ['tool', filter.tool], ['rule', filter.ruleSource], ['role', filter.role], ['text', filter.q]]) {
    if (value) parts.push(`${label}-${safe(value)}`);
  }
  parts.push(`exported-${fileTime(now)}`);
  return `${parts.filter((p) => p !== '' && !p.endsWith('-')).join('_')}.${EXPORT_TYPES[format].extension}`;
}

/** The response of an export: a download named after the filter and the time (or the format alone), never cached. */
export function denialExportResponse(
  rows: Iterator<DenialRow> | AsyncIterator<DenialRow>,
  format: ExportFormat,
  fileName = `permission_denials.${EXPORT_TYPES[format].extension}`,
  meta?: ExportMeta,
): Response {
  const type = EXPORT_TYPES[format];
  return new Response(denialExportStream(rows, format, meta), {
    headers: {
      ...(meta ? exportMetaHeaders(meta) : {}),
      'content-type': type.contentType,
      'content-disposition': `attachment; filename="${fileName.replace(/[^A-Za-z0-9._-]/g, '_')}"`,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    },
  });
}
