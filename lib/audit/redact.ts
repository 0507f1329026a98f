/**
 * Redaction and size caps for stored arguments. Secrets never reach the audit table or the approval display;
 * oversized values are cut with a visible marker so an auditor knows something was left out.
 */

const SECRET_KEY = /pass(word|wd|phrase)?$|secret|token|api[_-]?key|apikey|authori[sz]ation|credential|private[_-]?key|cookie|session[_-]?id|^pwd$/i;

export const REDACTED = '[REDACTED]';
export const MAX_STRING_CHARS = 2_000;
export const MAX_ARGUMENTS_JSON_CHARS = 16_000;
const MAX_DEPTH = 12;

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/** A copy of `value` with secret-named keys replaced and long strings cut, at any depth. */
export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') {
    return value.length > MAX_STRING_CHARS
      ? `${value.slice(0, MAX_STRING_CHARS)}…[truncated: ${value.length - MAX_STRING_CHARS} more characters]`
      : value;
  }
  if (value === null || typeof value !== 'object') {
    return typeof value === 'bigint' ? value.toString() : value;
  }
  if (depth >= MAX_DEPTH) return '[truncated: nested too deep]';
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = isSecretKey(k) ? REDACTED : redact(v, depth + 1);
  return out;
}

/** The JSON stored in arguments_json: redacted, and capped with a marker when still too large. */
export function redactedArgumentsJson(args: unknown): string | null {
  if (args === undefined) return null;
  const json = JSON.stringify(redact(args)) ?? 'null';
  if (json.length <= MAX_ARGUMENTS_JSON_CHARS) return json;
  // The preview is itself escaped inside JSON, which can grow it: shrink it until the whole row fits the cap.
  let keep = MAX_ARGUMENTS_JSON_CHARS - 200;
  for (;;) {
    const capped = JSON.stringify({
      '[truncated]': `arguments were ${json.length} characters; the first ${keep} are kept in "preview"`,
      preview: json.slice(0, keep),
    });
    if (capped.length <= MAX_ARGUMENTS_JSON_CHARS || keep < 100) return capped;
    keep = Math.floor(keep * 0.8);
  }
}
