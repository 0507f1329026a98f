/**
 * Redaction and size caps for stored arguments. Secrets never reach the audit table or the approval display;
 * oversized values are cut with a visible marker so an auditor knows something was left out.
 *
 * Two levels:
 * - `redact` / `redactedArgumentsJson`: values under secret-looking KEYS become '[REDACTED]', long strings are cut.
 * - `maskArguments` / `maskedArgumentsJson`: the same, plus the values under the keys a compliance profile masks
 *   (`[MASKED]`), plus sensitive VALUES found inside any string are masked:
 *     payment card (13–19 digits, single space/dash separators, Luhn-valid)  → `[CARD ****1111]`  (last four digits)
 *     IBAN (ISO 13616 mod-97 valid, compact or grouped in 4s)                → `[IBAN DE**…**3000]` (country + last four)
 *     US SSN, dashed form only, valid area/group/serial                      → `[SSN ***-**-6789]` (serial kept)
 *     e-mail address                                                         → `[EMAIL ***@example.com]` (domain kept)
 *   and report which paths were masked or redacted.
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
  return walk(value, depth, null);
}

/**
 * A copy of `value` with the values under secret-named keys replaced, at any depth, and nothing else changed (no
 * string cut, no depth limit: the arguments are validated already). What approvals keep of a call's arguments: exact
 * wherever no secret was.
 */
export function redactSecrets(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(redactSecrets);
  // No prototype: every key of the arguments stays a key of the copy.
  const out = Object.create(null) as Record<string, unknown>;
  for (const [k, v] of Object.entries(value)) out[k] = isSecretKey(k) ? REDACTED : redactSecrets(v);
  return out;
}

/** The JSON stored in arguments_json: redacted, and capped with a marker when still too large. */
export function redactedArgumentsJson(args: unknown): string | null {
  if (args === undefined) return null;
  return capArgumentsJson(JSON.stringify(redact(args)) ?? 'null');
}

export interface MaskedArguments {
  /** A copy of the arguments: secret-named keys redacted, sensitive values masked inside strings, long strings cut. */
  value: unknown;
  /**
   * Every path that was redacted or masked, dotted from the root with array indexes as numbers
   * (`card`, `payment.card`, `recipients.0`; `''` when `args` itself is a masked string). Sorted, no duplicates.
   */
  maskedPaths: string[];
}

/** Like `redact`, plus masking of card numbers, IBANs, SSNs and e-mail addresses inside every string, at any depth. */
export function maskArguments(args: unknown, maskKeys?: ReadonlySet<string>): MaskedArguments {
  const state: MaskState = { segs: [], paths: new Set(), maskKeys: maskKeys && maskKeys.size > 0 ? maskKeys : undefined };
  const value = walk(args, 0, state);
  return { value, maskedPaths: state.paths.size === 0 ? [] : [...state.paths].sort() };
}

/** Like `redactedArgumentsJson` (same cap and truncation marker), but built from `maskArguments`. */
export function maskedArgumentsJson(args: unknown, maskKeys?: ReadonlySet<string>): { json: string | null; maskedPaths: string[] } {
  if (args === undefined) return { json: null, maskedPaths: [] };
  const { value, maskedPaths } = maskArguments(args, maskKeys);
  return { json: capArgumentsJson(JSON.stringify(value) ?? 'null'), maskedPaths };
}

// ---------------------------------------------------------------------------------------------------------------
// Tree walk shared by `redact` (state = null: no value masking, no paths) and `maskArguments`.

interface MaskState {
  /** Path of the value being visited (pushed/popped, joined only when something is masked). */
  readonly segs: (string | number)[];
  readonly paths: Set<string>;
  /** keys (lower case) whose whole value is masked: a compliance profile's `masking.keys` */
  readonly maskKeys?: ReadonlySet<string>;
}

/** What replaces a value under a key a compliance profile masks. */
export const MASKED = '[MASKED]';

function walk(value: unknown, depth: number, state: MaskState | null): unknown {
  if (typeof value === 'string') return state === null ? cutString(value, value.length - MAX_STRING_CHARS) : maskString(value, state);
  if (value === null || typeof value !== 'object') {
    return typeof value === 'bigint' ? value.toString() : value;
  }
  if (depth >= MAX_DEPTH) return '[truncated: nested too deep]';
  if (state === null) {
    if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1, null));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = isSecretKey(k) ? REDACTED : walk(v, depth + 1, null);
    return out;
  }
  const { segs } = state;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      segs.push(i);
      out[i] = walk(value[i], depth + 1, state);
      segs.pop();
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    segs.push(k);
    if (isSecretKey(k)) {
      out[k] = REDACTED;
      state.paths.add(segs.join('.'));
    } else if (state.maskKeys?.has(k.toLowerCase())) {
      out[k] = MASKED;
      state.paths.add(segs.join('.'));
    } else {
      out[k] = walk(v, depth + 1, state);
    }
    segs.pop();
  }
  return out;
}

