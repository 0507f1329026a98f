import { describe, expect, it } from 'vitest';
import { returnPath } from './return-path';

const FALLBACK = '/fallback';

/** What a browser would make of the path given back: the address it goes to, from a page of this site. */
const landsOn = (path: string) => new URL(path, 'https://console.example.com/api/v1/auth/sso/corp/callback');

describe('the path a browser is sent back to after signing in', () => {
  it('keeps a path of this site with its query and fragment', () => {
    expect(returnPath('/approvals', FALLBACK)).toBe('/approvals');
    expect(returnPath('/denials?agent=data_cleaner&since=86400#row-4', FALLBACK)).toBe('/denials?agent=data_cleaner&since=86400#row-4');
    expect(returnPath('/', FALLBACK)).toBe('/');
    expect(returnPath('/audit/../denials', FALLBACK)).toBe('/denials');
    expect(returnPath('/a b', FALLBACK)).toBe('/a%20b');
  });

  it('gives the fallback for no value at all', () => {
    for (const v of [undefined, null, '']) expect(returnPath(v, FALLBACK)).toBe(FALLBACK);
    expect(returnPath(undefined, '/')).toBe('/');
  });

  it('refuses every value that could send the browser to another site', () => {
    const hostile = [
      // other sites, spelled as browsers read them
      '//evil.example',
      '///evil.example',
      '////evil.example/x',
      'https://evil.example',
      'http://site.invalid/approvals',
      'evil.example',
      'approvals',
      '@evil.example',
      'javascript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      // tab, newline and carriage return are dropped by the browser before it parses the address
      '/\t/evil.example',
      '/\n/evil.example',
      '/\r\n/evil.example',
      '/\t\\evil.example',
      '\t//evil.example',
      '/\u0000/evil.example',
      '/\u001f/evil.example',
      '/\u007f/evil.example',
      '/approvals\t',
      // a backslash is a slash to a browser
      '/\\evil.example',
      '\\\\evil.example',
      '/\\/evil.example',
      '/approvals\\..\\..\\',
      // dot segments that leave an empty first segment: the path would be //evil.example
      '/.//evil.example',
      '/..//evil.example',
      '/x/..//evil.example',
      '/././/evil.example',
      '/%2e//evil.example',
      '/%2e%2e//evil.example',
    ];
    for (const value of hostile) expect({ value, got: returnPath(value, FALLBACK) }).toEqual({ value, got: FALLBACK });
  });

  it('gives back nothing a browser would read as another host, whatever it was given', () => {
    const tries = ['/approvals', '/%2F%2Fevil.example', '/%09/evil.example', '/%5Cevil.example', '/a/../../b', '/?next=//evil.example', '/#//evil.example', '/;//evil.example', '/ //evil.example', '/\u00a0/evil.example', '/\u3000//evil.example', '/\u2028/evil.example', '/\u0085/evil.example'];
    for (const value of tries) {
      const got = returnPath(value, FALLBACK);
      expect({ value, host: landsOn(got).host, slashes: got.startsWith('//') }).toEqual({ value, host: 'console.example.com', slashes: false });
      // and it holds nothing a browser drops before parsing
      expect(/[\u0000-\u0020\u007f\\]/.test(got), value).toBe(false);
    }
  });
});
