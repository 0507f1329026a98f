/**
 * `npm start` and `npm run demo`: build if needed, prepare the database, start the server on PORT (default 8000): the
 * decision listener on PORT, the Next.js server behind it on loopback (lib/server/serve.ts); for the demo, run a
 * simulated agent team against the same database.
 *
 *   npm start          SWARM_DB (default data/swarm.db, or a postgres:// URL), no demo data
 *   npm run demo       data/demo.db, the BFSI example policy, demo users and the simulated team
 */
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { openApp, type App } from '@/lib/app';
import { parseDbLocation, shownLocation } from '@/db/location';
import { assertKeyApart, keyDirFor, loadSigningKey, trustedVerifierKeys } from '@/lib/audit/trail/checkpoints';
import { signedHeadsFile, witnessTargets } from '@/lib/audit/trail/witness';
import { DemoTeam } from '@/lib/agents/demo-team';
import { startDemoReceiver } from '@/lib/notifications/demo-receiver';
import { serve } from '@/lib/server/serve';
import { listenerWorkers } from '@/lib/server/workers';
import { randomPassword } from '@/lib/auth/secrets';
import { log } from '@/lib/ops/log';

const demo = process.argv.includes('--demo');
const port = Number(process.env.PORT ?? 8000);
if (!Number.isInteger(port) || port <= 0 || port > 65535) {
  console.error(`PORT must be a port number, not "${process.env.PORT}".`);
  process.exit(2);
}
// Next.js telemetry stays off unless the operator sets NEXT_TELEMETRY_DISABLED=0 (or unsets it by choice elsewhere).
const env: NodeJS.ProcessEnv = { NEXT_TELEMETRY_DISABLED: '1', ...process.env };
process.env.SWARM_PROCESS = 'listener';
if (demo) {
  env.SWARM_DB ??= 'data/demo.db';
  env.SWARM_PROFILE ??= 'bfsi';
  // The demo keeps its signing key beside data/demo.db, knowingly: a real installation keeps it apart (below).
  env.SWARM_AUDIT_KEY_BESIDE_DB ??= '1';
  // Notifications link to the request on this server (a relative link means nothing in a chat or a terminal).
  env.SWARM_PUBLIC_URL ??= `http://localhost:${port}`;
  // A local receiver for the demo-receiver channel of config/notifications.yaml (off anywhere else): whoever tries the
  // demo sees each gated call's signed notification arrive and verified.
  if (!env.SWARM_DEMO_WEBHOOK_URL) {
    const receiver = await startDemoReceiver((n) =>
      console.log(`  [webhook] ${n.event}: ${n.summary}${n.verified ? ' (signature verified)' : ' (REFUSED: the signature did not verify)'}`),
    );
    env.SWARM_DEMO_WEBHOOK_URL = receiver.url;
    env.SWARM_DEMO_WEBHOOK_SECRET = receiver.secret;
  }
}
env.SWARM_DB ??= 'data/swarm.db';
const nextBin = join('node_modules', 'next', 'dist', 'bin', 'next');

if (!existsSync(join(process.env.NEXT_DIST_DIR || '.next', 'BUILD_ID'))) {
  console.log('No production build found: building once (about a minute)…');
  const build = spawnSync(process.execPath, [nextBin, 'build'], { stdio: 'inherit', env });
  if (build.status !== 0) {
    console.error('The build failed; see above.');
    process.exit(build.status ?? 1);
  }
}

