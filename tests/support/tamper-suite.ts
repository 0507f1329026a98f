/**
 * The tamper suite of issue 23 ("evidence that holds against whoever holds the database file"), shared by
 * tests/tamper.test.ts (SQLite) and tests/pg-tamper.test.ts (PostgreSQL).
 *
 * One real database is built through the application (denials recorded by the recorder and the engine, approvals,
 * security events, checkpoints signed by the real signer and delivered to a witness folder, an archive made by
 * `swarm audit archive`). Each test edits a COPY of it (the database, the key folder, the witness folder) as an insider
 * with the file or the superuser role would: the append-only triggers out of the way, SQL edits, hashes recomputed with
 * the product's own rowHash (lib/audit/trail/chain.ts), checkpoints re-signed with signCheckpoint. Then it asserts that
 * `swarm audit verify` (the CLI's own entry, run in process) exits 1 naming the table, the first bad row (or record) and
 * the problem, and that GET /api/v1/audit/verify answers ok: false. One test per attack class of the issue.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '@/db/pg/client';
import { openApp, type App } from '@/lib/app';
import { CHAIN_COLUMNS, rowHash, type ChainName } from '@/lib/audit/trail/chain';
import { archiveExtension, loadOrCreateSigningKey, openCheckpoint, originOf, parseVerifierKey, parseVerifierKeys, signCheckpoint, verifierKey, type SigningKey } from '@/lib/audit/trail/checkpoints';
import type { DenialInput } from '@/lib/audit/trail/recorder';
import { keyFolderRecord, latestInWitnessDir, readWitnessUrl, signedHeadsFile } from '@/lib/audit/trail/witness';
import { witnessServer } from '@/lib/audit/trail/witness-server';
import { toResponse, type ApiRequest } from '@/lib/http/route';
import { routeDefinition } from '@/lib/http/route-table';
import { buildReport } from '@/lib/reports/generate';
import type { CheckInput } from '@/lib/permissions';
import { runSwarm, type CliResult } from '@/lib/test-support/cli';
import { TEST_AGENTS } from '@/lib/test-support/temp-app';
import { within } from '@/lib/test-support/wait';

/** A connection as an insider has it: statements with `?` placeholders, the append-only triggers not in the way. */
export interface RawDb {
  all<T>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  run(sql: string, params?: readonly unknown[]): Promise<void>;
}

/** What differs between the two databases: where a database is, how it is copied, and how an insider opens it. */
export interface TamperTarget {
  name: 'SQLite' | 'PostgreSQL';
  /** a new database for the workspace folder `ws` (SQLite: a file in its db/ folder; PostgreSQL: a migrated database) */
  create(ws: string): Promise<string>;
  /** a copy of the database `db` for the workspace folder `ws` (a file copy; CREATE DATABASE … TEMPLATE) */
  copy(db: string, ws: string): Promise<string>;
  /** put the older copy `backup` back in place of `db`: a restore from a backup */
  restore(backup: string, db: string): Promise<void>;
  /** `fn` on a raw connection to `db` whose append-only triggers do not fire (dropped; session_replication_role) */
  raw<T>(db: string, fn: (raw: RawDb) => Promise<T>): Promise<T>;
}

/** A copy of the installation: the database, the key folder (apart from it), the witness folder, the configuration. */
interface Workspace {
  dir: string;
  db: string;
  keys: string;
  witness: string;
  config: string;
  /** the pinned verifier keys (SWARM_AUDIT_PUBLIC_KEYS) */
  pinned: string;
}

const DAY = 86_400;
const at = (iso: string) => Date.parse(iso) / 1000;
/** Day A: archived by the fixture. Day B: the oldest live rows. Day D: the 200 denials the report test counts. */
const DAY_A = at('2025-01-06T09:00:00Z');
const DAY_B = at('2025-02-20T09:00:00Z');
const DAY_D = at('2025-03-10T00:00:00Z');
const ARCHIVE_BEFORE = '2025-02-01';
/** The denial rows the fixture archives (day A), and where the live chain starts. */
const ARCHIVED = 20;
/** The row the rewrites change: on day D, between the checkpoints at rows 125 and 225. */
const REWRITTEN = 200;

const deployer = { kind: 'agent', id: 'deployer', role: 'viewer', agent: 'deployer' } as const;
const call = (tool: string, args: Record<string, unknown>): CheckInput => ({ kind: 'tool', principal: deployer, agent: 'deployer', tool, arguments: args });