/** `text` cut at MAX_STRING_CHARS with a marker saying how many characters were left out (`cutChars`, when over 0). */
function cutString(text: string, cutChars: number): string {
  return cutChars > 0 ? `${text.slice(0, MAX_STRING_CHARS)}…[truncated: ${cutChars} more characters]` : text;
}

/**
 * Extra characters scanned past the cut of a long string, so a token straddling the cut is still recognised,
 * and so a token broken by the end of the scanned part (left unmasked) is never within the kept text.
 */
const SCAN_MARGIN = 512;

function maskString(value: string, state: MaskState): string {
  const before = maskCount;
  let masked: string;
  let cutChars: number; // characters of (masked) text left out
  if (value.length <= MAX_STRING_CHARS + SCAN_MARGIN) {
    masked = maskText(value);
    cutChars = masked.length - MAX_STRING_CHARS;
  } else {
    // Mask only a prefix (the rest is cut anyway); grow it if masks shrank it into the margin.
    let scan = MAX_STRING_CHARS + SCAN_MARGIN;
    for (;;) {
      const whole = scan >= value.length;
      masked = maskText(whole ? value : value.slice(0, scan));
      if (whole || masked.length >= MAX_STRING_CHARS + SCAN_MARGIN) {
        cutChars = masked.length - MAX_STRING_CHARS + (whole ? 0 : value.length - scan);
        break;
      }
      scan *= 2;
    }
  }
  if (maskCount !== before) state.paths.add(state.segs.join('.'));
  return cutString(masked, cutChars);
}

// ---------------------------------------------------------------------------------------------------------------
// Value masking inside one string. Regexes are compiled once; the global ones are only used with `replace`,
// which resets lastIndex, so sharing them is safe (all of this is synchronous).

/** Incremented by every replacement callback that actually masks something. */
let maskCount = 0;

const EMAIL_RE = /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63})/g;
/** Country code, 2 check digits, then the BBAN either compact or in space-separated groups of four. */
const IBAN_RE = /\b[A-Z]{2}\d{2}(?:[A-Z0-9]{11,30}|(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,4})?)\b/g;
/** A run of digit groups joined by single spaces or dashes; cards are looked for inside it. */
const DIGIT_RUN_RE = /\d+(?:[ -]\d+)*/g;
/** Dashed SSN, not part of a longer digit/dash chain (phone numbers, card groups, dates). */
const SSN_RE = /(?<!\d)(?<!\d-)(\d{3})-(\d{2})-(\d{4})(?!\d)(?!-\d)/g;

/** `text` with sensitive values masked; the same string when nothing matched. */
function maskText(text: string): string {
  // One cheap pass decides which regexes can possibly match. `run` counts the digits of the current run of digit
  // groups joined by single spaces or dashes (the only shape a card or an SSN can have).
  let run = 0;
  let maxRun = 0;
  let at = false;
  let dash = false;
  let ibanStart = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (++run > maxRun) maxRun = run;
    } else if (c === 32 || c === 45) {
      if (c === 45) dash = true;
      const next = i + 1 < n ? text.charCodeAt(i + 1) : 0;
      if (run === 0 || next < 48 || next > 57) run = 0;
    } else {
      run = 0;
      if (c === 64) at = true;
      else if (!ibanStart && c >= 65 && c <= 90 && i + 3 < n) {
        const c1 = text.charCodeAt(i + 1);
        const c2 = text.charCodeAt(i + 2);
        const c3 = text.charCodeAt(i + 3);
        ibanStart = c1 >= 65 && c1 <= 90 && c2 >= 48 && c2 <= 57 && c3 >= 48 && c3 <= 57;
      }
    }
  }
  if (!at && !ibanStart && maxRun < 9) return text;

  const before = maskCount;
  let out = text;
  // E-mail first: a local part may itself be made of digits, which would otherwise be half-masked as a card.
  if (at) out = out.replace(EMAIL_RE, maskEmail);
  // IBANs before cards: a grouped IBAN's digits could otherwise pass for a card.
  if (ibanStart) out = out.replace(IBAN_RE, maskIban);
  if (maxRun >= 13) out = out.replace(DIGIT_RUN_RE, maskCardsInRun);
  if (dash && maxRun >= 9) out = out.replace(SSN_RE, maskSsn);
  return maskCount === before ? text : out;
}