// Prepare the database in this process first: migrations, the first admin, its password printed once.
let app: App;
try {
  // The same checks as the server's own start: a malformed configuration or failing policy tests stop it here, with
  // the file, line and column, instead of a server that answers 503.
  // This process also answers the decision endpoints (lib/server/front.ts): a long-lived application.
  // The Next.js server signs the checkpoints with the key of SWARM_AUDIT_KEY_DIR (required on PostgreSQL): said here,
  // before anything starts, rather than by every request of a server that cannot sign.
  listenerWorkers(env);
  const keyDir = keyDirFor(env.SWARM_DB, env);
  if (/^postgres(ql)?:/i.test(env.SWARM_DB.trim())) loadSigningKey(keyDir);
  // The evidence's trust anchors, checked before anything starts: the private key apart from the database (whoever can
  // edit the file must not be able to re-sign it), the pinned public keys readable, the witnesses well-formed.
  assertKeyApart(env.SWARM_DB, env);
  // The demo starts over when data/demo.db was removed: its key folder forgets the heads it signed for the old one.
  if (demo && !existsSync(env.SWARM_DB)) rmSync(signedHeadsFile(keyDir, env.SWARM_DB), { force: true });
  trustedVerifierKeys(keyDir, env);
  witnessTargets(env);
  app = await openApp({ dbPath: env.SWARM_DB, env, watchConfig: true, backgroundCheckpoints: true, enforcePolicyTests: true });
} catch (error) {
  console.error(`Cannot start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
if (demo && parseDbLocation(env.SWARM_DB).kind !== 'sqlite') {
  console.error('The demo runs on SQLite (data/demo.db): unset SWARM_DB, or start the product with npm start.');
  process.exit(2);
}
const report = await app.bootstrap();
const url = `http://localhost:${port}`;
const lines: string[] = [];
if (demo) {
  const password = env.SWARM_ADMIN_PASSWORD || randomPassword();
  await app.auth.setPassword('admin', password);
  // Two administrators besides admin: a change to the rules needs two people other than its proposer.
  for (const [name, role] of [['olivia', 'operator'], ['oscar', 'operator'], ['alex', 'auditor'], ['victor', 'viewer'], ['ada', 'admin'], ['bea', 'admin']] as const) {
    if (!(await app.auth.findUser(name))) await app.auth.createUser(name, role, password);
    else await app.auth.setPassword(name, password);
  }
  lines.push(
    `  Sign in as admin / ${password}`,
    `  (also olivia and oscar = operator, alex = auditor, victor = viewer, ada and bea = admin, same password;`,
    `   a change to the rules on /policy is approved by two administrators other than its proposer: ada and bea)`,
  );
} else if (report.createdAdmin) {
  lines.push(
    `  First start: created user "admin" with password ${report.createdAdmin.generated ? report.createdAdmin.password : '(SWARM_ADMIN_PASSWORD)'}`,
    '  It is shown this once. Add users with: npx swarm users add NAME --role ROLE',
  );
}

// Next.js on a loopback port, the decision listener on PORT in front of it (lib/server/serve.ts).
// SWARM_NEXT_PORT pins the loopback port of Next.js (the HTTP benchmark measures it directly); default: a free one.
const nextPort = env.SWARM_NEXT_PORT ? Number(env.SWARM_NEXT_PORT) : undefined;
const serving = await serve({ app, port, env, upstreamPort: nextPort }).catch((error: unknown) => {
  console.error(`Cannot listen on port ${port}: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
// Graceful shutdown (SIGTERM, Ctrl-C): the listener stops accepting and answers the checks in flight (a queued group
// commit is committed and answered), then Next.js stops (its application records the server stop and signs the final
// checkpoint of the audit chains), then this process closes its database and exits.
let stopping = false;
const stop = (signal: NodeJS.Signals) => {
  if (stopping) return;
  stopping = true;
  log('info', 'shutdown', { signal });
  void serving.close().then(async () => {
    await app.close();
    log('info', 'stopped');
    process.exit(0);
  });
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
serving.next.on('exit', (code, signal) => {
  if (stopping) return;
  console.error(`The Next.js server stopped (${signal ?? `exit ${code}`}).`);
  void serving.close().then(async () => {
    await app.close();
    process.exit(code ?? 1);
  });
});

async function waitForServer(): Promise<boolean> {
  for (let i = 0; i < 120; i++) {
    try {
      const res = await fetch(`${url}/api/v1/health`);
      if (res.ok) return true;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return false;
}

void waitForServer().then((up) => {
  if (!up) {
    console.error(`The server did not answer on ${url} within a minute.`);
    return;
  }
  console.log(`\nSwarm Permissions is running on ${url}  (database: ${shownLocation(parseDbLocation(env.SWARM_DB))})`);
  const profiles = app.profiles.profiles;
  console.log(
    profiles.length > 0
      ? `  Compliance profile${profiles.length > 1 ? 's' : ''}: ${profiles.map((p) => `${p.name} (${p.title})`).join(', ')}; see /transparency`
      : '  No compliance profile is active (SWARM_PROFILE=bfsi, healthcare or eu_ai_act_high_risk selects one).',
  );
  const control = app.profiles.changeControl;
  if (control) {
    console.log(
      `  Change control: the rules change only through proposals approved by ${control.approvers} ${control.roles.join(' or ')} users other than the proposer (/policy, npx swarm policy propose); edits of config/*.yaml are shown as drift, not loaded.`,
    );
  }
  for (const l of lines) console.log(l);
  if (!demo) return;
  console.log('  The demo team is calling tools every few seconds. Open /denials and /approvals. Ctrl-C stops.');
  console.log('  A production rollback waits for two people (sign in as olivia, then as admin); each gated call is sent,');
  console.log('  signed, to a local webhook receiver whose lines start with [webhook] below.\n');
  const team = new DemoTeam(app, (e) => {
    if (e.outcome !== 'allowed') console.log(`  [team] ${e.agent} → ${e.tool}: ${e.outcome} (${e.detail})`);
  });
  team.start();
  void simulateHttpRefusals();
});

/** RBAC shows on HTTP routes: a viewer reads the audit table, and a script forgets its token. */
async function simulateHttpRefusals(): Promise<void> {
  const viewerToken = await app.auth.createToken({ username: 'victor' }, 'demo viewer script');
  const once = async () => {
    await fetch(`${url}/api/v1/permissions/denials?since=3600`, { headers: { authorization: `Bearer ${viewerToken}` } }).catch(() => {});
    await fetch(`${url}/api/v1/flags/batch_runner`, { method: 'PUT', headers: { authorization: `Bearer ${viewerToken}`, 'content-type': 'application/json' }, body: '{"value":false,"reason":"demo"}' }).catch(() => {});
    await fetch(`${url}/api/v1/approvals`).catch(() => {});
  };
  await once();
  setInterval(() => void once(), 20_000);
}

// ---------------------------------------------------------------------------------------------------------------
// Feature flag configuration problems (issue 5): an unknown SWARM_FLAG_* variable, a value that is not a boolean or an
// attempt to turn off an invariant is reported at start, never ignored silently. /transparency shows the same list.
{
  const problems = app.flags.resolution().problems;
  if (problems.length > 0) {
    console.warn(`\nFeature flags: ${problems.length} configuration problem${problems.length === 1 ? '' : 's'} (not applied; see /transparency):`);
    for (const p of problems) console.warn(`  - ${p.message}`);
  }
}
