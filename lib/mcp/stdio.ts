/**
 * The gateway's stdin, guarded: the SDK's stdio transport drops a line it cannot read (not JSON, or JSON that is not a
 * JSON-RPC message) without a word, so a client that sent one waits forever. Each line is looked at here first: one
 * that is not JSON is answered with the protocol's parse error (-32700), one that is not a JSON-RPC message with
 * Invalid Request (-32600, with its id when it has a usable one), and only messages reach the transport.
 */
import { PassThrough, type Readable } from 'node:stream';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';

/** The longest line kept while waiting for its end: a client that never sends a newline cannot fill the memory. */
const MAX_LINE_BYTES = 16 * 1024 * 1024;

export function guardedStdin(stdin: NodeJS.ReadableStream, stdout: NodeJS.WritableStream): Readable {
  const out = new PassThrough();
  let pending = '';
  const answer = (id: string | number | null, code: number, message: string) => {
    stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } })}\n`);
  };
  const line = (text: string) => {
    if (text.trim() === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      answer(null, -32700, 'Parse error: the line is not JSON.');
      return;
    }
    if (JSONRPCMessageSchema.safeParse(parsed).success) {
      out.write(`${text}\n`);
      return;
    }
    const id = typeof parsed === 'object' && parsed !== null && 'id' in parsed ? (parsed as { id: unknown }).id : undefined;
    // A notification (no id) that is not valid is dropped, as the specification says nothing answers a notification.
    if (id === undefined && typeof parsed === 'object' && parsed !== null && 'method' in parsed) return;
    answer(typeof id === 'string' || typeof id === 'number' ? id : null, -32600, 'Invalid Request: not a JSON-RPC 2.0 message (params must be an object).');
  };
  stdin.on('data', (chunk: Buffer | string) => {
    pending += chunk.toString();
    let at: number;
    while ((at = pending.indexOf('\n')) >= 0) {
      line(pending.slice(0, at).replace(/\r$/, ''));
      pending = pending.slice(at + 1);
    }
    if (pending.length > MAX_LINE_BYTES) {
      pending = '';
      answer(null, -32600, 'Invalid Request: a line longer than 16 MiB.');
    }
  });
  stdin.on('end', () => {
    if (pending) line(pending);
    out.end();
  });
  return out;
}
