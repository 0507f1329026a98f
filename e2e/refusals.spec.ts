/**
 * Every refusal answered with its own status and code, and recorded where the product promises it, through the built
 * server as `npm start` runs it: the decision listener on the public port, Next.js behind it (the routes that are not
 * decisions, approvals and flags among them, are answered by Next.js's bundles, where a class can exist in several
 * chunks and `instanceof` failed: every refusal below was a 500 there). A fresh server, so which chunk opens the
 * application first is not settled by earlier specs.
 *
 * The sweep walks every code of lib/errors.ts (each AppError code and each coded error the map knows): each has a
 * request that provokes it here, or says why no request can and which test covers it instead. A new code without
 * either fails the first test, as tests/errors-map.test.ts fails for a code missing from the map.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect, test, type Locator, type Page } from '@playwright/test';
import { CODED_ERRORS, ERROR_STATUS } from '@/lib/errors';
import { E2E } from './fixtures/accounts';
import { isolatedServer } from './fixtures/isolated-server';

test.describe.configure({ mode: 'serial', timeout: 120_000 });

const server = isolatedServer(E2E.port + 61, { as: 'npm start' });
const tokens = { admin: server.token, olivia: '', oscar: '', victor: '', deployer: '' };
type Who = keyof typeof tokens;

interface Answer {
  status: number;
  code: string | undefined;
  message: string;
  body: Record<string, unknown>;
}

async function send(method: string, path: string, who: Who | null, body?: unknown, headers: Record<string, string> = {}, base = server.url): Promise<Answer> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(who ? { authorization: `Bearer ${tokens[who]}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON (asserted by the caller where it matters)
  }
  const error = (json.error ?? {}) as { code?: string; message?: string };
  return { status: res.status, code: error.code, message: error.message ?? text, body: json };
}

/** A gated call asked for: the id of its approval request (requested by `who`: an agent, or a person on its behalf). */
async function ask(who: Who, model: string): Promise<string> {
  const r = await send('POST', '/api/v1/permissions/check', who, { agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: model, env: 'staging' } });
  expect(r.status, r.message).toBe(200);
  expect(r.body.decision).toBe('ASK');
  return String(r.body.approval_id);
}

function readDb<T>(query: (db: Database.Database) => T): T {
  const db = new Database(server.dbPath, { readonly: true });
  try {
    return query(db);
  } finally {
    db.close();
  }
}

const events = (type: string, actor: string): { target: string | null; detail: Record<string, unknown> }[] =>
  readDb((db) => db.prepare('SELECT target, detail_json FROM security_events WHERE type = ? AND actor = ? ORDER BY id').all(type, actor) as { target: string | null; detail_json: string | null }[]).map(
    (e) => ({ target: e.target, detail: JSON.parse(e.detail_json ?? '{}') as Record<string, unknown> }),
  );
/** The refused decision is recorded as approval.refused, naming who tried, the request and the rule that refused it. */
const expectApprovalRefused = (actor: string, id: string, refusal: string): void =>
  expect(events('approval.refused', actor)).toContainEqual(expect.objectContaining({ target: id, detail: expect.objectContaining({ refusal }) }));
const flagHistory = (name: string): { action: string; changed_by: string; new_value: number | null }[] =>
  readDb((db) => db.prepare('SELECT action, changed_by, new_value FROM flag_changes WHERE name = ? ORDER BY id').all(name) as never);
const denialsOf = (path: string): number => readDb((db) => (db.prepare('SELECT count(*) AS n FROM permission_denials WHERE http_path = ?').get(path) as { n: number }).n);

/**
 * How each code is met through the built server: `provoke` makes the request and checks what must be recorded; or
 * `notByRequest` says why no request to a running server can raise it and `coveredBy` names the test that does
 * (`file: title`, checked to exist).
 */
type Case = { status: number; answerCode: string; provoke: () => Promise<Answer> } | { notByRequest: string; coveredBy: string };

