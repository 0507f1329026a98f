/** Plain-text output: aligned tables, truncation, timestamps. Every cell is made safe for a terminal. */
import type { Io } from './context';

/**
 * Control characters (including ESC, so no terminal escape sequences) and line breaks become spaces: agent names,
 * reasons and arguments come from agents and must not be able to rewrite the operator's screen or break the table.
 */
export function clean(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, ' ');
}

export function truncate(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, Math.max(0, max - 1)).join('')}…`;
}

/** A cell: cleaned, truncated, '-' when empty. */
export function cell(value: string | number | null | undefined, max = 80): string {
  if (value === null || value === undefined || value === '') return '-';
  return truncate(clean(String(value)), max);
}

/** Seconds since the epoch as ISO 8601 UTC, to the second. */
export function isoTime(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '-';
  const d = new Date(seconds * 1000);
  return Number.isNaN(d.getTime()) ? String(seconds) : d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const width = (s: string) => Array.from(s).length;

/** Left-aligned columns separated by two spaces, a header row, and no trailing spaces. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(width(h), ...rows.map((r) => width(r[i] ?? ''))));
  const line = (cells: readonly string[]) =>
    headers
      .map((_, i) => {
        const c = cells[i] ?? '';
        return i === headers.length - 1 ? c : c + ' '.repeat((widths[i] ?? 0) - width(c));
      })
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}

/** The rows as a table, or `empty` when there are none. */
export function printTable(io: Io, empty: string, headers: readonly string[], rows: readonly (readonly string[])[]): void {
  io.out(rows.length === 0 ? empty : table(headers, rows));
}

/** A value as indented JSON, and the exit status to end with. */
export function printJson(io: Io, value: unknown, status = 0): number {
  io.out(`${JSON.stringify(value, null, 2)}\n`);
  return status;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
