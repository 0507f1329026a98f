import { describe, expect, it } from 'vitest';
import {
  MAX_ARGUMENTS_JSON_CHARS,
  REDACTED,
  maskArguments,
  maskedArgumentsJson,
  redact,
  redactedArgumentsJson,
} from '@/lib/audit/redact';

/** The masked form of a single string argument. */
const mask = (s: string): unknown => maskArguments({ s }).value;
const masked = (s: string): string => (maskArguments({ s }).value as { s: string }).s;

describe('maskArguments: payment cards', () => {
  it('masks a Luhn-valid card number written in groups of four, keeping the last four digits', () => {
    expect(masked('pay with 4111 1111 1111 1111 today')).toBe('pay with [CARD ****1111] today');
  });

  it('masks a Luhn-valid card number with dashes or without separators', () => {
    expect(masked('4111-1111-1111-1111')).toBe('[CARD ****1111]');
    expect(masked('5555555555554444')).toBe('[CARD ****4444]');
    expect(masked('amex 3782 822463 10005')).toBe('amex [CARD ****0005]');
  });

  it('leaves a 16-digit number that fails the Luhn check untouched', () => {
    expect(mask('4111 1111 1111 1112')).toEqual({ s: '4111 1111 1111 1112' });
    expect(maskArguments({ s: '4111 1111 1111 1112' }).maskedPaths).toEqual([]);
  });

  it('leaves digit runs shorter than 13 or longer than 19 digits untouched', () => {
    expect(masked('order 411111111111')).toBe('order 411111111111');
    expect(masked('41111111111111111111')).toBe('41111111111111111111');
  });

  it('finds a card that follows other digits in the same run of groups', () => {
    expect(masked('ref 12 4111 1111 1111 1111')).toBe('ref 12 [CARD ****1111]');
  });
});

describe('maskArguments: IBANs', () => {
  it('masks a mod-97-valid IBAN grouped in fours, keeping the country code and last four', () => {
    expect(masked('to DE89 3704 0044 0532 0130 00 please')).toBe('to [IBAN DE**…**3000] please');
    expect(masked('GB82 WEST 1234 5698 7654 32')).toBe('[IBAN GB**…**5432]');
  });

  it('masks a compact IBAN too', () => {
    expect(masked('iban=DE89370400440532013000;')).toBe('iban=[IBAN DE**…**3000];');
  });

  it('leaves an IBAN with a wrong check digit untouched', () => {
    expect(masked('DE88 3704 0044 0532 0130 00')).toBe('DE88 3704 0044 0532 0130 00');
    expect(masked('GB82 WEST 1234 5698 7654 33')).toBe('GB82 WEST 1234 5698 7654 33');
  });

  it('does not swallow a following four-letter word into the IBAN', () => {
    expect(masked('NL91 ABNA 0417 1643 00 EURO')).toBe('[IBAN NL**…**4300] EURO');
  });
});

describe('maskArguments: US SSNs', () => {
  it('masks a valid dashed SSN, keeping the serial', () => {
    expect(masked('ssn 123-45-6789.')).toBe('ssn [SSN ***-**-6789].');
  });

  it('leaves SSNs with an invalid area (000, 666, 9xx), group 00 or serial 0000 untouched', () => {
    for (const s of ['000-12-3456', '666-12-3456', '900-12-3456', '999-12-3456', '123-00-4567', '123-45-0000']) {
      expect(masked(s)).toBe(s);
    }
  });

  it('leaves undashed nine-digit numbers and longer dash chains untouched', () => {
    expect(masked('123456789')).toBe('123456789');
    expect(masked('+1-123-45-6789')).toBe('+1-123-45-6789');
  });
});

describe('maskArguments: e-mail addresses', () => {
  it('masks an e-mail inside a sentence, keeping only the domain', () => {
    expect(masked('Please forward to jane.doe+x@rival-corp.example.com, thanks.')).toBe(
      'Please forward to [EMAIL ***@rival-corp.example.com], thanks.',
    );
  });

  it('masks every e-mail in a string and counts the string once in maskedPaths', () => {
    const r = maskArguments({ notes: 'a@x.io and b@y.io' });
    expect(r.value).toEqual({ notes: '[EMAIL ***@x.io] and [EMAIL ***@y.io]' });
    expect(r.maskedPaths).toEqual(['notes']);
  });

  it('leaves an @ that is not part of an address untouched', () => {
    expect(masked('@channel meet at 10 @ room 4')).toBe('@channel meet at 10 @ room 4');
  });
});