function maskEmail(_match: string, domain: string): string {
  maskCount++;
  return `[EMAIL ***@${domain}]`;
}

function maskIban(match: string): string {
  // A trailing word of four capitals/digits can be swallowed as one more group: retry without trailing groups.
  let candidate = match;
  for (;;) {
    const compact = candidate.replaceAll(' ', '');
    if (compact.length >= 15 && compact.length <= 34 && ibanChecksumValid(compact)) {
      maskCount++;
      return `[IBAN ${compact.slice(0, 2)}**…**${compact.slice(-4)}]${match.slice(candidate.length)}`;
    }
    const lastSpace = candidate.lastIndexOf(' ');
    if (lastSpace < 0) return match;
    candidate = candidate.slice(0, lastSpace);
  }
}

/** ISO 13616 / ISO 7064 mod 97-10 on a compact, upper-case IBAN: move the first four to the end, letters A=10…Z=35. */
function ibanChecksumValid(iban: string): boolean {
  const n = iban.length;
  let r = 0;
  for (let k = 0; k < n; k++) {
    const c = iban.charCodeAt((k + 4) % n);
    r = c <= 57 ? (r * 10 + (c - 48)) % 97 : (r * 100 + (c - 55)) % 97;
  }
  return r === 1;
}

/**
 * Masks card numbers inside a run of digit groups: the longest Luhn-valid span of 13–19 digits that starts and
 * ends on group boundaries, from the left (so "ref 12 4111 1111 1111 1111" still finds the card).
 */
function maskCardsInRun(run: string): string {
  if (run.length < 13) return run;
  // Group boundaries, and the digits alone.
  const starts: number[] = [];
  const ends: number[] = [];
  const digitStart: number[] = []; // offset of each group in `digits`
  let digits = '';
  let g = 0;
  for (let i = 0; i <= run.length; i++) {
    const c = i < run.length ? run.charCodeAt(i) : 32;
    if (c === 32 || c === 45) {
      starts.push(g);
      ends.push(i);
      digitStart.push(digits.length);
      digits += run.slice(g, i);
      g = i + 1;
    }
  }
  if (digits.length < 13) return run;
  const groups = starts.length;
  const digitEnd = (j: number): number => digitStart[j]! + (ends[j]! - starts[j]!);
  let out = '';
  let emitted = 0; // chars of `run` already copied to `out`
  let last = 0; // the last group such that groups i..last hold at most 19 digits (never moves back)
  for (let i = 0; i < groups; i++) {
    const from = digitStart[i]!;
    if (last < i) last = i;
    while (last + 1 < groups && digitEnd(last + 1) - from <= 19) last++;
    for (let j = last; j >= i; j--) {
      const to = digitEnd(j);
      if (to - from > 19) continue; // a single group longer than 19 digits
      if (to - from < 13) break;
      if (luhnValid(digits, from, to)) {
        maskCount++;
        out += `${run.slice(emitted, starts[i]!)}[CARD ****${digits.slice(to - 4, to)}]`;
        emitted = ends[j]!;
        i = j;
        break;
      }
    }
  }
  return emitted === 0 ? run : out + run.slice(emitted);
}

/** Luhn over digits[from, to); an all-zero number (a placeholder, not a card) does not count. */
function luhnValid(digits: string, from: number, to: number): boolean {
  let sum = 0;
  let double = false;
  for (let k = to - 1; k >= from; k--) {
    let d = digits.charCodeAt(k) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum > 0 && sum % 10 === 0;
}

function maskSsn(match: string, area: string, group: string, serial: string): string {
  if (area === '000' || area === '666' || area.charCodeAt(0) === 57 /* 9xx */ || group === '00' || serial === '0000') return match;
  maskCount++;
  return `[SSN ***-**-${serial}]`;
}

// ---------------------------------------------------------------------------------------------------------------

/** Caps an arguments JSON at MAX_ARGUMENTS_JSON_CHARS, replacing it with a marked, still-valid preview. */
function capArgumentsJson(json: string): string {
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
