import { createHmac } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadOrCreateSigningKey } from '@/lib/audit/trail/checkpoints';
import { BINDING_KEY_FILE, CallBinding, isComplete, loadBindingKey, storedCanonical } from './binding';
import { canonicalJson } from './canonical';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'swarm-binding-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const PG = 'postgres://swarm@127.0.0.1:5432/swarm';

describe('the approval binding', () => {
  it('is the same for the same call in any key order, and differs for any other value or key', () => {
    const b = CallBinding.ofKey(Buffer.alloc(32, 1));
    expect(b.bind({ env: 'prod', token: 's1' })).toBe(b.bind({ token: 's1', env: 'prod' }));
    expect(b.bind({ env: 'prod', token: 's1' })).not.toBe(b.bind({ env: 'prod', token: 's2' }));
    expect(CallBinding.ofKey(Buffer.alloc(32, 2)).bind({ env: 'prod', token: 's1' })).not.toBe(b.bind({ env: 'prod', token: 's1' }));
    expect(() => CallBinding.ofKey(Buffer.alloc(16))).toThrow(/at least 32 bytes/);
  });

  it('is HMAC-SHA-256 of the canonical arguments', () => {
    const key = Buffer.alloc(32, 5);
    const args = { b: [1, { c: 'ü' }], a: 'x' };
    expect(CallBinding.ofKey(key).bind(args)).toBe(`hmac1:${createHmac('sha256', key).update(canonicalJson(args)).digest('hex')}`);
  });

  it('stores the arguments without their secrets, and knows a call it cannot run again from them', () => {
    const stored = storedCanonical({ b: [{ password: 'p' }], a: 'x', api_key: 'k' });
    expect(stored).toBe('{"a":"x","api_key":"[REDACTED]","b":[{"password":"[REDACTED]"}]}');
    expect(isComplete(JSON.parse(stored))).toBe(false);
    expect(isComplete(JSON.parse(storedCanonical({ model_id: 'm', env: 'prod' })))).toBe(true);
  });
});

describe('the binding key', () => {
  it('is SWARM_APPROVAL_KEY when it is set (32 characters at least)', () => {
    const key = 'k'.repeat(32);
    expect(loadBindingKey(join(dir, 'a.db'), { SWARM_APPROVAL_KEY: key }).toString()).toBe(key);
    expect(() => loadBindingKey(PG, { SWARM_APPROVAL_KEY: 'short' })).toThrow(/at least 32 characters/);
    expect(existsSync(join(dir, BINDING_KEY_FILE))).toBe(false);
  });

  it('is made once beside a SQLite file, readable by its owner only, and read again after', () => {
    const first = loadBindingKey(join(dir, 'a.db'), {});
    const file = join(dir, BINDING_KEY_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(loadBindingKey(join(dir, 'a.db'), {})).toEqual(first);
    expect(first).toHaveLength(32);
  });

  it('is derived from the audit signing key of the key folder when there is no key file, the same on every server', () => {
    loadOrCreateSigningKey(dir);
    const env = { SWARM_AUDIT_KEY_DIR: dir };
    const derived = loadBindingKey(PG, env);
    expect(loadBindingKey(PG, env)).toEqual(derived);
    expect(loadBindingKey(join(dir, 'a.db'), {})).toEqual(derived);
    expect(existsSync(join(dir, BINDING_KEY_FILE))).toBe(false);
    // A key file, when the installation keeps one, wins.
    writeFileSync(join(dir, BINDING_KEY_FILE), `${Buffer.alloc(32, 9).toString('base64url')}\n`);
    expect(loadBindingKey(PG, env)).toEqual(Buffer.alloc(32, 9));
  });

  it('is never made for PostgreSQL: without one it says what to configure', () => {
    expect(() => loadBindingKey(PG, {})).toThrow(/set SWARM_APPROVAL_KEY .* or SWARM_AUDIT_KEY_DIR/);
    expect(() => loadBindingKey(PG, { SWARM_AUDIT_KEY_DIR: dir })).toThrow(/There is no approval binding key in/);
    expect(existsSync(join(dir, BINDING_KEY_FILE))).toBe(false);
    writeFileSync(join(dir, BINDING_KEY_FILE), 'too short\n');
    expect(() => loadBindingKey(PG, { SWARM_AUDIT_KEY_DIR: dir })).toThrow(/does not hold an approval binding key/);
    expect(readFileSync(join(dir, BINDING_KEY_FILE), 'utf8')).toBe('too short\n');
  });
});
