/**
 * Test fixture: the webhook receiver of the hooks in lib/test-support/config-texts.ts, on a free loopback port. It
 * checks each delivery's HMAC signature with `secret`, keeps what it heard, and reviews before_tool_call calls: a
 * production rollback is blocked, any other call gets a change ticket set.
 */
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HookReceiver {
  /** where hooks.yaml's webhooks post */
  url: string;
  heard: { event: string; hook: string; signed: boolean; json: Record<string, unknown> }[];
  /** deliveries whose body was not JSON (said in a failure message) */
  unreadable: string[];
  close(): Promise<void>;
}

export async function startHookReceiver(secret: string): Promise<HookReceiver> {
  const heard: HookReceiver['heard'] = [];
  const unreadable: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const expected = `sha256=${createHmac('sha256', secret).update(`${String(req.headers['x-swarm-timestamp'])}.${body}`).digest('hex')}`;
      let json: { event: string; hook: string; call?: { arguments: { env?: string } } };
      try {
        json = JSON.parse(body) as typeof json;
      } catch {
        // A delivery cut short (the sender gave up on a slow answer and retries it): not an event, and never a throw
        // here, which would end whichever test is running.
        unreadable.push(`${String(req.headers['x-swarm-event'])}: ${body.length} bytes`);
        return res.writeHead(400).end();
      }
      heard.push({ event: json.event, hook: json.hook, signed: req.headers['x-swarm-signature'] === expected, json });
      res.writeHead(200, { 'content-type': 'application/json' });
      if (json.event !== 'before_tool_call') return res.end();
      res.end(
        JSON.stringify(
          json.call?.arguments.env === 'prod'
            ? { decision: 'block', reason: 'The release desk has not signed off a production rollback.' }
            : { decision: 'rewrite', set: { change_ticket: 'CHG-1042' } },
        ),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    heard,
    unreadable,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
