/**
 * The reference of the HTTP benchmark: a bare node:http server that does only the JSON round trip of a check (read
 * the body, JSON.parse it, answer a fixed decision as JSON), in its own process like the product's server.
 *
 *   node bench/bare-server.ts PORT      (run by bench/http.ts; plain JavaScript syntax, no imports of the product)
 */
import { createServer } from 'node:http';

const port = Number(process.argv[2]);
const answer = JSON.stringify({ decision_id: '00000000-0000-7000-8000-000000000000', decision: 'ALLOW', rule_source: 'agent_allowlist', reason: 'fixed', approval_id: null, recorded: false, trace: [] });

createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c: string) => (body += c));
  req.on('end', () => {
    try {
      JSON.parse(body);
    } catch {
      res.writeHead(400).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer), 'cache-control': 'no-store' });
    res.end(answer);
  });
}).listen(port, '127.0.0.1', () => console.log(`bare server on ${port}`));
