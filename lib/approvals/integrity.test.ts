/**
 * Approvals that hold against other principals and against whoever edits the database (issue 23), on SQLite and on
 * PostgreSQL alike: the real applications (stores, recorder, engine) on a real file and on the test run's throwaway
 * cluster.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApp, type App } from '@/lib/app';
import type { CheckResult, Principal, ToolContext } from '@/lib/permissions';
import { TEST_AGENTS, TEST_APPROVAL_KEY } from '@/lib/test-support/temp-app';
import { canonicalJson } from './canonical';
import { usePostgres } from '@/lib/test-support/use-postgres';

const pg15 = usePostgres();
const config = mkdtempSync(join(tmpdir(), 'swarm-approval-integrity-'));
writeFileSync(join(config, 'agents.yaml'), TEST_AGENTS);
writeFileSync(join(config, 'permission_policies.yaml'), 'rules: []\n');
writeFileSync(join(config, 'gates.yaml'), 'gates:\n  - id: deploy\n    tools: [deploy_serving]\n  - id: two-person\n    tools: [monitor_drift]\n    approvers: { count: 2 }\n');

/** One database under test: its application, and SQL straight to its file or cluster (what an insider can do). */
interface Side {
  app: App;
  /** another application on the same database (a server started after an upgrade, say): closed with the side */
  open(): Promise<App>;
  /** every byte the database keeps at rest, as text (SQLite: the file and its log; PostgreSQL: the tables' rows) */
  atRest(): Promise<string>;
  /** rows of a query, with `?` placeholders on either database */
  query<T>(text: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

const sides: Record<'SQLite' | 'PostgreSQL', () => Promise<Side>> = {
  async SQLite() {
    const dir = mkdtempSync(join(tmpdir(), 'swarm-integrity-'));
    const file = join(dir, 'swarm.db');
    const app = await openApp({ dbPath: file, configDir: config, env: {} });
    // Another connection to the same file: the insider's, not the application's.
    const raw = new Database(file);
    const others: App[] = [];
    return {
      app,
      async open() {
        const other = await openApp({ dbPath: file, configDir: config, env: {} });
        others.push(other);
        return other;
      },
      async atRest() {
        return ['', '-wal'].map((suffix) => (existsSync(file + suffix) ? readFileSync(file + suffix).toString('latin1') : '')).join('\n');
      },
      query: async <T,>(text: string, params: unknown[] = []) => (/^\s*select/i.test(text) ? (raw.prepare(text).all(...params) as T[]) : (raw.prepare(text).run(...params), [])),
      async close() {
        raw.close();
        for (const other of others) await other.close();
        await app.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  async PostgreSQL() {
    const name = await pg15.freshDatabase('integrity');
    const env = { SWARM_PG_POOL_MAX: '4', SWARM_APPROVAL_KEY: TEST_APPROVAL_KEY };
    const app = await openApp({ dbPath: pg15.cluster.urlOf(name), configDir: config, env });
    const raw = pg15.pool(name, 1);
    const others: App[] = [];
    return {
      app,
      async open() {
        const other = await openApp({ dbPath: pg15.cluster.urlOf(name), configDir: config, env });
        others.push(other);
        return other;
      },
      async atRest() {
        const tables = (await raw.query<{ t: string }>("SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public'")).rows.map((r) => r.t);
        const dumps = await Promise.all(tables.map(async (t) => JSON.stringify((await raw.query(`SELECT * FROM "${t}"`)).rows)));
        return dumps.join('\n');
      },
      async query<T>(text: string, params: unknown[] = []) {
        let n = 0;
        return (await raw.query(text.replace(/\?/g, () => `$${++n}`), params)).rows as T[];
      },
      async close() {
        for (const other of others) await other.close();
        await app.close();
      },
    };
  },
};

afterAll(() => rmSync(config, { recursive: true, force: true }));

const agent = (name: string): Principal => ({ kind: 'agent', id: name, role: 'viewer', agent: name });
const user = (id: string, role: Principal['role']): Principal => ({ kind: 'user', id, role });
const deployer = agent('deployer');
const victor = user('victor', 'viewer');
const olivia = { id: 'olivia', role: 'operator' } as const;
const otto = { id: 'otto', role: 'operator' } as const;

describe.each(Object.keys(sides) as (keyof typeof sides)[])('approvals on %s', (kind) => {
  let s: Side;
  beforeAll(async () => {
    s = await sides[kind]();
  }, 60_000);
  afterAll(async () => s.close());

  const call = (principal: Principal, args: Record<string, unknown>, tool = 'deploy_serving'): ToolContext => ({ kind: 'tool', principal, agent: 'deployer', tool, arguments: args });
  const decide = (input: ToolContext): Promise<CheckResult> => (s.app.side.kind === 'sqlite' ? Promise.resolve(s.app.engine.decide(input)) : s.app.engine.decideAsync(input));
  const approve = async (id: string, by: { id: string; role: 'operator' | 'admin' } = olivia) => s.app.approvals.approve(id, by, 'ok');
  const statusOf = async (id: string) => (await s.app.approvals.get(id))?.status;
  const eventsOf = (id: string) => s.query<{ type: string; actor: string; detail_json: string }>('SELECT type, actor, detail_json FROM security_events WHERE target = ? ORDER BY id', [id]);

  describe('bound to who asked', () => {
    it("keeps an agent's approval from a viewer checking the same call: the viewer asks, the approval stays, the agent runs once", async () => {
      const args = { model_id: 'm-bound', env: 'prod' };
      const asked = await decide(call(deployer, args));
      expect(asked).toMatchObject({ decision: 'ASK', ruleSource: 'hitl:deploy' });
      const id = asked.approvalId!;
      await approve(id);

      const viewers = await decide(call(victor, args));
      expect(viewers.decision).toBe('ASK');
      // The viewer's call waits for its own request; the agent's approval is neither named nor used.
      expect(viewers.approvalId).not.toBe(id);
      expect((await s.app.approvals.get(viewers.approvalId!))?.requestedBy).toBe('victor');
      expect(await statusOf(id)).toBe('approved');

      expect(await decide(call(deployer, args))).toMatchObject({ decision: 'ALLOW', ruleSource: 'hitl:deploy', approvalId: id });
      expect((await decide(call(deployer, args))).decision).toBe('ASK');
      const consumed = (await eventsOf(id)).filter((e) => e.type === 'approval.consumed');
      expect(consumed.map((e) => e.actor)).toEqual(['agent:deployer']);
      expect(await s.app.approvals.get(id)).toMatchObject({ status: 'consumed', consumedBy: 'agent:deployer' });
    });

    it('lets an operator who is not the requester neither use nor spend it', async () => {
      const args = { model_id: 'm-operator', env: 'prod' };
      const id = (await decide(call(deployer, args))).approvalId!;
      await approve(id);
      expect((await decide(call(user('otto', 'operator'), args))).decision).toBe('ASK');
      expect(await statusOf(id)).toBe('approved');
    });

    it("lets an administrator act for the agent, and names the administrator as the one who used the approval", async () => {
      const args = { model_id: 'm-admin', env: 'prod' };
      const id = (await decide(call(deployer, args))).approvalId!;
      await approve(id);
      expect(await decide(call(user('ada', 'admin'), args))).toMatchObject({ decision: 'ALLOW', approvalId: id });
      expect(await s.app.approvals.get(id)).toMatchObject({ status: 'consumed', consumedBy: 'ada' });
      const consumed = (await eventsOf(id)).find((e) => e.type === 'approval.consumed')!;
      expect(consumed.actor).toBe('ada');
      expect(JSON.parse(consumed.detail_json)).toMatchObject({ requested_by: 'agent:deployer' });
      expect((await decide(call(deployer, args))).decision).toBe('ASK');
    });

    it('lets a person use only the approval they asked for', async () => {
      const args = { model_id: 'm-person', env: 'prod' };
      const oscar = user('oscar', 'operator');
      const id = (await decide(call(oscar, args))).approvalId!;
      await approve(id);
      expect((await decide(call(user('ada', 'admin'), args))).decision).toBe('ASK');
      expect((await decide(call(deployer, args))).decision).toBe('ASK');
      expect(await statusOf(id)).toBe('approved');
      expect(await decide(call(oscar, args))).toMatchObject({ decision: 'ALLOW', approvalId: id });
      expect((await eventsOf(id)).filter((e) => e.type === 'approval.consumed').map((e) => e.actor)).toEqual(['oscar']);
    });
  });

  describe('verified against the audit trail', () => {
    const unverifiedEvents = async (id: string) => (await eventsOf(id)).filter((e) => e.type === 'approval.unverified');

    it('does not run a call whose rejection was changed into an approval in the database: it asks, and the mismatch is recorded', async () => {
      const args = { model_id: 'm-rejected', env: 'prod' };
      const id = (await decide(call(deployer, args))).approvalId!;
      await s.app.approvals.reject(id, olivia, 'not this model');
      expect((await decide(call(deployer, args))).decision).toBe('DENY');
      await s.query("UPDATE approvals SET status = 'approved', decided_by = 'olivia', decision_reason = 'ok' WHERE id = ?", [id]);

      const dry = s.app.side.kind === 'sqlite' ? s.app.engine.check(call(deployer, args)) : await s.app.engine.checkAsync(call(deployer, args));
      expect(dry).toMatchObject({ decision: 'ASK', ruleSource: 'hitl:deploy', approvalId: id });
      expect(dry.reason).toMatch(/audit trail does not hold it \(the audit trail records it as rejected/);
      const next = await decide(call(deployer, args));
      expect(next.decision).toBe('ASK');
      expect(next.approvalId).not.toBe(id);
      expect(await statusOf(id)).toBe('approved');
      const recorded = await unverifiedEvents(id);
      expect(recorded).toHaveLength(1);
      expect(JSON.parse(recorded[0]!.detail_json)).toMatchObject({ problem: expect.stringMatching(/records it as rejected/) });
    });

    it('does not run a spent approval again when its row is set back to approved', async () => {
      const args = { model_id: 'm-spent', env: 'prod' };
      const id = (await decide(call(deployer, args))).approvalId!;
      await approve(id);
      expect((await decide(call(deployer, args))).decision).toBe('ALLOW');
      await s.query("UPDATE approvals SET status = 'approved', consumed_at = NULL, consumed_by = NULL WHERE id = ?", [id]);
      expect((await decide(call(deployer, args))).decision).toBe('ASK');
      expect(await unverifiedEvents(id)).toHaveLength(1);
    });

    it('does not run a two-person call that one person approved, whatever the row says it needs', async () => {
      const args = { model_id: 'm-two' };
      const id = (await decide(call(deployer, args, 'monitor_drift'))).approvalId!;
      await approve(id, olivia);
      expect(await statusOf(id)).toBe('pending');
      await s.query("UPDATE approvals SET status = 'approved', approvals_required = 1 WHERE id = ?", [id]);
      const next = await decide(call(deployer, args, 'monitor_drift'));
      expect(next.decision).toBe('ASK');
      expect(next.reason).toMatch(/holds 1 of the 2 approvals it needs/);
      // A legitimate two-person approval still runs once.
      const fresh = next.approvalId!;
      await approve(fresh, olivia);
      await approve(fresh, otto);
      expect(await decide(call(deployer, args, 'monitor_drift'))).toMatchObject({ decision: 'ALLOW', approvalId: fresh });
    });

    it("does not let an approval of one call run another when the row's arguments are changed", async () => {
      const staging = { model_id: 'm-swap', env: 'staging' };
      const prod = { model_id: 'm-swap', env: 'prod' };
      const id = (await decide(call(deployer, staging))).approvalId!;
      await approve(id);
      // The prod call's arguments hash, as the store makes it (another principal's request of that call shows it).
      const other = (await decide(call(victor, prod))).approvalId!;
      const prodHash = (await s.app.approvals.get(other))!.argumentsHash;
      await s.query('UPDATE approvals SET arguments_hash = ? WHERE id = ?', [prodHash, id]);
      expect((await decide(call(deployer, prod))).decision).toBe('ASK');
      expect((await unverifiedEvents(id))[0]?.detail_json).toMatch(/another call or requester/);
    });

    it('does not trust an approval event added to the trail without its hash', async () => {
      const args = { model_id: 'm-forged', env: 'prod' };
      const id = (await decide(call(deployer, args))).approvalId!;
      const row = (await s.app.approvals.get(id))!;
      const next = (await s.query<{ next: number }>('SELECT max(id) + 1 AS next FROM security_events'))[0]!.next;
      const detail = { gate: 'deploy', agent: 'deployer', tool: 'deploy_serving', arguments_hash: row.argumentsHash, requested_by: row.requestedBy, approvals_required: 1, approvals_given: 1, complete: true };
      await s.query(
        "INSERT INTO security_events (id, type, actor, actor_role, outcome, target, detail_json, timestamp, prev_hash, row_hash) VALUES (?, 'approval.approved', 'olivia', 'operator', 'succeeded', ?, ?, ?, ?, ?)",
        [Number(next), id, JSON.stringify(detail), Date.now() / 1000, '0'.repeat(64), 'f'.repeat(64)],
      );
      await s.query("UPDATE approvals SET status = 'approved' WHERE id = ?", [id]);
      const answer = await decide(call(deployer, args));
      expect(answer.decision).toBe('ASK');
      expect((await unverifiedEvents(id))[0]?.detail_json).toMatch(/does not match its hash/);
    });
  });

  describe('secret arguments never at rest', () => {
    const SECRET = 'sk-live-4f9a8b7c6d5e4f3a2b1c';
    const PASSWORD = 'correct-horse-battery-staple';

    it('keeps no secret value in the approvals table (nor anywhere at rest), and binds the approval to the exact call by a keyed hash', async () => {
      const args = { model_id: 'm-secret', env: 'prod', api_key: SECRET, registry: { url: 'https://r.example', password: PASSWORD } };
      const id = (await decide(call(deployer, args))).approvalId!;
      const [row] = await s.query<Record<string, unknown>>('SELECT * FROM approvals WHERE id = ?', [id]);
      expect(JSON.stringify(row)).not.toContain(SECRET);
      expect(JSON.stringify(row)).not.toContain(PASSWORD);
      expect(JSON.parse(String(row!.arguments_canonical))).toEqual({ api_key: '[REDACTED]', env: 'prod', model_id: 'm-secret', registry: { password: '[REDACTED]', url: 'https://r.example' } });
      // Keyed: neither the plain hash of the arguments nor of what is stored, which a reader of the table could test guesses with.
      const hash = String(row!.arguments_hash);
      expect(hash).toMatch(/^hmac1:[0-9a-f]{64}$/);
      for (const text of [canonicalJson(args), String(row!.arguments_canonical)]) expect(hash).not.toContain(createHash('sha256').update(text).digest('hex'));

      await approve(id);
      // Another secret is another call: it asks, and the approval stays for the call it was given to.
      const other = await decide(call(deployer, { ...args, api_key: `${SECRET}-other` }));
      expect(other.decision).toBe('ASK');
      expect(other.approvalId).not.toBe(id);
      expect(await statusOf(id)).toBe('approved');
      expect(await decide(call(deployer, args))).toMatchObject({ decision: 'ALLOW', approvalId: id });

      const rest = await s.atRest();
      expect(rest).not.toContain(SECRET);
      expect(rest).not.toContain(PASSWORD);
    });

    it('re-binds the rows of an earlier release at the next start: the secret leaves the table, and a waiting request still matches its call', async () => {
      const args = { model_id: 'm-legacy', env: 'prod', token: SECRET };
      // As the release before kept it: the canonical arguments in clear, bound by their unkeyed sha-256.
      const canonical = canonicalJson(args);
      const legacyId = 'apr_legacyRow0000000001';
      await s.query(
        `INSERT INTO approvals (id, gate, agent_name, tool_name, arguments_canonical, arguments_redacted, arguments_hash, requested_by, requested_at, expires_at, rule_source, reason, status)
         VALUES (?, 'deploy', 'deployer', 'deploy_serving', ?, ?, ?, 'agent:deployer', ?, ?, 'hitl:deploy', 'r', 'pending')`,
        [legacyId, canonical, JSON.stringify({ ...args, token: '[REDACTED]' }), createHash('sha256').update(canonical).digest('hex'), Date.now() / 1000, Date.now() / 1000 + 3600],
      );
      const upgraded = await s.open();
      const [row] = await s.query<{ arguments_canonical: string; arguments_hash: string }>('SELECT arguments_canonical, arguments_hash FROM approvals WHERE id = ?', [legacyId]);
      expect(row!.arguments_canonical).not.toContain(SECRET);
      expect(row!.arguments_hash).toMatch(/^hmac1:/);
      const again = upgraded.side.kind === 'sqlite' ? upgraded.engine.decide(call(deployer, args)) : await upgraded.engine.decideAsync(call(deployer, args));
      expect(again).toMatchObject({ decision: 'ASK', approvalId: legacyId });
    });
  });
});
