/**
 * Sealing what single sign-on keeps outside its reach: the sign-in under way (state, nonce, PKCE verifier) in a
 * short-lived cookie, and a session's refresh token and ID token in the database. AES-256-GCM under a key derived from
 * the installation's binding key (lib/approvals/binding.ts), with the purpose bound in: a cookie cannot be replayed as
 * a stored token, and a tampered or foreign value opens to nothing.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

export type SealPurpose = 'sso-flow' | 'sso-refresh-token' | 'sso-id-token';

export class Sealer {
  private readonly key: Buffer;

  constructor(installationKey: Buffer) {
    this.key = Buffer.from(hkdfSync('sha256', installationKey, Buffer.alloc(0), 'swarm-permissions sso seal v1', 32));
  }

  seal(purpose: SealPurpose, value: unknown): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(purpose));
    const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** The value sealed for this purpose, or undefined for anything else (tampered, truncated, another purpose). */
  open(purpose: SealPurpose, sealed: string): unknown {
    try {
      const raw = Buffer.from(sealed, 'base64url');
      if (raw.length < 29) return undefined;
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
      decipher.setAAD(Buffer.from(purpose));
      decipher.setAuthTag(raw.subarray(12, 28));
      const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
      return JSON.parse(text) as unknown;
    } catch {
      return undefined;
    }
  }
}