export function tamperSuite(target: TamperTarget): void {
  let fixture: Workspace;
  let key: SigningKey;
  let auditorToken = '';
  /** a denial made through the engine: deployer calling export_raw_data, denied by agent_allowlist */
  let deniedDecisionId = '';
  /** the newest row of each chain in the fixture */
  let head: Record<ChainName, number>;
  const cleanups: (() => Promise<void> | void)[] = [];

  const envOf = (ws: Workspace, over: Record<string, string> = {}): Record<string, string> => ({
    SWARM_DB: ws.db,
    SWARM_CONFIG_DIR: ws.config,
    SWARM_AUDIT_KEY_DIR: ws.keys,
    SWARM_AUDIT_PUBLIC_KEYS: ws.pinned,
    SWARM_AUDIT_WITNESSES: ws.witness,
    SWARM_PROFILE: '',
    ...over,
  });

  /** The environment of a CLI run: the workspace's, and nothing of the machine's SWARM_ settings. */
  const cliEnv = (ws: Workspace, over: Record<string, string> = {}): NodeJS.ProcessEnv => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const k of Object.keys(env)) if (k.startsWith('SWARM_') || k.startsWith('ML_TEAM_')) delete env[k];
    return { ...env, SWARM_LOG_LEVEL: 'error', ...envOf(ws, over) };
  };

  const open = (ws: Workspace, options: { server?: boolean; env?: Record<string, string> } = {}) =>
    openApp({ dbPath: ws.db, configDir: ws.config, env: envOf(ws, options.env), server: options.server });

  /** A copy of the fixture's installation: the database, its key folder and witness folder, its configuration. */
  async function copyOf(from: Workspace = fixture): Promise<Workspace> {
    const dir = mkdtempSync(join(tmpdir(), `swarm-tamper-copy-`));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    for (const part of ['keys', 'witness', 'config'] as const) cpSync(from[part], join(dir, part), { recursive: true });
    copyFileSync(from.pinned, join(dir, 'trusted-keys.txt'));
    const db = await target.copy(from.db, dir);
    // The copy stands for the same installation's database: the key folder's record of what was signed for the
    // original is the record for the copy (a server's SWARM_DB does not change when an insider edits its file).
    for (const record of ['audit-signed-heads', 'credentials-sealed']) {
      const kept = keyFolderRecord(from.keys, record, from.db);
      if (existsSync(kept)) renameSync(join(dir, 'keys', basename(kept)), keyFolderRecord(join(dir, 'keys'), record, db));
    }
    return { dir, db, keys: join(dir, 'keys'), witness: join(dir, 'witness'), config: join(dir, 'config'), pinned: join(dir, 'trusted-keys.txt') };
  }

  /** Another team's witness server: its own key, the installation's pinned key as the one it trusts; stopped at the end. */
  async function startWitness(): Promise<{ dir: string; key: SigningKey; url: string }> {
    const dir = mkdtempSync(join(tmpdir(), 'swarm-tamper-witness-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const key = loadOrCreateSigningKey(join(dir, 'key'), 'swarm-witness');
    const server: Server = witnessServer({ key, trusted: parseVerifierKeys(readFileSync(fixture.pinned, 'utf8')), logDir: join(dir, 'log') });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    return { dir, key, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  }

  /** A copy edited as `tamper` does it. */
  async function tampered(tamper: (raw: RawDb, ws: Workspace) => Promise<void>): Promise<Workspace> {
    const ws = await copyOf();
    await target.raw(ws.db, (raw) => tamper(raw, ws));
    return ws;
  }

  const verifyCli = (ws: Workspace, ...args: string[]): Promise<CliResult> => runSwarm(['audit', 'verify', '--db', ws.db, ...args], cliEnv(ws));

  /** GET /api/v1/audit/verify, answered by the route's own core on an application opened on the copy. */
  async function verifyApi(ws: Workspace, env: Record<string, string> = {}): Promise<{ status: number; body: { ok: boolean; failures: { table: string; id: number; problem: string }[] } }> {
    const app = await open(ws, { env });
    try {
      const url = new URL('http://localhost/api/v1/audit/verify');
      const request = new Request(url, { headers: { authorization: `Bearer ${auditorToken}` } });
      const api: ApiRequest = { method: 'GET', path: url.pathname, url, header: (n) => request.headers.get(n), clientAddress: '127.0.0.1', text: async () => '', toRequest: () => request };
      const res = toResponse(await routeDefinition('/api/v1/audit/verify', 'GET').core(app, api, {}));
      return { status: res.status, body: (await res.json()) as { ok: boolean; failures: { table: string; id: number; problem: string }[] } };
    } finally {
      await app.close();
    }
  }

  /** The CLI exited 1 with this FAILED line (table, row or checkpoint, problem) and the API answered ok: false with it. */
  function expectCaught(cli: CliResult, api: Awaited<ReturnType<typeof verifyApi>> | undefined, table: string, id: number, problem: string, message?: RegExp): void {
    const where = table === 'audit_checkpoints' ? 'checkpoint' : 'row';
    const line = cli.stdout.split('\n').find((l) => l.startsWith(`FAILED ${table} `));
    expect({ code: cli.code, line }).toMatchObject({ code: 1, line: expect.stringMatching(new RegExp(`^FAILED ${table} at ${where} ${id}: ${problem}: `)) });
    if (message) expect(line).toMatch(message);
    expect(cli.stdout).not.toContain('Intact');
    if (api) {
      expect(api.status).toBe(200);
      expect(api.body.ok).toBe(false);
      expect(api.body.failures).toContainEqual(expect.objectContaining({ table, id, problem }));
    }
  }

  const headOf = async (raw: RawDb, chain: ChainName) => (await raw.all<{ id: number }>(`SELECT max(id) AS id FROM ${chain}`))[0]!.id;
  const rowHashAt = async (raw: RawDb, chain: ChainName, id: number) => (await raw.all<{ h: string }>(`SELECT row_hash AS h FROM ${chain} WHERE id = ?`, [id]))[0]?.h;

  /**
   * Change the reason of one denial (or what `set` and `where` say, from row `id` on) and recompute every hash from it to the head with the product's own rowHash, as an attacker who read
   * lib/audit/trail/chain.ts would: the chain is whole again, only a checkpoint or a witness can tell.
   */
  async function rewrite(raw: RawDb, id: number, reason: string, set = 'reason = ?', where = 'id = ?'): Promise<void> {
    const chain = 'permission_denials';
    await raw.run(`UPDATE ${chain} SET ${set} WHERE ${where}`, [reason, id]);
    // The row before, or where the archive left the chain (its recorded head).
    const archived = async () => (await raw.all<{ h: string }>('SELECT head_hash AS h FROM audit_archives WHERE chain = ? AND up_to_id = ?', [chain, id - 1]))[0]?.h;
    let prev = (await rowHashAt(raw, chain, id - 1)) ?? (await archived())!;
    const columns = CHAIN_COLUMNS[chain];
    const rows = await raw.all<Record<string, unknown> & { id: number }>(`SELECT id, ${columns.join(', ')} FROM ${chain} WHERE id >= ? ORDER BY id`, [id]);
    for (const row of rows) {
      const hash = rowHash(prev, Number(row.id), columns.map((c) => row[c] ?? null));
      await raw.run(`UPDATE ${chain} SET prev_hash = ?, row_hash = ? WHERE id = ?`, [prev, hash, row.id]);
      prev = hash;
    }
  }

  /** Sign every checkpoint (of `chain`, or of both) again with `signer` over the heads the rows have now. */
  async function resign(raw: RawDb, signer: SigningKey, chain?: ChainName): Promise<void> {
    const checkpoints = await raw.all<{ id: number; chain: ChainName; size: number; note: string }>('SELECT id, chain, size, note FROM audit_checkpoints ORDER BY id');
    for (const c of checkpoints) {
      if (chain && c.chain !== chain) continue;
      const hash = await rowHashAt(raw, c.chain, Number(c.size));
      if (!hash) continue;
      const time = Number(/\ntime (\d+)\n/.exec(c.note)![1]);
      const note = signCheckpoint(signer, { origin: originOf(c.chain, signer.name), size: Number(c.size), headHash: hash, time });
      await raw.run('UPDATE audit_checkpoints SET head_hash = ?, note = ? WHERE id = ?', [hash, note, c.id]);
    }
  }

  /** Delete rows 1..upTo of a chain and record an archive of them that no archive command wrote; its id. */
  async function forgeArchive(raw: RawDb, chain: ChainName, upTo: number, head: string, note: string | null): Promise<number> {
    await raw.run(`DELETE FROM ${chain} WHERE id <= ?`, [upTo]);
    const [row] = await raw.all<{ id: number }>(
      'INSERT INTO audit_archives (chain, up_to_id, head_hash, rows, file, file_sha256, archived_at, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id',
      [chain, upTo, head, upTo, 'archive-that-never-was.ndjson', '0'.repeat(64), Date.now() / 1000, note],
    );
    return Number(row!.id);
  }

  /** Append a security event to the chained trail as the recorder would (the next id, the head's hash before it). */
  async function appendEvent(raw: RawDb, e: { type: string; actor: string; outcome: string; target: string; detail_json: string }): Promise<void> {
    const chain = 'security_events';
    const [last] = await raw.all<{ id: number; h: string }>(`SELECT id, row_hash AS h FROM ${chain} ORDER BY id DESC LIMIT 1`);
    const row: Record<string, unknown> = { decision_id: null, actor_role: 'admin', policy_revision: null, ip: null, timestamp: Date.now() / 1000, ...e };
    const columns = CHAIN_COLUMNS[chain];
    const id = Number(last!.id) + 1;
    const values = columns.map((c) => row[c] ?? null);
    await raw.run(`INSERT INTO ${chain} (id, ${columns.join(', ')}, prev_hash, row_hash) VALUES (${Array(columns.length + 3).fill('?').join(', ')})`, [id, ...values, last!.h, rowHash(last!.h, id, values)]);
  }

  const appendDenialAt = async (app: App, d: DenialInput) => {
    const side = app.side;
    if (side.kind === 'sqlite') side.recorder.appendDenial(d);
    else await inTransaction(side.pool, (tx) => side.recorder.appendDenialIn(tx, d));
  };

  const checkpointSizes = async (raw: RawDb, chain: ChainName) =>
    (await raw.all<{ size: number }>('SELECT size FROM audit_checkpoints WHERE chain = ? ORDER BY id', [chain])).map((r) => Number(r.size));
  const eventsOfType = async (app: App, type: string) => (await app.securityEvents.ofType(type, 50)).map((e) => ({ target: e.target, detail: JSON.parse(e.detailJson ?? '{}') as Record<string, unknown> }));

  describe(`tamper evidence against whoever holds the database (${target.name})`, () => {
    beforeAll(async () => {
      const dir = mkdtempSync(join(tmpdir(), `swarm-tamper-${target.name.toLowerCase()}-`));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const ws: Workspace = { dir, db: '', keys: join(dir, 'keys'), witness: join(dir, 'witness'), config: join(dir, 'config'), pinned: join(dir, 'trusted-keys.txt') };
      mkdirSync(ws.config);
      writeFileSync(join(ws.config, 'agents.yaml'), TEST_AGENTS);
      writeFileSync(join(ws.config, 'permission_policies.yaml'), 'rules: []\n');
      key = loadOrCreateSigningKey(ws.keys);
      // The installation's key pinned in configuration, as an operator keeps it (where the database's users cannot write).
      writeFileSync(ws.pinned, `${verifierKey(key.name, key.raw)}\n`);
      ws.db = await target.create(dir);
      fixture = ws;

      const app = await open(ws);
      try {
        // A server's start: among other things, the key folder's record that this installation's credentials are sealed.
        await app.bootstrap();
        await app.auth.createUser('alex', 'auditor', 'auditor-password-1');
        auditorToken = await app.auth.createToken({ username: 'alex' }, 'tamper suite');
        // Older denials, through the application's recorder and chain: day A (archived below), day B, then day D's 200
        // in two halves, each signed by the application's signer (checkpoints of rows 25, 125 and 225).
        for (let i = 0; i < ARCHIVED; i++) await appendDenialAt(app, { toolName: 'export_raw_data', agentName: 'data_cleaner', ruleSource: 'agent_allowlist', reason: `day A ${i}`, timestamp: DAY_A + i * 60 });
        for (let i = 0; i < 5; i++) await appendDenialAt(app, { toolName: 'export_raw_data', agentName: 'data_cleaner', ruleSource: 'agent_allowlist', reason: `day B ${i}`, timestamp: DAY_B + i * 60 });
        await app.checkpointAudit();
        for (let half = 0; half < 2; half++) {
          for (let i = 0; i < 100; i++) {
            const n = half * 100 + i;
            await appendDenialAt(app, {
              toolName: n % 3 === 0 ? 'deploy_serving' : 'export_raw_data',
              agentName: n % 2 === 0 ? 'data_cleaner' : 'evaluator',
              ruleSource: n % 5 === 0 ? 'flag:auto_deploy' : 'agent_allowlist',
              reason: `day D ${n}`,
              userRole: 'viewer',
              timestamp: DAY_D + 300 + n * 60,
            });
          }
          await app.checkpointAudit();
        }
        // Today, through the engine: denials, approvals asked, granted and used, or rejected (a denial of the gate).
        for (let round = 0; round < 4; round++) {
          for (let i = 0; i < 30; i++) {
            const r = await app.engine.decideAsync(call('export_raw_data', { dataset_id: `ds-${round}-${i}`, owner: `person${i}@bank.example` }));
            expect(r.decision).toBe('DENY');
            deniedDecisionId ||= r.decisionId!;
          }
          expect((await app.engine.decideAsync(call('monitor_drift', { model_id: `m-${round}` }))).decision).toBe('ALLOW');
          const deploy = call('deploy_serving', { model_id: `m-${round}`, env: 'prod' });
          const asked = await app.engine.decideAsync(deploy);
          expect(asked.decision).toBe('ASK');
          const operator = { id: 'olivia', role: 'operator' } as const;
          if (round % 2 === 0) {
            await app.approvals.approve(asked.approvalId!, operator, 'change ticket CHG-1');
            expect((await app.engine.decideAsync(deploy)).decision).toBe('ALLOW');
          } else {
            await app.approvals.reject(asked.approvalId!, operator, 'not in the window');
          }
          await app.checkpointAudit();
        }
      } finally {
        await app.close();
      }
      // The real archive command: day A's rows leave the live trail into a signed bundle, with a chained retention.archived.
      const archived = await runSwarm(['audit', 'archive', '--before', ARCHIVE_BEFORE, '-o', join(dir, 'archive.ndjson'), '--db', ws.db], cliEnv(ws));
      expect(archived.stderr).toBe('');
      expect(archived.stdout).toContain(`permission_denials: ${ARCHIVED} rows 1–${ARCHIVED} archived`);
      head = await target.raw(ws.db, async (raw) => ({ permission_denials: await headOf(raw, 'permission_denials'), security_events: await headOf(raw, 'security_events') }));
    }, 240_000);

    afterAll(async () => {
      for (const c of cleanups.splice(0).reverse()) await c();
    });

    it('verifies an untouched copy: the trail every attack below starts from', async () => {
      const ws = await copyOf();
      const [cli, api] = await Promise.all([verifyCli(ws), verifyApi(ws)]);
      expect(cli.stderr).toBe('');
      expect(cli.code).toBe(0);
      expect(cli.stdout).toMatch(new RegExp(`^permission_denials: ${head.permission_denials - ARCHIVED} rows checked .*rows up to ${ARCHIVED} archived`, 'm'));
      expect(cli.stdout).toContain('Intact: every row matches its hash chain and every checkpoint.');
      expect(api.body.ok).toBe(true);
      expect(head.permission_denials).toBeGreaterThan(340);
      // Every checkpoint signed, by the application and by the archive command alike, reached the witness folder.
      const signed = await target.raw(ws.db, (raw) => raw.all<{ chain: ChainName; size: number }>('SELECT chain, max(size) AS size FROM audit_checkpoints GROUP BY chain ORDER BY chain'));
      const witnessed = latestInWitnessDir(ws.witness);
      expect(signed.map((c) => ({ chain: c.chain, size: Number(c.size) }))).toEqual(signed.map((c) => ({ chain: c.chain, size: witnessed.get(c.chain)?.size })));
    });

    it('1. a forged archive record: unsigned, an ordinary checkpoint passed off as one, or signed but not in the trail', async () => {
      // Rows 21–250 of the denials and the older half of the events deleted, each chain "archived" up to there with
      // the head the next row needs (its prev_hash), so that what remains chains on: no signed checkpoint vouches for it.
      let forged = 0;
      const invented = await tampered(async (raw) => {
        for (const [chain, upTo] of [['permission_denials', 250], ['security_events', Math.floor(head.security_events / 2)]] as const) {
          const next = (await raw.all<{ prev: string }>(`SELECT prev_hash AS prev FROM ${chain} WHERE id = ?`, [upTo + 1]))[0]!.prev;
          const id = await forgeArchive(raw, chain, upTo, next, null);
          if (chain === 'permission_denials') forged = id;
        }
      });
      // Every row of both chains deleted, the archive records naming the last heads.
      let all = 0;
      const everything = await tampered(async (raw) => {
        for (const chain of ['permission_denials', 'security_events'] as const) {
          const id = await forgeArchive(raw, chain, head[chain], (await rowHashAt(raw, chain, head[chain]))!, null);
          if (chain === 'permission_denials') all = id;
        }
      });
      // A genuine checkpoint of row 225 copied from audit_checkpoints as the record's signed note.
      let ordinary = 0;
      const copiedNote = await tampered(async (raw) => {
        const [c] = await raw.all<{ note: string; head: string }>("SELECT note, head_hash AS head FROM audit_checkpoints WHERE chain = 'permission_denials' AND size = 225");
        ordinary = await forgeArchive(raw, 'permission_denials', 225, c!.head, c!.note);
      });
      // Whoever holds the key signs an archive checkpoint of row 225: the record verifies, but no archive command ran,
      // so no retention.archived event in the chained trail names it.
      let unrecorded = 0;
      const signedOnly = await tampered(async (raw) => {
        const h = (await rowHashAt(raw, 'permission_denials', 225))!;
        const note = signCheckpoint(key, { origin: originOf('permission_denials', key.name), size: 225, headHash: h, time: Date.now() / 1000, extensions: [archiveExtension(at('2025-03-11'))] });
        unrecorded = await forgeArchive(raw, 'permission_denials', 225, h, note);
      });
      const [c1, a1, a2, c3, a3, c4, a4] = await Promise.all([
        verifyCli(invented),
        verifyApi(invented),
        verifyApi(everything),
        verifyCli(copiedNote),
        verifyApi(copiedNote),
        verifyCli(signedOnly),
        verifyApi(signedOnly),
      ]);
      expectCaught(c1, a1, 'audit_archives', forged, 'archive not signed', new RegExp(`archive record ${forged} \\(permission_denials up to row 250\\): it carries no signed checkpoint`));
      expect(a2.body).toMatchObject({ ok: false, failures: expect.arrayContaining([expect.objectContaining({ table: 'audit_archives', id: all, problem: 'archive not signed' })]) });
      expectCaught(c3, a3, 'audit_archives', ordinary, 'archive not signed', /its checkpoint is an ordinary one, not the checkpoint an archive signs/);
      expectCaught(c4, a4, 'audit_archives', unrecorded, 'archive not recorded in the trail', /has no retention\.archived event in the chained trail/);
    }, 180_000);

    it('2. checkpoints deleted: every one (with row 200 rewritten) is a trail under no checkpoint, one from the middle is missing; a server refuses to sign the rewrite', async () => {
      const rewritten = await tampered(async (raw) => {
        await rewrite(raw, REWRITTEN, 'nothing to see here');
        await raw.run('DELETE FROM audit_checkpoints');
      });
      let middle = 0;
      const gap = await tampered(async (raw) => {
        const ids = (await raw.all<{ id: number }>('SELECT id FROM audit_checkpoints ORDER BY id')).map((r) => Number(r.id));
        middle = ids[Math.floor(ids.length / 2)]!;
        await raw.run('DELETE FROM audit_checkpoints WHERE id = ?', [middle]);
      });
      // The same, and the row where the checkpoints' coverage ends dated in the future, so that it looks just written.
      const future = Date.now() / 1000 + 10 * 365 * DAY;
      const firstFuture = await tampered(async (raw) => {
        await rewrite(raw, REWRITTEN, 'nothing to see here');
        await rewrite(raw, ARCHIVED + 1, String(future), 'timestamp = ?');
        await raw.run('DELETE FROM audit_checkpoints');
      });
      // Every row after the newest checkpoint kept (row 125) dated in the future, the newer checkpoints deleted (no gap).
      const allFuture = await tampered(async (raw) => {
        await rewrite(raw, REWRITTEN, 'nothing to see here');
        await rewrite(raw, 126, String(future), 'timestamp = ?', 'id >= ?');
        await raw.run("DELETE FROM audit_checkpoints WHERE id > (SELECT id FROM audit_checkpoints WHERE chain = 'permission_denials' AND size = 125)");
      });
      // Item 10: the same with every row after it dated 30 s ahead, inside the 60 s allowed for clocks that differ: the
      // key folder remembers signing past row 125, so the removed checkpoints are found at once, whatever the dates.
      const nearFuture = await tampered(async (raw) => {
        await rewrite(raw, REWRITTEN, 'nothing to see here');
        await rewrite(raw, 126, String(Date.now() / 1000 + 30), 'timestamp = ?', 'id >= ?');
        await raw.run("DELETE FROM audit_checkpoints WHERE id > (SELECT id FROM audit_checkpoints WHERE chain = 'permission_denials' AND size = 125)");
      });
      const [c5, a5, bare5] = await Promise.all([
        verifyCli(nearFuture),
        verifyApi(nearFuture),
        runSwarm(['audit', 'verify', '--db', nearFuture.db, '--public-key', nearFuture.pinned], cliEnv(nearFuture, { SWARM_AUDIT_KEY_DIR: '' })),
      ]);
      expectCaught(c5, a5, 'permission_denials', 126, 'not covered by a checkpoint', new RegExp(`but this installation's key signed the chain up to row ${head.permission_denials} \\(its key folder remembers it\\): checkpoints were removed`));
      // The known limit: a copy checked with the public key alone, away from the key folder and the witnesses, cannot
      // tell rows dated a little ahead from rows just written, until they are older than the signing interval allows.
      expect(bare5.stdout).toContain('Intact');

      const [c1, a1, c2, a2, a3, a4] = await Promise.all([verifyCli(rewritten), verifyApi(rewritten), verifyCli(gap), verifyApi(gap), verifyApi(firstFuture), verifyApi(allFuture)]);
      expect(a3.body.failures).toContainEqual(expect.objectContaining({ table: 'permission_denials', id: ARCHIVED + 1, problem: 'not covered by a checkpoint' }));
      expect(a4.body.failures).toContainEqual(expect.objectContaining({ table: 'permission_denials', id: 126, problem: 'not covered by a checkpoint' }));
      // The first live row is under no signed checkpoint (the archive still vouches for rows 1–20), and it is a year old.
      expectCaught(c1, a1, 'permission_denials', ARCHIVED + 1, 'not covered by a checkpoint', new RegExp(`rows ${ARCHIVED + 1}–${head.permission_denials} are under no signed checkpoint`));
      expectCaught(c2, a2, 'audit_checkpoints', middle, 'checkpoint missing', new RegExp(`checkpoint ${middle} is missing \\(the next one found is ${middle + 1}\\)`));

      // A server started on the rewritten file, with the installation's key folder: it refuses the rewritten head (the
      // key folder remembers the head it signed last) and records why; the events chain, intact, is still signed.
      const server = await open(rewritten, { server: true });
      try {
        await server.checkpointAudit();
        // Recorded as the refusal happens (on PostgreSQL without holding up the signer): waited for.
        await within(10_000, async () => (await eventsOfType(server, 'audit.checkpoint_refused')).length > 0);
        const refused = await eventsOfType(server, 'audit.checkpoint_refused');
        expect(refused).toContainEqual(
          expect.objectContaining({
            target: 'permission_denials',
            detail: expect.objectContaining({ problem: `row ${head.permission_denials} no longer has the hash signed last: the trail was rewritten at or before it` }),
          }),
        );
      } finally {
        await server.close();
      }
      expect(await target.raw(rewritten.db, (raw) => checkpointSizes(raw, 'permission_denials'))).toEqual([]);

      // The same server work on an intact copy signs a new head as usual, and refuses nothing.
      const intact = await copyOf();
      const normal = await open(intact, { server: true });
      try {
        expect((await normal.engine.decideAsync(call('export_raw_data', { dataset_id: 'after' }))).decision).toBe('DENY');
        await normal.checkpointAudit();
        expect(await eventsOfType(normal, 'audit.checkpoint_refused')).toEqual([]);
      } finally {
        await normal.close();
      }
      expect((await target.raw(intact.db, (raw) => checkpointSizes(raw, 'permission_denials'))).at(-1)).toBe(head.permission_denials + 1);
    }, 180_000);

    it('2. the trail erased as from before the chain began: every hash of a chain removed and its checkpoints deleted is found by verify, and a server refuses to sign it', async () => {
      const ws = await tampered(async (raw) => {
        await raw.run('UPDATE security_events SET prev_hash = NULL, row_hash = NULL');
        await raw.run("DELETE FROM audit_checkpoints WHERE chain = 'security_events'");
      });
      const [cli, api] = await Promise.all([verifyCli(ws), verifyApi(ws)]);
      expect(cli.code, cli.stdout).toBe(1);
      expect(cli.stdout).not.toContain('Intact');
      expect(cli.stdout).toMatch(/^FAILED security_events at row \d+: unchained: row \d+ has no hash, but this installation signed the chain up to row \d+: its hashes were removed$/m);
      expect(api.body.ok).toBe(false);
      expect(api.body.failures).toContainEqual(expect.objectContaining({ table: 'security_events', problem: 'unchained' }));
      // The audit report says its integrity failed.
      const reader = await open(ws);
      try {
        const { data } = await buildReport(reader, { period: { from: DAY_D, to: DAY_D + DAY }, format: 'oscal', generatedBy: { actor: 'tamper suite', role: null } });
        expect(data.integrity.ok).toBe(false);
      } finally {
        await reader.close();
      }
      // A server on the file, with the installation's key folder, signs nothing over it and says so.
      const server = await open(ws, { server: true });
      try {
        await server.checkpointAudit();
        await within(10_000, async () => (await eventsOfType(server, 'audit.checkpoint_refused')).some((e) => e.target === 'security_events'));
      } finally {
        await server.close();
      }
    }, 180_000);

    it("3. a dropped-in key: checkpoints re-signed by a stranger's key, whose .pub files sit in the key folder, are not trusted", async () => {
      const strangerDir = mkdtempSync(join(tmpdir(), 'swarm-tamper-stranger-'));
      cleanups.push(() => rmSync(strangerDir, { recursive: true, force: true }));
      // A key of the same name, made by whoever edits the trail.
      const stranger = loadOrCreateSigningKey(strangerDir);
      const ws = await tampered(async (raw) => {
        await rewrite(raw, REWRITTEN, 'nothing to see here');
        await resign(raw, stranger);
        for (const a of await raw.all<{ id: number; chain: ChainName; upTo: number; head: string }>('SELECT id, chain, up_to_id AS "upTo", head_hash AS head FROM audit_archives')) {
          const note = signCheckpoint(stranger, { origin: originOf(a.chain, stranger.name), size: Number(a.upTo), headHash: a.head, time: Date.now() / 1000, extensions: [archiveExtension(at(ARCHIVE_BEFORE))] });
          await raw.run('UPDATE audit_archives SET note = ? WHERE id = ?', [note, a.id]);
        }
      });
      // The stranger's public key dropped into the key folder, as a rotated key would be named, and as its main .pub.
      const strangerKey = `${verifierKey(stranger.name, stranger.raw)}\n`;
      writeFileSync(join(ws.keys, 'audit-signing-key.2026-rotation.pub'), strangerKey);
      writeFileSync(join(ws.keys, 'audit-signing-key.pub'), strangerKey);
      const [cli, api] = await Promise.all([verifyCli(ws), verifyApi(ws)]);
      const genuine = parseVerifierKey(readFileSync(fixture.pinned, 'utf8').trim());
      expectCaught(cli, api, 'audit_checkpoints', 1, 'checkpoint key unknown', new RegExp(`no signature by swarm-permissions\\+${genuine.id.toString('hex')}`));
      expect(cli.stdout).toMatch(/^FAILED audit_archives at row 1: archive not signed: .*checkpoint key unknown/m);
    }, 180_000);

    it('4. edited rollups, revisions and storage classes: the report counts from the rows and fails its integrity; explain refuses the revision; a BLOB is a change', async () => {
      // Two statements: day D's daily counts say 3 denials, and the counts claim to cover every row.
      const day = Math.floor(DAY_D / DAY);
      const rollups = await tampered(async (raw) => {
        await raw.run('DELETE FROM permission_denial_daily_counts WHERE day = ?', [day]);
        await raw.run("INSERT INTO permission_denial_daily_counts (day, rule_source, agent_name, tool_name, user_role, n) VALUES (?, 'agent_allowlist', 'evaluator', 'export_raw_data', 'viewer', 3)", [day]);
        await raw.run('INSERT INTO permission_denial_rollup_state (id, high_water) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET high_water = excluded.high_water', [head.permission_denials]);
      });
      // The day's total kept, but all 200 given to data_cleaner: evaluator's 100 denials would vanish from the figures.
      const reattributed = await tampered(async (raw) => {
        await raw.run('DELETE FROM permission_denial_daily_counts WHERE day = ?', [day]);
        await raw.run("INSERT INTO permission_denial_daily_counts (day, rule_source, agent_name, tool_name, user_role, n) VALUES (?, 'agent_allowlist', 'data_cleaner', 'export_raw_data', 'viewer', 200)", [day]);
        await raw.run('INSERT INTO permission_denial_rollup_state (id, high_water) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET high_water = excluded.high_water', [head.permission_denials]);
      });
      // The kept revision of a recorded denial edited so that deployer was allowed export_raw_data after all.
      const revision = await tampered(async (raw) => {
        const [row] = await raw.all<{ rev: string }>('SELECT policy_revision AS rev FROM permission_denials WHERE decision_id = ?', [deniedDecisionId]);
        await raw.run("UPDATE policy_revisions SET content_json = replace(content_json, 'tools: [deploy_serving', 'tools: [export_raw_data, deploy_serving') WHERE revision = ?", [row!.rev]);
        const [edited] = await raw.all<{ n: number }>("SELECT count(*) AS n FROM policy_revisions WHERE revision = ? AND content_json LIKE '%tools: [export_raw_data, deploy_serving%'", [row!.rev]);
        expect(Number(edited!.n)).toBe(1);
      });
      const storage = await tampered(async (raw) => {
        if (target.name === 'SQLite') {
          // The same bytes, another storage class: a TEXT turned into a BLOB.
          await raw.run('UPDATE permission_denials SET reason = CAST(reason AS BLOB) WHERE id = 300');
        } else {
          // PostgreSQL keeps one type per column: the nearest edit is the column's type, every value's bytes unchanged.
          await raw.run("ALTER TABLE permission_denials ALTER COLUMN reason TYPE bytea USING convert_to(reason, 'UTF8')");
        }
      });
      const out = join(rollups.dir, 'report.oscal.json');
      const [report, explained, stored] = await Promise.all([
        runSwarm(['audit', 'report', '--from', '2025-03-10', '--to', '2025-03-11', '--format', 'oscal', '-o', out], cliEnv(rollups)),
        runSwarm(['audit', 'explain', deniedDecisionId, '--db', revision.db], cliEnv(revision)),
        verifyCli(storage),
      ]);
      // The figures are counted from the chained rows (200), and the report says its integrity failed.
      expect(report.stderr).toBe('');
      expect(report.code).toBe(1);
      expect(report.stdout).toMatch(/; 200 denials, .*integrity FAILED/);
      const oscal = readFileSync(out, 'utf8');
      expect(oscal).toContain(`permission_denial_daily_counts at ${day}: changed`);
      const reader = await open(reattributed);
      try {
        const { data } = await buildReport(reader, { period: { from: DAY_D, to: DAY_D + DAY }, format: 'oscal', generatedBy: { actor: 'tamper suite', role: null } });
        expect(data.integrity.ok).toBe(false);
        expect(data.integrity.failures).toContainEqual(expect.objectContaining({ table: 'permission_denial_daily_counts', id: day, problem: 'changed', message: expect.stringMatching(/^the daily counts of 2025-03-10 give 200 of its 200 denials to data_cleaner calling export_raw_data/) }));
        expect(data.denials.total).toBe(200);
        expect(data.denials.topAgents).toEqual(expect.arrayContaining([{ value: 'evaluator', count: 100 }, { value: 'data_cleaner', count: 100 }]));
      } finally {
        await reader.close();
      }
      expect(explained.code).toBe(1);
      expect(explained.stdout).toMatch(/^Policy revision: rev_[0-9a-f]{32} \(CHANGED in the database: its content no longer hashes to its id\)$/m);
      expect(explained.stdout).not.toContain('Re-run then:');
      expect(explained.stdout).toContain('it was changed in the database after it was recorded, so the decision is not replayed under it');
      expectCaught(stored, undefined, 'permission_denials', target.name === 'SQLite' ? 300 : ARCHIVED + 1, 'changed');
    }, 180_000);

    it('5. rollback to an older backup and a rewrite behind a witnessed checkpoint: found with a witness, and (the known limit) not without one', async () => {
      // The installation delivers every checkpoint to its witness folder (SWARM_AUDIT_WITNESSES). A backup is taken,
      // more is written and signed, and the backup is restored.
      const rolled = await copyOf();
      const backupDir = mkdtempSync(join(tmpdir(), 'swarm-tamper-backup-'));
      cleanups.push(() => rmSync(backupDir, { recursive: true, force: true }));
      const backup = await target.copy(rolled.db, backupDir);
      const app = await open(rolled);
      try {
        for (let i = 0; i < 10; i++) await app.engine.decideAsync(call('export_raw_data', { dataset_id: `later-${i}` }));
        await app.checkpointAudit();
      } finally {
        await app.close();
      }
      await target.restore(backup, rolled.db);

      // Whoever holds the key rewrites row 200 and signs the checkpoints again over the new heads: the database alone
      // is consistent; the witness folder still holds the heads signed before.
      const resigned = await tampered(async (raw) => {
        await rewrite(raw, REWRITTEN, 'nothing to see here');
        await resign(raw, key, 'permission_denials');
      });
      const [withWitness, withoutWitness, api, rewrittenWitnessed, rewrittenApi, rewrittenAlone] = await Promise.all([
        verifyCli(rolled, '--witness', rolled.witness),
        verifyCli(rolled),
        // The server's own verification checks the witness folders it delivers to (SWARM_AUDIT_WITNESSES).
        verifyApi(rolled),
        verifyCli(resigned, '--witness', resigned.witness),
        verifyApi(resigned),
        verifyApi(resigned, { SWARM_AUDIT_WITNESSES: '' }),
      ]);
      const L = head.permission_denials;
      // The witness line says what the FAILED line says, never that the trail extends them all.
      expect(withWitness.stdout).toMatch(/^  witnessed: \d+ checkpoints? checked, the newest at row \d+: the trail is not shown to extend 1 of them \(below\)$/m);
      expect(withWitness.stdout).not.toContain('the trail extends every one');
      expectCaught(withWitness, api, 'permission_denials', L + 1, 'rolled back behind a witnessed checkpoint', new RegExp(`a witness holds a checkpoint of row ${L + 10} signed at .*, but the table ends at row ${L}: rows were cut, or an older copy was restored`));
      // The known limit, and why witnesses exist: without one, a restored older copy is a consistent, signed trail.
      expect(withoutWitness.code).toBe(0);
      expect(withoutWitness.stdout).toContain('Intact');
      expectCaught(rewrittenWitnessed, rewrittenApi, 'permission_denials', 225, 'rewritten behind a witnessed checkpoint', /row 225 does not have the head witnessed at .*: the trail was rewritten after row 125 \(witnessed intact at .*\) and at or before row 225/);
      // Re-signed with the genuine key, the rewrite is a consistent trail to whoever has no witness.
      expect(rewrittenAlone.body).toMatchObject({ ok: true, failures: [] });
    }, 180_000);

    it('5. a witness server cosigns the extensions it checks, refuses a rewritten trail signed without the key folder, and verify --witness URL locates it', async () => {
      const { dir: witnessDir, key: witnessKey, url } = await startWitness();

      const ws = await copyOf();
      const L = head.permission_denials;
      const app = await open(ws, { env: { SWARM_AUDIT_WITNESSES: `${ws.witness},${url}` } });
      try {
        for (const batch of [0, 1]) {
          for (let i = 0; i < 5; i++) await app.engine.decideAsync(call('export_raw_data', { dataset_id: `witnessed-${batch}-${i}` }));
          await app.checkpointAudit();
        }
        const signed = new Map((await app.auditCheckpoints()).map((c) => [c.chain, Number(c.note.split('\n')[1])]));
        // Delivered in the background: wait until the witness holds the newest checkpoint of each chain.
        await within(30_000, async () => {
          const held = await readWitnessUrl(url);
          return [...signed].every(([chain, size]) => held.some((c) => c.chain === chain && c.size === size));
        });
      } finally {
        await app.close();
      }
      const held = await readWitnessUrl(url);
      expect(held.filter((c) => c.chain === 'permission_denials').map((c) => c.size)).toEqual([L + 5, L + 10]);
      const witnessVerifier = parseVerifierKey(verifierKey(witnessKey.name, witnessKey.raw));
      const installation = parseVerifierKey(readFileSync(fixture.pinned, 'utf8').trim());
      for (const c of held) {
        expect(openCheckpoint(c.note, installation).ok).toBe(true);
        expect(openCheckpoint(c.note, witnessVerifier).ok).toBe(true);
      }

      // Rewritten behind the witnessed heads, every checkpoint deleted, and a signer started with the same private key
      // but without the key folder's memory (a fresh folder holding only the .pem) and without the witness folder.
      await target.raw(ws.db, async (raw) => {
        await rewrite(raw, REWRITTEN, 'nothing to see here');
        await raw.run('DELETE FROM audit_checkpoints');
      });
      const bareKeys = join(ws.dir, 'bare-keys');
      mkdirSync(bareKeys);
      copyFileSync(join(ws.keys, 'audit-signing-key.pem'), join(bareKeys, 'audit-signing-key.pem'));
      expect(readdirSync(ws.keys).some((f) => /^audit-signed-heads\.[0-9a-f]{16}\.json$/.test(f))).toBe(true);
      const attacker = await open(ws, { env: { SWARM_AUDIT_KEY_DIR: bareKeys, SWARM_AUDIT_WITNESSES: url } });
      try {
        await attacker.engine.decideAsync(call('export_raw_data', { dataset_id: 'after the rewrite' }));
        await attacker.checkpointAudit();
        // The signer signed (nothing it remembers says otherwise), the witness refused, and the refusal is in the trail.
        await within(30_000, async () => (await eventsOfType(attacker, 'audit.checkpoint_refused')).some((e) => e.target === 'permission_denials'));
        const refusal = (await eventsOfType(attacker, 'audit.checkpoint_refused')).find((e) => e.target === 'permission_denials')!;
        expect(String(refusal.detail.problem)).toMatch(new RegExp(`^the witness ${url} refused it: row ${L + 11} does not follow on from the head this witness cosigned at row ${L + 10}: the trail behind it was rewritten$`));
        // The events chain, not rewritten, still extends what the witness saw: it cosigns it.
        const events = (await attacker.auditCheckpoints()).find((c) => c.chain === 'security_events')!;
        const size = Number(events.note.split('\n')[1]);
        await within(30_000, async () => (await readWitnessUrl(url)).some((c) => c.chain === 'security_events' && c.size === size));
      } finally {
        await attacker.close();
      }
      expect(readFileSync(join(witnessDir, 'log', 'refused.ndjson'), 'utf8')).toContain('the trail behind it was rewritten');
      expect((await readWitnessUrl(url)).filter((c) => c.chain === 'permission_denials').map((c) => c.size)).toEqual([L + 5, L + 10]);

      const cli = await verifyCli(ws, '--witness', url);
      expectCaught(cli, undefined, 'permission_denials', L + 5, 'rewritten behind a witnessed checkpoint', new RegExp(`row ${L + 5} does not have the head witnessed at .*: the trail was rewritten at or before row ${L + 5}`));
    }, 180_000);

    it('8. a stolen key erases witnessed history through an archive: a signed, recorded archive record with an invented head past every witnessed checkpoint is found (folder and URL)', async () => {
      const { url } = await startWitness();
      const ws = await copyOf();
      // The installation also delivers to another team's witness server: it cosigns the rows appended from now on.
      const app = await open(ws, { env: { SWARM_AUDIT_WITNESSES: `${ws.witness},${url}` } });
      try {
        for (let i = 0; i < 5; i++) await app.engine.decideAsync(call('export_raw_data', { dataset_id: `before-the-archive-${i}` }));
        await app.checkpointAudit();
        const size = Number((await app.auditCheckpoints()).find((c) => c.chain === 'permission_denials')!.note.split('\n')[1]);
        await within(30_000, async () => (await readWitnessUrl(url)).some((c) => c.chain === 'permission_denials' && c.size === size));
      } finally {
        await app.close();
      }
      const witnessedUpTo = Math.max(...(await readWitnessUrl(url)).filter((c) => c.chain === 'permission_denials').map((c) => c.size));
      expect(latestInWitnessDir(ws.witness).get('permission_denials')!.size).toBe(witnessedUpTo);

      // With the signing key: every denial deleted under an archive record of rows up to 100 past the newest witnessed
      // one, its head invented, its archive checkpoint signed, and a retention.archived event naming it appended to the
      // chained events (as the archive command records one): each check made before now passes.
      const upTo = witnessedUpTo + 100;
      const invented = createHash('sha256').update('a head no witness ever saw').digest('hex');
      let forged = 0;
      await target.raw(ws.db, async (raw) => {
        const note = signCheckpoint(key, { origin: originOf('permission_denials', key.name), size: upTo, headHash: invented, time: Date.now() / 1000, extensions: [archiveExtension(Date.now() / 1000)] });
        forged = await forgeArchive(raw, 'permission_denials', upTo, invented, note);
        await appendEvent(raw, { type: 'retention.archived', actor: 'cli:root', outcome: 'succeeded', target: 'archive-that-never-was.ndjson', detail_json: JSON.stringify({ chains: [{ chain: 'permission_denials', upToId: upTo, headHash: invented }] }) });
      });
      const problem = 'archive not shown to extend a witnessed checkpoint';
      const message = new RegExp(
        `archive record ${forged} \\(permission_denials up to row ${upTo}\\) covers the checkpoint of row ${witnessedUpTo} witnessed at .*, but no witness holds a checkpoint at or after row ${upTo}, and no bundle was given`,
      );
      const [byFolder, byUrl, api] = await Promise.all([verifyCli(ws, '--witness', ws.witness), verifyCli(ws, '--witness', url), verifyApi(ws)]);
      expectCaught(byFolder, api, 'audit_archives', forged, problem, message);
      expectCaught(byUrl, undefined, 'audit_archives', forged, problem, message);
      expect(byUrl.stdout).toMatch(/^  witnessed: \d+ checkpoints? checked, the newest at row \d+: the trail is not shown to extend 1 of them \(below\)$/m);
      // The genuine bundle of the fixture's archive (rows 1–20) does not reach the invented head either.
      const withBundle = await verifyCli(ws, '--witness', url, '--archive', join(fixture.dir, 'archive.ndjson'));
      expectCaught(withBundle, undefined, 'audit_archives', forged, problem, new RegExp(`and the bundles given \\(.*archive\\.ndjson\\) do not hold rows ${witnessedUpTo + 1}–${upTo} of it`));
      // Without a witness, the forgery made with the key is a consistent trail (the known limit witnesses are for).
      expect((await verifyCli(ws, '--public-key', ws.pinned)).code).toBe(0);
    }, 180_000);

    it('10. a command delivers the checkpoint it signs on exit to a witness server, from a connection still open', async () => {
      const { url } = await startWitness();
      const ws = await copyOf();
      // `swarm audit verify` of the live trail records audit.verified, and the command signs a checkpoint over it. The
      // second time the witness holds the first one and asks for the rows since: they are read from the database.
      for (const run of [1, 2]) {
        const cli = await runSwarm(['audit', 'verify'], cliEnv(ws, { SWARM_AUDIT_WITNESSES: url }));
        expect(cli.stderr, `run ${run}`).not.toMatch(/not open|failed/i);
        const events = await target.raw(ws.db, async (raw) => headOf(raw, 'security_events'));
        expect((await readWitnessUrl(url)).filter((c) => c.chain === 'security_events').map((c) => c.size), `run ${run}`).toContain(events);
      }
    }, 180_000);

    it('4. a spent approval reopened: its consumption taken out of the trail and the row reset; the call asks again', async () => {
      // The fixture's round 0 was approved and run (consumed).
      const deploy = call('deploy_serving', { model_id: 'm-0', env: 'prod' });
      const reopen = (alsoCheckpoints: boolean) =>
        tampered(async (raw) => {
          const [row] = await raw.all<{ id: string }>("SELECT id FROM approvals WHERE tool_name = 'deploy_serving' AND arguments_canonical LIKE '%\"m-0\"%'");
          // The event goes; the ids after it stay as they are (renumbering them would change every hash after it).
          await raw.run("DELETE FROM security_events WHERE target = ? AND type = 'approval.consumed'", [row!.id]);
          await raw.run("UPDATE approvals SET status = 'approved' WHERE id = ?", [row!.id]);
          // And, to hide the gap, every checkpoint that covers it.
          if (alsoCheckpoints) await raw.run("DELETE FROM audit_checkpoints WHERE chain = 'security_events'");
        });
      for (const [ws, problem] of [
        [await reopen(false), /security events between \d+ and \d+ are missing from the trail/],
        [await reopen(true), /the key folder remembers signing row \d+ of security events: checkpoints were removed/],
      ] as const) {
        const app = await open(ws);
        try {
          expect((await app.engine.decideAsync(deploy)).decision).not.toBe('ALLOW');
          await within(5_000, async () => (await eventsOfType(app, 'approval.unverified')).some((e) => problem.test(String(e.detail.problem))));
        } finally {
          await app.close();
        }
      }
    }, 180_000);

    it.skipIf(target.name !== 'SQLite')('9. a key lying beside a database file given to verify --db is not trusted: a rewrite signed with it is found', async () => {
      const ws = await tampered(async (raw, w) => {
        await rewrite(raw, REWRITTEN, 'nothing to see here');
        // Whoever hands over the file puts a key of their own beside it and signs the rewritten trail with it (its
        // checkpoints and its archive records).
        const stranger = loadOrCreateSigningKey(dirname(w.db));
        await resign(raw, stranger);
        for (const a of await raw.all<{ id: number; chain: ChainName; upTo: number; head: string }>('SELECT id, chain, up_to_id AS "upTo", head_hash AS head FROM audit_archives')) {
          const note = signCheckpoint(stranger, { origin: originOf(a.chain, stranger.name), size: Number(a.upTo), headHash: a.head, time: Date.now() / 1000, extensions: [archiveExtension(at(ARCHIVE_BEFORE))] });
          await raw.run('UPDATE audit_archives SET note = ? WHERE id = ?', [note, a.id]);
        }
      });
      // Checked as a backup is checked, with neither a key folder nor pinned keys in the environment.
      const bare = cliEnv(ws, { SWARM_AUDIT_KEY_DIR: '', SWARM_AUDIT_PUBLIC_KEYS: '', SWARM_AUDIT_WITNESSES: '' });
      const alone = await runSwarm(['audit', 'verify', '--db', ws.db], bare);
      expect(alone.code, alone.stdout + alone.stderr).toBe(1);
      expect(alone.stdout).not.toContain('Intact');
      // With the installation's public key given, the checkpoints are not its: the rewrite is found.
      const given = await runSwarm(['audit', 'verify', '--db', ws.db, '--public-key', ws.pinned], bare);
      expect(given.code).toBe(1);
      expect(given.stdout).toMatch(/^FAILED audit_checkpoints at checkpoint 1: checkpoint key unknown/m);
    }, 180_000);

    it('6. credentials and flags written without the key: a token for a chosen secret, an inserted administrator, a raised role, a flag turned on by SQL; none is used, each is recorded, and a start seals none of them', async () => {
      const { hashPassword, sha256 } = await import('@/lib/auth/secrets');
      let alexId = 0;
      const ws = await tampered(async (raw) => {
        alexId = Number((await raw.all<{ id: number }>("SELECT id FROM users WHERE username = 'alex'"))[0]!.id);
        await raw.run('INSERT INTO api_tokens (token_hash, name, user_id, created_at, scopes) VALUES (?, ?, ?, ?, ?)', [sha256('swt_chosen-by-the-holder'), 'forged', alexId, 1, 'read']);
        await raw.run("INSERT INTO users (username, role, password_hash, created_at) VALUES ('mallory', 'admin', ?, 1)", [hashPassword('chosen-password-1')]);
        await raw.run("UPDATE users SET role = 'admin' WHERE username = 'alex'");
        // 7. A flag turned on by SQL: shell hooks run programs while it is on.
        await raw.run("INSERT INTO flag_overrides (name, value, set_by, set_at, reason) VALUES ('plugin_shell_hooks_enabled', ?, 'admin', 1, 'by hand')", [target.name === 'SQLite' ? 1 : true]);
      });
      const app = await open(ws);
      const me = async (token: string) => {
        const url = new URL('http://localhost/api/v1/auth/me');
        const request = new Request(url, { headers: { authorization: `Bearer ${token}` } });
        const api: ApiRequest = { method: 'GET', path: url.pathname, url, header: (n) => request.headers.get(n), clientAddress: '127.0.0.1', text: async () => '', toRequest: () => request };
        return toResponse(await routeDefinition('/api/v1/auth/me', 'GET').core(app, api, {})).status;
      };
      try {
        // A start of the server on the edited database: the installation's credentials were sealed before, so nothing is.
        await app.bootstrap();
        expect(await me('swt_chosen-by-the-holder')).toBe(401);
        // alex's own token stops working with his raised role; the inserted administrator cannot sign in.
        expect(await me(auditorToken)).toBe(401);
        expect(await app.auth.verifyLogin('mallory', 'chosen-password-1')).toBeUndefined();
        expect(await app.auth.findUser('alex')).toBeUndefined();
        // The flag keeps its default: an override is in force only with its seal.
        expect(app.flags.values().get('plugin_shell_hooks_enabled')).toBe(false);
      } finally {
        await app.close();
      }
      const recorded = await target.raw(ws.db, (raw) => raw.all<{ target: string }>("SELECT target FROM security_events WHERE type = 'auth.unverified' ORDER BY id"));
      expect(new Set(recorded.map((r) => r.target.split('#')[0]))).toEqual(new Set(['api_tokens', 'users', 'flag_overrides']));
      expect(recorded.map((r) => r.target)).toContain('flag_overrides#plugin_shell_hooks_enabled');
      expect(recorded.map((r) => r.target)).toContain(`users#${alexId}`);
    });
  });
}
