/**
 * The client package's request and answer types are the server's (issue 40): packages/client/src/wire.ts is what
 * scripts/client-wire.ts generates from the zod schemas, and every schema it names prints as a type.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { typeOf, WIRE_FILE, wireSource } from '@/scripts/client-wire';

describe('the client package\'s wire types', () => {
  it('are what the generator writes from the server\'s schemas today (run node --import tsx scripts/client-wire.ts)', () => {
    expect(readFileSync(WIRE_FILE, 'utf8')).toBe(wireSource());
  });

  it('print each kind of JSON Schema the API uses', () => {
    expect(typeOf({ type: ['string', 'null'] })).toBe('string | null');
    expect(typeOf({ type: 'string', enum: ['a', 'b'] })).toBe('"a" | "b"');
    expect(typeOf({ type: 'array', items: { type: 'number' } })).toBe('number[]');
    expect(typeOf({ type: 'object' })).toBe('Record<string, unknown>');
    expect(typeOf({ type: 'object', additionalProperties: { type: 'boolean' } })).toBe('Record<string, boolean>');
    expect(typeOf({ type: 'object', properties: { 'a-b': { type: 'string' }, c: { const: true } }, required: ['c'] })).toBe('{\n  "a-b"?: string;\n  c: true;\n}');
    expect(typeOf({})).toBe('unknown');
  });
});
