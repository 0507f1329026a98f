/** One JSON request with a bearer token to a server of the tests (the decision listener or the route server). */
import { request as httpRequest } from 'node:http';

export interface Answer<B = Record<string, unknown>> {
  status: number;
  body: B;
}

export function sendJson<B = Record<string, unknown>>(port: number, method: string, path: string, token: string, body?: unknown): Promise<Answer<B>> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string | number> = { authorization: `Bearer ${token}` };
    if (text !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, body: (raw ? JSON.parse(raw) : {}) as B });
      });
    });
    req.on('error', reject);
    req.end(text);
  });
}
