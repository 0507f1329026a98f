import { describe, expect, it } from 'vitest';
import { clientAddressProof, CLIENT_ADDRESS_HEADER, CLIENT_ADDRESS_PROOF_HEADER, forwardedClientAddress, normalAddress, parseTrustedProxies, resolveClientAddress } from './client-address';

const none = parseTrustedProxies(undefined);
const proxies = parseTrustedProxies(' 10.0.0.0/8, 192.0.2.7 ,2001:db8::/32 ');

describe('the client address', () => {
  it('is the socket’s by default, whatever X-Forwarded-For says', () => {
    expect(resolveClientAddress('198.51.100.4', '203.0.113.9', none)).toBe('198.51.100.4');
    expect(resolveClientAddress('::ffff:198.51.100.4', '203.0.113.9, 10.0.0.1', none)).toBe('198.51.100.4');
    expect(resolveClientAddress('198.51.100.4', '203.0.113.9', proxies)).toBe('198.51.100.4');
  });

  it('walks X-Forwarded-For from the right past trusted proxies: the first untrusted hop is the client', () => {
    expect(resolveClientAddress('10.0.0.2', '198.51.100.1, 203.0.113.5, 10.9.9.9', proxies)).toBe('203.0.113.5');
    expect(resolveClientAddress('192.0.2.7', '2001:db9::9, 2001:db8:ffff::1', proxies)).toBe('2001:db9::9');
    expect(resolveClientAddress('[2001:db8::5]:443', '[2001:db8::6]:1234,  203.0.113.5:55000', proxies)).toBe('203.0.113.5');
    // a trusted proxy that names no one: itself
    expect(resolveClientAddress('10.0.0.2', null, proxies)).toBe('10.0.0.2');
    // every hop trusted: the farthest
    expect(resolveClientAddress('10.0.0.2', '10.0.0.3, 10.0.0.4', proxies)).toBe('10.0.0.3');
    // not an address: the walk stops at the last address known, never stores what a client invented
    expect(resolveClientAddress('10.0.0.2', '203.0.113.5, <script>, 10.0.0.9', proxies)).toBe('10.0.0.9');
    expect(resolveClientAddress('10.0.0.2', 'unknown', proxies)).toBe('10.0.0.2');
  });

  it('refuses a SWARM_TRUSTED_PROXIES entry that is not an address or a CIDR, naming it', () => {
    for (const bad of ['10.0.0.0/33', '2001:db8::/129', 'proxy.internal', '10.0.0.0/', '10.0.0/8', '10.0.0.0/-1', '10.0.0.0/8/1', '*']) {
      expect(() => parseTrustedProxies(`192.0.2.1, ${bad}`), bad).toThrow(`SWARM_TRUSTED_PROXIES: "${bad}" is not an address or a CIDR`);
    }
    expect(parseTrustedProxies('0.0.0.0/0,::/0').has('203.0.113.1')).toBe(true);
  });

  it('writes addresses one way', () => {
    expect(normalAddress('::FFFF:127.0.0.1')).toBe('127.0.0.1');
    expect(normalAddress('[::1]:8000')).toBe('::1');
    expect(normalAddress('fe80::1%eth0')).toBe('fe80::1');
    expect(normalAddress('1.2.3.4:80')).toBe('1.2.3.4');
    expect(normalAddress('999.1.1.1')).toBeUndefined();
    expect(normalAddress('')).toBeUndefined();
  });

  it('is believed by Next.js only with the listener’s proof', () => {
    const secret = 'a-secret-of-this-start-0123456789';
    const headers = (h: Record<string, string>) => (name: string) => h[name] ?? null;
    const proof = clientAddressProof(secret);
    expect(proof).not.toContain(secret);
    expect(forwardedClientAddress(headers({ [CLIENT_ADDRESS_HEADER]: '203.0.113.5', [CLIENT_ADDRESS_PROOF_HEADER]: proof }), secret)).toBe('203.0.113.5');
    expect(forwardedClientAddress(headers({ [CLIENT_ADDRESS_HEADER]: '203.0.113.5', [CLIENT_ADDRESS_PROOF_HEADER]: 'forged' }), secret)).toBeUndefined();
    expect(forwardedClientAddress(headers({ [CLIENT_ADDRESS_HEADER]: '203.0.113.5', 'x-forwarded-for': '203.0.113.5' }), secret)).toBeUndefined();
    expect(forwardedClientAddress(headers({ [CLIENT_ADDRESS_HEADER]: '203.0.113.5', [CLIENT_ADDRESS_PROOF_HEADER]: proof }), undefined)).toBeUndefined();
  });
});