describe('maskArguments: paths and key names', () => {
  it('lists nested object and array paths as dotted paths with numeric indexes, sorted and unique', () => {
    const r = maskArguments({
      recipients: ['ok', 'bob@corp.example'],
      payment: { card: '4111111111111111', amount: 10 },
      notes: 'ssn 123-45-6789 and mail jo@corp.example',
      deep: [{ list: [{ iban: 'DE89370400440532013000' }] }],
    });
    expect(r.maskedPaths).toEqual(['deep.0.list.0.iban', 'notes', 'payment.card', 'recipients.1']);
    expect(r.value).toEqual({
      recipients: ['ok', '[EMAIL ***@corp.example]'],
      payment: { card: '[CARD ****1111]', amount: 10 },
      notes: 'ssn [SSN ***-**-6789] and mail [EMAIL ***@corp.example]',
      deep: [{ list: [{ iban: '[IBAN DE**…**3000]' }] }],
    });
  });

  it('still replaces values under secret-looking key names with [REDACTED] and lists their paths', () => {
    const r = maskArguments({ user: 'a', password: 'hunter2', nested: { api_key: { x: 1 }, list: [{ token: 't' }] } });
    expect(r.value).toEqual({ user: 'a', password: REDACTED, nested: { api_key: REDACTED, list: [{ token: REDACTED }] } });
    expect(r.maskedPaths).toEqual(['nested.api_key', 'nested.list.0.token', 'password']);
  });

  it('leaves strings without sensitive data untouched and reports no paths', () => {
    const args = { model_id: 'm-42', env: 'prod', note: 'hello', n: 12, when: '2024-01-15T10:00:00Z', ok: true, none: null };
    const r = maskArguments(args);
    expect(r.value).toEqual(args);
    expect(r.maskedPaths).toEqual([]);
  });

  it('masks a top-level string argument under the empty path', () => {
    expect(maskArguments('mail a@b.co')).toEqual({ value: 'mail [EMAIL ***@b.co]', maskedPaths: [''] });
  });

  it('masks a value straddling the cut of a long string before cutting it', () => {
    const s = `${'x'.repeat(1975)} 4111 1111 1111 1111 ${'y'.repeat(3000)}`;
    const out = masked(s);
    expect(out.startsWith(`${'x'.repeat(1975)} [CARD ****1111] yyy`)).toBe(true);
    expect(out).not.toMatch(/4111 1/);
    expect(out).toMatch(/…\[truncated: \d+ more characters\]$/);
  });
});

describe('maskedArgumentsJson', () => {
  it('returns null JSON and no paths for undefined arguments', () => {
    expect(maskedArgumentsJson(undefined)).toEqual({ json: null, maskedPaths: [] });
  });

  it('stores masked values and returns the masked paths', () => {
    const r = maskedArgumentsJson({ to: 'x@rival.example', secret: 's' });
    expect(JSON.parse(r.json!)).toEqual({ to: '[EMAIL ***@rival.example]', secret: REDACTED });
    expect(r.maskedPaths).toEqual(['secret', 'to']);
  });

  it('still caps oversized arguments with the truncation marker and keeps valid JSON', () => {
    const rows = Array.from({ length: 5000 }, (_, i) => (i === 0 ? 'card 4111 1111 1111 1111' : `row-${i}`));
    const r = maskedArgumentsJson({ rows });
    expect(r.json!.length).toBeLessThanOrEqual(MAX_ARGUMENTS_JSON_CHARS);
    expect(JSON.parse(r.json!)).toHaveProperty('[truncated]');
    expect(r.json).not.toMatch(/4111 1111/);
    expect(r.maskedPaths).toEqual(['rows.0']);
  });
});

describe('redact / redactedArgumentsJson keep their behaviour', () => {
  it('produces the same JSON as before for a plain object', () => {
    expect(redactedArgumentsJson({ model_id: 'm-42', env: 'prod', note: 'hello', n: [1, 2n, null] })).toBe(
      '{"model_id":"m-42","env":"prod","note":"hello","n":[1,"2",null]}',
    );
  });

  it('does not mask sensitive values, only secret-named keys', () => {
    const json = redactedArgumentsJson({ card: '4111 1111 1111 1111', to: 'a@b.co', token: 't' });
    expect(JSON.parse(json!)).toEqual({ card: '4111 1111 1111 1111', to: 'a@b.co', token: REDACTED });
    expect(redact({ ssn: '123-45-6789' })).toEqual({ ssn: '123-45-6789' });
  });

  it('still cuts long strings and caps oversized arguments with the marker', () => {
    expect((JSON.parse(redactedArgumentsJson({ sql: 'x'.repeat(5000) })!) as { sql: string }).sql).toMatch(
      /truncated: 3000 more characters/,
    );
    const json = redactedArgumentsJson({ rows: Array.from({ length: 5000 }, (_, i) => `row-${i}`) })!;
    expect(json.length).toBeLessThanOrEqual(MAX_ARGUMENTS_JSON_CHARS);
    expect(JSON.parse(json)).toHaveProperty('[truncated]');
  });
});
