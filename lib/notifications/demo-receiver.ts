/**
 * The demo's local webhook receiver: `npm run demo` starts it on loopback and points the `demo-receiver` channel of
 * config/notifications.yaml at it (an `optional` channel, off wherever its variables are not set), so that whoever
 * tries the demo sees a signed notification arrive, checked the way a real receiver checks it: the HMAC over
 * `<timestamp>.<body>` and a timestamp no older than five minutes.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, signature } from './core';

export interface ReceivedNotice {
  event: string;
  /** the signature matched and the timestamp was fresh */
  verified: boolean;
  /** one line for a person: what happened and where to act */
  summary: string;
}

export interface DemoReceiver {
  url: string;
  secret: string;
  close(): Promise<void>;
}

const MAX_AGE_SECONDS = 300;
const MAX_BODY = 256 * 1024;

function summarise(json: Record<string, unknown>): string {
  const approval = json.approval as { agent?: string; tool?: string; gate?: string; approvals_required?: number } | undefined;
  const link = typeof json.link === 'string' ? ` ${json.link}` : '';
  if (approval) {
    const people = approval.approvals_required && approval.approvals_required > 1 ? `, ${approval.approvals_required} people must approve` : '';
    return `${approval.agent} → ${approval.tool} (gate ${approval.gate}${people})${link}`;
  }
  return `${typeof json.text === 'string' ? json.text : 'notification'}${link}`;
}

/** Start the receiver on 127.0.0.1 (a free port); every notice it receives is passed to `onNotice`. */
export async function startDemoReceiver(onNotice: (notice: ReceivedNotice) => void): Promise<DemoReceiver> {
  const secret = randomBytes(24).toString('base64url');
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on('end', () => {
      if (req.method !== 'POST' || size > MAX_BODY) return void res.writeHead(size > MAX_BODY ? 413 : 405).end();
      const body = Buffer.concat(chunks).toString('utf8');
      const timestamp = String(req.headers[TIMESTAMP_HEADER.toLowerCase()] ?? '');
      const given = Buffer.from(String(req.headers[SIGNATURE_HEADER.toLowerCase()] ?? ''));
      const expected = Buffer.from(signature(secret, timestamp, body));
      const fresh = Math.abs(Date.now() / 1000 - Number(timestamp)) <= MAX_AGE_SECONDS;
      const verified = fresh && given.length === expected.length && timingSafeEqual(given, expected);
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(body) as Record<string, unknown>;
      } catch {
        return void res.writeHead(400).end('not JSON');
      }
      onNotice({ event: typeof json.event === 'string' ? json.event : 'unknown', verified, summary: summarise(json) });
      // A receiver refuses what it cannot verify: the sender records the refusal on /notifications.
      res.writeHead(verified ? 204 : 401).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/swarm`,
    secret,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