const CASES: Record<string, Case> = {
  BAD_REQUEST: {
    status: 400,
    answerCode: 'BAD_REQUEST',
    provoke: async () => {
      const r = await send('PUT', '/api/v1/flags/cron_scheduler', 'admin', { value: false, reason: '   ' });
      expect(r.body.error).toMatchObject({ issues: [expect.objectContaining({ in: 'body', path: 'reason' })] });
      return r;
    },
  },
  UNAUTHENTICATED: {
    status: 401,
    answerCode: 'UNAUTHENTICATED',
    provoke: async () => {
      const before = denialsOf('/api/v1/flags');
      const r = await send('GET', '/api/v1/flags', null);
      // the refused request is itself a denial
      expect(denialsOf('/api/v1/flags')).toBe(before + 1);
      return r;
    },
  },
  FORBIDDEN: {
    status: 403,
    answerCode: 'FORBIDDEN',
    provoke: async () => {
      // The requester decides its own call: separation of duties, recorded naming who tried.
      const id = await ask('olivia', 'm-self');
      const r = await send('POST', `/api/v1/approvals/${id}/approve`, 'olivia', {});
      expect(r.message).toMatch(/Separation of duties/);
      expectApprovalRefused('olivia', id, 'self_decision');
      return r;
    },
  },
  INVARIANT: {
    status: 403,
    answerCode: 'INVARIANT',
    provoke: async () => {
      const r = await send('PUT', '/api/v1/flags/audit_trail_security_events', 'admin', { value: false, reason: 'too many rows' });
      expect(r.message).toMatch(/invariant/);
      // in the flag history and as a security event, naming who tried
      expect(flagHistory('audit_trail_security_events').at(-1)).toEqual({ action: 'refused', changed_by: 'admin', new_value: 0 });
      expect(events('flag.refused', 'admin').at(-1)).toMatchObject({ target: 'audit_trail_security_events', detail: { requested: false, reason: 'too many rows' } });
      // Removing its override is refused alike.
      const removed = await send('DELETE', '/api/v1/flags/audit_trail_security_events', 'admin', { reason: 'tidy up' });
      expect([removed.status, removed.code]).toEqual([403, 'INVARIANT']);
      expect(flagHistory('audit_trail_security_events').at(-1)).toEqual({ action: 'refused', changed_by: 'admin', new_value: null });
      return r;
    },
  },
  NOT_FOUND: {
    status: 404,
    answerCode: 'NOT_FOUND',
    provoke: async () => {
      const flag = await send('PUT', '/api/v1/flags/no_such_flag', 'admin', { value: false, reason: 'x' });
      expect([flag.status, flag.code]).toEqual([404, 'NOT_FOUND']);
      return send('POST', '/api/v1/approvals/apr_unknown12345/approve', 'olivia', {});
    },
  },
  CONFLICT: {
    status: 409,
    answerCode: 'CONFLICT',
    provoke: async () => {
      // An operator rejects a request an administrator approved a moment before.
      const id = await ask('deployer', 'm-conflict');
      expect((await send('POST', `/api/v1/approvals/${id}/approve`, 'admin', { reason: 'looks right' })).status).toBe(200);
      const r = await send('POST', `/api/v1/approvals/${id}/reject`, 'olivia', { reason: 'not today' });
      expect(r.message).toMatch(/already approved \(by admin\)/);
      expectApprovalRefused('olivia', id, 'already_decided');
      return r;
    },
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    answerCode: 'PAYLOAD_TOO_LARGE',
    provoke: async () => {
      const reason = 'x'.repeat(200 * 1024);
      // Next.js's route (a flag change) and the listener's own (a check) alike.
      const flag = await send('PUT', '/api/v1/flags/cron_scheduler', 'admin', { value: false, reason });
      expect([flag.status, flag.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
      return send('POST', '/api/v1/permissions/check', 'deployer', { agent: 'deployer', tool: 'monitor_drift', arguments: { note: reason } });
    },
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    answerCode: 'UNSUPPORTED_MEDIA_TYPE',
    provoke: () => send('PUT', '/api/v1/flags/cron_scheduler', 'admin', 'value=false', { 'content-type': 'text/plain' }),
  },
  TOO_MANY_REQUESTS: {
    status: 429,
    answerCode: 'TOO_MANY_REQUESTS',
    provoke: async () => {
      // Guesses for one user name are taken one at a time; beyond two waiting, the next is refused at once.
      const guesses = await Promise.all(Array.from({ length: 8 }, () => send('POST', '/api/v1/auth/login', null, { username: 'oscar', password: 'not-the-password' })));
      expect(guesses.every((g) => g.status === 401 || g.status === 429), JSON.stringify(guesses.map((g) => g.status))).toBe(true);
      const refused = guesses.find((g) => g.status === 429);
      expect(refused, 'no guess was refused for the full queue').toBeDefined();
      return refused!;
    },
  },
  POLICY_INVALID: {
    notByRequest: 'the answer code of POLICY_TESTS_FAILED (below), which no request raises',
    coveredBy: "lib/permissions/gates.test.ts: refuses a gates.yaml whose tests fail",
  },
  INTERNAL: {
    notByRequest: 'a failure of the server itself, never of a request: every other code is answered as itself, and a server failure as 500 INTERNAL without its internal message',
    coveredBy: 'tests/errors-map.test.ts: answers the failures a caller cannot act on with words of their own and the right status',
  },
  PERMISSION_DENIED: {
    notByRequest: "thrown only by the library's enforce() to its caller; a route answers a DENY in its body, and a refused request as FORBIDDEN (above)",
    coveredBy: 'lib/permissions/engine.test.ts: enforce(',
  },
  APPROVAL_REQUIRED: {
    notByRequest: "thrown only by the library's enforce() to its caller; a route answers an ASK in its body with the approval id",
    coveredBy: 'lib/permissions/engine.test.ts: enforce(',
  },
  INVALID_ARGUMENTS: {
    status: 400,
    answerCode: 'BAD_REQUEST',
    provoke: async () => {
      const r = await send('POST', '/api/v1/permissions/check', 'deployer', '{"agent":"deployer","tool":"monitor_drift","arguments":{"a":{"__proto__":{"x":1}}}}');
      expect(JSON.stringify(r.body)).toContain('arguments.a.__proto__');
      return r;
    },
  },
  AUDIT_UNAVAILABLE: {
    status: 503,
    answerCode: 'AUDIT_UNAVAILABLE',
    provoke: async () => {
      // The database refuses every new denial (an insider's trigger, a full disk): a denial is never answered unrecorded.
      const db = new Database(server.dbPath);
      db.exec(`CREATE TRIGGER sweep_refuses_denials BEFORE INSERT ON permission_denials BEGIN SELECT RAISE(ABORT, 'refused by the sweep'); END`);
      db.close();
      try {
        const check = await send('POST', '/api/v1/permissions/check', 'deployer', { agent: 'deployer', tool: 'export_raw_data', arguments: { dataset_id: 'ds' } });
        expect([check.status, check.code], check.message).toEqual([503, 'AUDIT_UNAVAILABLE']);
        expect(check.body.decision).toBeUndefined();
        // A refused request through Next.js (a viewer changing a flag) fails closed the same way.
        return await send('PUT', '/api/v1/flags/cron_scheduler', 'victor', { value: false, reason: 'x' });
      } finally {
        const w = new Database(server.dbPath);
        w.exec('DROP TRIGGER sweep_refuses_denials');
        w.close();
      }
    },
  },
  RULES_UNAVAILABLE: {
    notByRequest: 'a state of the database, not of a request: the active revision changed in it under change control; every decision then answers 503 until it is repaired or rolled back',
    coveredBy: 'lib/change-control/service.test.ts: takes no decision when the active revision was corrupted',
  },
  HOOK_WOULD_WAIT: {
    notByRequest: 'a hook configuration changed between the start of a decision and its commit (a race inside one decision); answered 503 RETRY',
    coveredBy: 'lib/hooks/hooks.test.ts: HookWouldWait',
  },
  ENGINE_IS_ASYNC: {
    notByRequest: 'a programming error (a synchronous entry point called on the PostgreSQL engine); no route calls one',
    coveredBy: 'lib/permissions/async-store.test.ts: EngineIsAsync',
  },
  DATABASE_UNAVAILABLE: {
    notByRequest: 'PostgreSQL only: the database server is gone',
    coveredBy: 'e2e/postgres.spec.ts: with the database gone, checks fail closed, readiness says why, pages say so calmly',
  },
  TRANSACTION_WOULD_WAIT: {
    notByRequest: 'a programming error (a synchronous transaction given a step that waits); no route makes one',
    coveredBy: 'db/dialect.test.ts: TransactionWouldWait',
  },
  DB_LOCATION_INVALID: { notByRequest: 'refused at start: SWARM_DB names nothing the product can use', coveredBy: 'cli/db-postgres.test.ts: which this product cannot use' },
  POLICY_TESTS_FAILED: {
    notByRequest: 'a configuration file whose policy tests fail, refused at start or on reload (the last good one stays); a proposal with failing tests is shown with them and cannot be approved (409)',
    coveredBy: 'lib/permissions/gates.test.ts: refuses a gates.yaml whose tests fail',
  },
  CONFIG_INVALID: { notByRequest: 'a configuration file refused at start or on reload (file:line:column); the last good one stays', coveredBy: 'lib/config/watched-file.test.ts: last good' },
  KEY_BESIDE_DATABASE: { notByRequest: 'refused at start: the signing key in the database folder', coveredBy: 'tests/tamper.test.ts: KeyBesideDatabase' },
  KEY_DIR_REQUIRED: { notByRequest: 'refused at start: no key folder for a database that is not a file', coveredBy: 'lib/audit/trail/pg-checkpoints.test.ts: KeyDirRequired' },
  SIGNING_KEY_MISSING: { notByRequest: 'refused at start: a trail without its signing key', coveredBy: 'lib/permissions/pg-engine.test.ts: There is no audit signing key' },
  PINNED_KEYS_UNREADABLE: { notByRequest: 'refused at start: the pinned verifier keys cannot be read', coveredBy: 'tests/tamper.test.ts: Cannot start: SWARM_AUDIT_PUBLIC_KEYS names' },
  WITNESS_CONFIG_INVALID: { notByRequest: 'refused at start: the witness configuration is not valid', coveredBy: 'lib/audit/trail/witness.test.ts: WitnessConfigInvalid' },
};

test.beforeAll(async () => {
  await server.start();
  for (const [name, role] of [['olivia', 'operator'], ['oscar', 'operator'], ['victor', 'viewer']] as const) {
    const made = await server.swarm('users', 'add', name, '--role', role, '--password', `${name}-password-12345`);
    expect(made.code, made.out).toBe(0);
    tokens[name] = /swt_[A-Za-z0-9_-]+/.exec(made.out)![0];
  }
  const agent = await server.swarm('tokens', 'add', '--agent', 'deployer');
  expect(agent.code, agent.out).toBe(0);
  tokens.deployer = /swt_[A-Za-z0-9_-]+/.exec(agent.out)![0];
});

test.afterAll(async () => {
  await server.kill('SIGTERM');
});

test('every code of the error map has a case in the sweep, and every case a code', () => {
  const codes = [...Object.keys(ERROR_STATUS), ...Object.keys(CODED_ERRORS)].sort();
  expect(Object.keys(CASES).sort()).toEqual(codes);
  for (const [code, c] of Object.entries(CASES)) {
    if ('provoke' in c) continue;
    // The test named instead exists and says what it covers.
    const [file, words] = c.coveredBy.split(': ');
    expect(existsSync(file!), `${code}: ${file}`).toBe(true);
    expect(readFileSync(file!, 'utf8'), `${code}: ${c.coveredBy}`).toContain(words);
  }
});

test('each refusal is answered with its own status and code through the built server, and recorded where promised', async () => {
  const answered: Record<string, [number, string | undefined]> = {};
  const expected: Record<string, [number, string]> = {};
  for (const [code, c] of Object.entries(CASES)) {
    if (!('provoke' in c)) continue;
    const r = await c.provoke();
    answered[code] = [r.status, r.code];
    expected[code] = [c.status, c.answerCode];
  }
  expect(answered, server.log().slice(-3000)).toEqual(expected);
  expect(server.log()).not.toMatch(/Unhandled error in route/);
});

test('the console says why a change or a decision was refused, in the dialog or the queue', async ({ page }) => {
  // An administrator opens a flag change; before she saves it, her role is lowered to operator.
  expect((await server.swarm('users', 'add', 'bea', '--role', 'admin', '--password', 'bea-password-12345')).code).toBe(0);
  await server.signIn(page, 'bea', 'bea-password-12345');
  await page.goto(`${server.url}/transparency`);
  await page.getByRole('button', { name: 'Turn off cron_scheduler' }).click();
  const dialog = page.getByRole('dialog', { name: /cron_scheduler/ });
  await dialog.getByLabel(/Reason/).fill('maintenance window');
  const lowered = await server.swarm('users', 'set-role', 'bea', 'operator');
  expect(lowered.code, lowered.out).toBe(0);
  await dialog.getByRole('button', { name: 'Turn off' }).click();
  await expect(dialog.getByRole('alert')).toHaveText(/Not changed\. Role "operator" is below the required role "admin"\./);
  await expect(dialog.getByRole('alert')).not.toContainText('Something went wrong');
  await shots(page, 'refused-flag-change');
  await page.setViewportSize({ width: 1440, height: 900 });
  // The refused attempt is in the flag history, naming her.
  expect(flagHistory('cron_scheduler').at(-1)).toEqual({ action: 'refused', changed_by: 'bea', new_value: 0 });
  await dialog.getByRole('button', { name: 'Cancel' }).click();

  // An operator approves a request that an administrator rejected a moment before.
  const asked = await send('POST', '/api/v1/permissions/check', 'deployer', { agent: 'deployer', tool: 'send_email', arguments: { to: 'partner@bank.example', subject: 'Q3 model card' } });
  expect(asked.body.decision).toBe('ASK');
  const id = String(asked.body.approval_id);
  await page.context().clearCookies();
  await server.signIn(page, 'olivia', 'olivia-password-12345');
  await page.goto(`${server.url}/approvals`);
  const card = page.locator(`[data-approval-id="${id}"]`);
  await expect(card).toBeVisible();
  expect((await send('POST', `/api/v1/approvals/${id}/reject`, 'admin', { reason: 'not to partners this week' })).status).toBe(200);
  await card.getByRole('button', { name: 'Approve…' }).click();
  const approve = page.getByRole('dialog', { name: 'Approve this request?' });
  // (a medium-risk call: the box ticked on purpose first)
  await approve.getByRole('checkbox').check();
  await approve.getByRole('button', { name: /^Approve/ }).click();
  await expect(page.getByText(/Could not approve/)).toContainText('This request is already rejected (by admin).');
  await expect(card).toHaveCount(0);
  await shots(page, 'refused-approval');
  expectApprovalRefused('olivia', id, 'already_decided');
});

/** Screenshots of the page at 1440 and at 390 pixels wide, for a person to look at (test-results/screens). */
async function shots(page: Page, name: string, showing?: Locator): Promise<void> {
  for (const [width, height] of [[1440, 900], [390, 844]] as const) {
    await page.setViewportSize({ width, height });
    await showing?.scrollIntoViewIfNeeded();
    await page.screenshot({ path: `test-results/screens/${name}-${width}.png` });
  }
}

test('the refused attempt to turn off the audit trail is in the flag history, on /audit and in the report', async ({ page }) => {
  // The sweep above tried it as admin (value false, "too many rows").
  await page.context().clearCookies();
  await server.signIn(page);
  await page.goto(`${server.url}/transparency#history`);
  const history = page.getByRole('table', { name: /Flag history/i });
  await expect(history.getByRole('row').filter({ hasText: 'audit_trail_security_events' }).filter({ hasText: 'too many rows' })).toContainText(/refused/i);

  await shots(page, 'refused-flag-history', history.getByRole('row').filter({ hasText: 'too many rows' }).first());

  await page.goto(`${server.url}/audit?window=1h&type=flag&outcome=refused`);
  await expect(page.getByRole('row').filter({ hasText: 'Flag change refused' }).filter({ hasText: 'audit_trail_security_events' }).first()).toBeVisible();
  // Every refusal of the hour, the refused approval decisions among them, as a person reads them.
  await page.goto(`${server.url}/audit?window=1h&outcome=refused`);
  await expect(page.getByRole('row').filter({ hasText: 'Approval decision refused' }).first()).toBeVisible();
  await shots(page, 'refused-audit');

  // The period around this test's own rows: from an hour before to an hour after now (its own clock, never a date).
  const at = (offsetHours: number) => new Date(Date.now() + offsetHours * 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const res = await fetch(`${server.url}/api/v1/reports/audit.pdf?from=${at(-1)}&to=${at(1)}`, { headers: { authorization: `Bearer ${server.token}` } });
  expect(res.status).toBe(200);
  const file = join(server.dir, 'report.pdf');
  writeFileSync(file, Buffer.from(await res.arrayBuffer()));
  const text = execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
  const refused = text.slice(text.indexOf('Refused changes'));
  expect(refused).toMatch(/Flag change refused[\s\S]*audit_trail_security_events/);
  expect(text).not.toMatch(/Refused changes: none/);
});

test('every port gives one answer: the listener and the Next.js server behind it refuse alike', async () => {
  for (const base of [server.url, server.nextUrl()]) {
    // (fetch refuses to send TRACE: a request of node:http's does)
    const trace = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(`${base}/api/v1/flags`, { method: 'TRACE', headers: { authorization: `Bearer ${tokens.admin}` } }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect([trace.status, (JSON.parse(trace.body) as { error: { code: string } }).error.code], base).toEqual([405, 'METHOD_NOT_ALLOWED']);
    const escaped = await send('GET', '/api/v1/flags/%ZZ', 'admin', undefined, {}, base);
    expect([escaped.status, escaped.code], base).toEqual([400, 'BAD_REQUEST']);
    const page = await send('GET', '/login%E0%A4%A', null, undefined, {}, base);
    expect(page.status, base).toBe(400);
  }
  // A viewer's GET /metrics: refused by the listener, and AuthZEN says so too.
  const metrics = await send('GET', '/metrics', 'victor');
  expect([metrics.status, metrics.code]).toEqual([403, 'FORBIDDEN']);
  const evaluated = await send('POST', '/access/v1/evaluation', 'admin', { subject: { type: 'user', id: 'victor' }, action: { name: 'GET' }, resource: { type: 'http', id: '/metrics' } });
  expect(evaluated.body.decision).toBe(false);
  expect(server.log()).not.toMatch(/Unhandled error in route/);
});
