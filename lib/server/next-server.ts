/**
 * The Next.js server of `npm start`, behind the decision listener on a loopback port (lib/server/serve.ts):
 * `node bin/run.mjs lib/server/next-server.ts PORT [HOST]`.
 *
 * It is `next start` with the refusals of the public port in front of it (lib/http/unservable.ts), so that both ports
 * give one answer: Next.js's own server answers TRACE and CONNECT (it cannot build a web Request for them) and a path
 * it cannot decode (`/api/v1/flags/%ZZ`) with 500, where the product answers 405 and 400. Everything else is Next.js's
 * own request handler, on the production build.
 */
import { createServer } from 'node:http';
import { refuseMethod, refusePath } from '@/lib/http/unservable';

const [portArg, host = '127.0.0.1'] = process.argv.slice(2);
const port = Number(portArg);
if (!Number.isInteger(port) || port <= 0 || port > 65535) {
  console.error(`usage: next-server.ts PORT [HOST] (a port number, not "${portArg ?? ''}")`);
  process.exit(2);
}
// As `next start` does: the production build, and React's production code.
(process.env as Record<string, string>).NODE_ENV = 'production';

const { default: next } = await import('next');
const nextApp = next({ dev: false, dir: process.cwd(), hostname: host, port });
await nextApp.prepare();
const handle = nextApp.getRequestHandler();

const server = createServer((req, res) => {
  if (refuseMethod(req, res) || refusePath(req, res) === true) return;
  handle(req, res).catch((error: unknown) => {
    console.error('The Next.js request handler failed', error);
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
    res.end();
  });
});
// Node's keep-alive timeout (5 s) stays, as under `next start`: the listener drops its idle connections before that
// (UPSTREAM_IDLE_MS, lib/server/front.ts).
server.listen(port, host, () => console.log(`Next.js server ready on http://${host}:${port}`));

// As `next start`: a signal ends the process, unless the application handles its own last words
// (NEXT_MANUAL_SIG_HANDLE, set by lib/server/serve.ts for an application whose stop is asynchronous).
if (!process.env.NEXT_MANUAL_SIG_HANDLE) {
  const stop = (signal: NodeJS.Signals) => {
    server.close();
    void nextApp.close().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
