/** The sealed flow cookie and stored tokens: they open only unchanged, with the same key and for the same purpose. */
import { describe, expect, it } from 'vitest';
import { Sealer } from './seal';

describe('Sealer', () => {
  const key = Buffer.from('an installation key of at least thirty-two bytes');
  const sealer = new Sealer(key);

  it('opens what it sealed, for the same purpose only', () => {
    const sealed = sealer.seal('sso-flow', { state: 's', nonce: 'n' });
    expect(sealer.open('sso-flow', sealed)).toEqual({ state: 's', nonce: 'n' });
    expect(sealer.open('sso-refresh-token', sealed)).toBeUndefined();
    // a refresh token is never readable in the sealed text
    expect(sealer.seal('sso-refresh-token', 'rt-secret-value')).not.toContain('rt-secret-value');
  });

  it('opens nothing tampered with, truncated, or sealed under another key', () => {
    const sealed = sealer.seal('sso-flow', { state: 's' });
    const raw = Buffer.from(sealed, 'base64url');
    raw[raw.length - 1] = raw[raw.length - 1]! ^ 1;
    expect(sealer.open('sso-flow', raw.toString('base64url'))).toBeUndefined();
    expect(sealer.open('sso-flow', sealed.slice(0, 20))).toBeUndefined();
    expect(sealer.open('sso-flow', 'not base64 at all!')).toBeUndefined();
    expect(new Sealer(Buffer.from('another installation key, also long enough')).open('sso-flow', sealed)).toBeUndefined();
  });
});
