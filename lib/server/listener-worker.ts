/**
 * One decision listener worker (lib/server/workers.ts): opens the server's database and configuration from the
 * environment the primary gave it, answers the decision endpoints on the shared port, passes the rest to Next.js.
 */
import { openApp } from '@/lib/app';
import { log } from '@/lib/ops/log';
import { INTERNAL_SECRET_ENV } from '@/lib/ops/internal';
import { createFrontServer } from './front';
import { askPrimaryForMetrics, serveThePrimary, WORKER_HOST_ENV, WORKER_PORT_ENV, WORKER_UPSTREAM_ENV } from './workers';
import { messageOf } from '@/lib/errors';

const env = process.env;
const port = Number(env[WORKER_PORT_ENV]);
const upstreamPort = Number(env[WORKER_UPSTREAM_ENV]);
try {
  const app = await openApp({ dbPath: env.SWARM_DB ?? 'data/swarm.db', env, watchConfig: true, checkpointsElsewhere: true, enforcePolicyTests: true });
  const front = createFrontServer({ app, upstream: { host: '127.0.0.1', port: upstreamPort }, internalSecret: env[INTERNAL_SECRET_ENV], processMetrics: askPrimaryForMetrics });
  serveThePrimary(async (timeoutMs) => {
    await front.shutdown(timeoutMs);
    await app.close();
  });
  front.listen(port, env[WORKER_HOST_ENV] || undefined);
} catch (error) {
  log('error', 'a decision listener worker cannot start', { error: messageOf(error) });
  process.exit(1);
}
