import { describe, expect, it } from 'vitest';
import { canonicalPath, isWellEscaped } from './route-path';

describe('paths as the router goes by them', () => {
  it('refuses a path whose escapes do not decode', () => {
    for (const p of ['/api/v1/flags/%ZZ', '/a/%', '/a/%4', '/a/%E0%A4%A', '/a/%FF']) {
      expect(isWellEscaped(p), p).toBe(false);
      expect(canonicalPath(p), p).toBeUndefined();
    }
    expect(isWellEscaped('/a/%41%e2%82%ac')).toBe(true);
  });

  it('spells one route one way: dot segments, repeated and trailing slashes, backslashes and escapes of unreserved characters', () => {
    for (const p of ['/api/v1/./flags/x', '/api//v1/flags/x/', '/api/v1/%66lags/x', '/api/v1/y/../flags/x', '/api/v1/%2e/flags/x', '/api/v1/%2E%2E/v1/flags/x', '/api\\v1\\flags\\x', '/api/v1/flags/x?a=/..']) {
      expect(canonicalPath(p), p).toBe('/api/v1/flags/x');
    }
    expect(canonicalPath('/../..')).toBe('/');
    expect(canonicalPath('/')).toBe('/');
  });

  it('keeps the escapes that are not of unreserved characters, in capitals, so a segment cannot be split or joined', () => {
    expect(canonicalPath('/api/v1/flags/a%2fb')).toBe('/api/v1/flags/a%2Fb');
    expect(canonicalPath('/api/v1/flags/%c3%a9')).toBe('/api/v1/flags/%C3%A9');
  });

  it('leaves a plain path as it is (the decision routes)', () => {
    expect(canonicalPath('/api/v1/permissions/check')).toBe('/api/v1/permissions/check');
    expect(canonicalPath('/.well-known/authzen-configuration')).toBe('/.well-known/authzen-configuration');
  });
});
