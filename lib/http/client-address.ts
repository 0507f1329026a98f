/**
 * The client's address: the one rule for every place that takes one (the sign-in throttle, the `ip` of audit rows, the
 * request log). A client can write any X-Forwarded-For it likes, so the header is believed only as far as trusted
 * proxies wrote it:
 *
 *   - the address is the socket's (the decision listener's peer), unless that peer is a trusted proxy
 *     (SWARM_TRUSTED_PROXIES: comma-separated CIDRs or addresses, IPv4 and IPv6; by default none);
 *   - from a trusted peer, X-Forwarded-For is walked from the right, each entry being the peer of the hop after it:
 *     trusted addresses are skipped, the first untrusted one is the client's. An entry that is not an address ends the
 *     walk at the last address known (a trusted proxy passed on what its client wrote).
 *
 * Only the decision listener sees the socket. Next.js, behind it on loopback, takes the address the listener resolved
 * from a header the listener sets and proves with a key derived from the secret of this start (SWARM_INTERNAL_SECRET,
 * lib/server/serve.ts); a request without that proof (another local process, `next dev`) has no known address.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import { INTERNAL_SECRET_ENV } from '@/lib/ops/internal';

export const TRUSTED_PROXIES_ENV = 'SWARM_TRUSTED_PROXIES';
/** From the listener to Next.js: the client address it resolved. */
export const CLIENT_ADDRESS_HEADER = 'x-swarm-client-address';
/** From the listener to Next.js: the proof that the listener set CLIENT_ADDRESS_HEADER. */
export const CLIENT_ADDRESS_PROOF_HEADER = 'x-swarm-client-address-proof';

export interface TrustedProxies {
  /** the entries as configured, for messages */
  readonly entries: readonly string[];
  has(address: string): boolean;
}

/** An address as written in a header or by a socket: brackets, a port and a zone dropped; IPv4-mapped IPv6 as IPv4. */
export function normalAddress(raw: string | null | undefined): string | undefined {
  let a = raw?.trim();
  if (!a) return undefined;
  if (a.startsWith('[')) {
    const end = a.indexOf(']');
    if (end < 0) return undefined;
    a = a.slice(1, end);
  } else if (/^[^:]+:\d+$/.test(a)) {
    a = a.slice(0, a.indexOf(':'));
  }
  const zone = a.indexOf('%');
  if (zone >= 0) a = a.slice(0, zone);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a);
  if (mapped) a = mapped[1]!;
  return isIP(a) === 0 ? undefined : a.toLowerCase();
}

const NONE: TrustedProxies = { entries: [], has: () => false };

/**
 * SWARM_TRUSTED_PROXIES as a set of networks. Throws, naming the entry, for one that is not an address or a CIDR, so
 * that a typo stops the start instead of trusting nobody (or everybody) in silence.
 */
export function parseTrustedProxies(raw: string | undefined): TrustedProxies {
  const entries = (raw ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (entries.length === 0) return NONE;
  const list = new BlockList();
  for (const entry of entries) {
    const slash = entry.indexOf('/');
    const address = slash < 0 ? entry : entry.slice(0, slash);
    const family = isIP(address);
    const max = family === 4 ? 32 : 128;
    const prefixText = slash < 0 ? String(max) : entry.slice(slash + 1);
    const prefix = /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
    if (family === 0 || !(prefix >= 0 && prefix <= max)) {
      throw new Error(
        `${TRUSTED_PROXIES_ENV}: "${entry}" is not an address or a CIDR (write them comma-separated, e.g. 10.0.0.0/8, 192.0.2.7, 2001:db8::/32).`,
      );
    }
    list.addSubnet(address, prefix, family === 4 ? 'ipv4' : 'ipv6');
  }
  return {
    entries,
    has(address) {
      const a = normalAddress(address);
      return a !== undefined && list.check(a, isIP(a) === 4 ? 'ipv4' : 'ipv6');
    },
  };
}

/**
 * The client's address from the socket's peer and the X-Forwarded-For header (all of its lines joined), as the rule
 * above says. Undefined only without a peer (a socket already closed).
 */
export function resolveClientAddress(peer: string | undefined, forwardedFor: string | null | undefined, trusted: TrustedProxies): string | undefined {
  let client = normalAddress(peer);
  if (client === undefined || !trusted.has(client) || !forwardedFor) return client;
  const hops = forwardedFor.split(',');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = normalAddress(hops[i]);
    if (hop === undefined) return client;
    client = hop;
    if (!trusted.has(hop)) return hop;
  }
  // Every hop is a trusted proxy: the farthest one is the client (a request a proxy made itself).
  return client;
}

const proofs = new Map<string, Buffer>();

/** The proof the listener sends with a resolved address: derived from the secret, so the secret itself never travels. */
export function clientAddressProof(secret: string): string {
  return createHmac('sha256', secret).update('swarm client address').digest('base64url');
}

/**
 * In Next.js: the client address the decision listener resolved, when the request carries its proof; else undefined
 * (a request that did not come through the listener has no address anyone vouches for).
 */
export function forwardedClientAddress(header: (name: string) => string | null, secret = process.env[INTERNAL_SECRET_ENV]): string | undefined {
  if (!secret || secret.length < 16) return undefined;
  const presented = header(CLIENT_ADDRESS_PROOF_HEADER);
  if (!presented) return undefined;
  let expected = proofs.get(secret);
  if (!expected) {
    expected = Buffer.from(clientAddressProof(secret));
    proofs.set(secret, expected);
  }
  const given = Buffer.from(presented);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  return normalAddress(header(CLIENT_ADDRESS_HEADER));
}
