/**
 * Durable denial writes on PostgreSQL beside SQLite, in one run on one machine: the same hash-chained rows, each
 * committed before the writer goes on, as the engine's recorder requires.
 *
 *   node --import tsx bench/postgres.ts [seconds per scenario, default 4]
 *
 * PostgreSQL is a throwaway cluster started in a temp folder with its durable defaults (fsync on, synchronous_commit
 * on, full_page_writes on): a committed denial survives a power loss. SQLite is measured with the recorder the server
 * uses, in WAL mode with synchronous NORMAL (the default: survives a killed process) and FULL (survives a power loss,
 * the comparison with PostgreSQL's defaults).
 *
 * Scenarios on PostgreSQL: one writer, one denial per transaction; 8 writers at once (8 servers' worth of connections,
 * one chain: the audit lock serialises the appends, PostgreSQL's WAL flush groups the commits); batches of 64 denials
 * per transaction (a group commit of concurrent checks, as the decision listener makes them on SQLite).
 *
 * Then decisions through the engine of the application on PostgreSQL (lib/server/app.ts on its PostgreSQL side: flags, approvals, the recorder)
 * from 8 concurrent callers, a mix of allowed calls (no write), denials (one chained row each) and
 * gated calls (a request and its audit row), beside the same mix decided by the SQLite application's engine.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { openDatabase, type SyncMode } from '@/db/client';
import { migratePostgres, openPool } from '@/db/pg/client';
import { CHAIN_COLUMNS } from '@/lib/audit/trail/chain';
import { PgChainWriter } from '@/lib/audit/trail/pg-chain';
import { AuditRecorder, type DenialInput } from '@/lib/audit/trail/recorder';
import { newDecisionId } from '@/lib/permissions/decision-id';
import { startPostgres } from '@/lib/test-support/postgres';
import { createApp, openApp } from '@/lib/app';
import type { CheckInput } from '@/lib/permissions';
import { fmtInt, isMain, markdownTable } from './util';

export interface PgWriteRow {
  database: 'PostgreSQL' | 'SQLite';
  scenario: string;
  /** how a committed denial survives */
  durability: string;
  writers: number;
  denialsPerTransaction: number;
  writesPerSec: number;
}

export interface PgDecisionRow {
  database: 'PostgreSQL' | 'SQLite';
  how: string;
  decisionsPerSec: number;
}

export interface PgBenchResult {
  seconds: number;
  version: string;
  rows: PgWriteRow[];
  decisions: PgDecisionRow[];
}

const AGENTS = 'agents:\n  data_cleaner:\n    tools: [profile_dataset, clean_dataset]\n  deployer:\n    tools: [deploy_serving]\n';
const GATES = 'gates:\n  - id: deploy\n    tools: [deploy_serving]\n';

/** The i-th call of the mix: 6 in 10 allowed, 3 denied (a tool not on the allowlist), 1 gated (a new request). */
function mixCall(i: number): CheckInput {
  const k = i % 10;
  const agent = k === 9 ? 'deployer' : 'data_cleaner';
  const tool = k === 9 ? 'deploy_serving' : k >= 6 ? 'train_model' : 'profile_dataset';
  return { kind: 'tool', principal: { kind: 'agent', id: agent, role: 'viewer', agent }, agent, tool, arguments: { dataset_id: `ds_${i}`, env: 'prod' } };
}

/** The config folder both applications read (the same agents and gate on both databases). */
function writeConfig(dir: string): void {
  writeFileSync(join(dir, 'agents.yaml'), AGENTS);
  writeFileSync(join(dir, 'gates.yaml'), GATES);
  writeFileSync(join(dir, 'permission_policies.yaml'), 'rules: []\n');
}

async function decisionsOnPostgres(url: string, dir: string, callers: number, seconds: number): Promise<number> {
  writeConfig(dir);
  // (a key of the bench's own: the approval requests of the mix are bound with it)
  const app = await openApp({ dbPath: url, configDir: dir, env: { SWARM_APPROVAL_KEY: 'bench-approval-binding-key-0123456789abcdef' } });
  try {
    let n = 0;
    const started = Date.now();
    const until = started + seconds * 1000;
    await Promise.all(
      Array.from({ length: callers }, async () => {
        while (Date.now() < until) await app.engine.decideAsync(mixCall(n++));
      }),
    );
    return n / ((Date.now() - started) / 1000);
  } finally {
    await app.close();
  }
}

function decisionsOnSqlite(dir: string, seconds: number): number {
  writeConfig(dir);
  const app = createApp({ dbPath: join(dir, 'decisions.db'), configDir: dir, env: {} });
  try {
    let n = 0;
    const started = Date.now();
    const until = started + seconds * 1000;
    while (Date.now() < until) for (let i = 0; i < 20; i++) app.engine.decide(mixCall(n++));
    return n / ((Date.now() - started) / 1000);
  } finally {
    app.close();
  }
}

/** A denial as the recorder stores it (about 500 bytes of arguments and trace, like the engine bench's denials). */
function denial(i: number): DenialInput {
  return {
    toolCallId: `call_${i}`,
    toolName: ['deploy_serving', 'export_raw_data', 'train_model', 'web_fetch'][i % 4]!,
    agentName: `agent_${i % 200}`,
    argumentsJson: JSON.stringify({ model_id: `m-${i % 977}`, env: i % 3 ? 'prod' : 'staging', notes: 'x'.repeat(120) }),
    maskedPaths: null,
    ruleSource: ['agent_allowlist', 'flag:serving_deployments', 'policy:no-pii-export', 'rbac:operator'][i % 4]!,
    reason: 'Tool "deploy_serving" is not in the allowlist of agent "agent_17" (config/agents.yaml).',
    userRole: 'viewer',
    httpMethod: null,
    httpPath: null,
    principal: `agent_${i % 200}`,
    traceJson: JSON.stringify([['DENY', 900, 'agent_allowlist', 'not listed'], ['ALLOW', 100, 'policy:default', 'x'.repeat(80)]]),
    decisionId: newDecisionId(),
    policyRevision: 'rev_0123456789abcdef0123456789abcdef',
  };
}

/** The values of a denial in chain order (CHAIN_COLUMNS.permission_denials). */
function chainValues(d: DenialInput, timestamp: number): unknown[] {
  const byColumn: Record<string, unknown> = {
    tool_call_id: d.toolCallId ?? null,
    tool_name: d.toolName,
    agent_name: d.agentName ?? null,
    arguments_json: d.argumentsJson ?? null,
    rule_source: d.ruleSource,
    reason: d.reason ?? null,
    user_role: d.userRole ?? null,
    http_method: d.httpMethod ?? null,
    http_path: d.httpPath ?? null,
    timestamp,
    principal: d.principal ?? null,
    trace_json: d.traceJson ?? null,
    decision_id: d.decisionId ?? null,
    policy_revision: d.policyRevision ?? null,
    masked_paths: d.maskedPaths ?? null,
  };
  return CHAIN_COLUMNS.permission_denials.map((c) => byColumn[c]);
}

async function pgWriter(pool: pg.Pool, perTransaction: number, until: number, counter: { n: number }): Promise<void> {
  const client = await pool.connect();
  try {
    while (Date.now() < until) {
      await client.query('BEGIN');
      const rows = Array.from({ length: perTransaction }, () => chainValues(denial(counter.n++), Date.now() / 1000));
      await new PgChainWriter(client).append('permission_denials', rows);
      await client.query('COMMIT');
    }
  } finally {
    client.release();
  }
}

async function pgScenario(pool: pg.Pool, writers: number, perTransaction: number, seconds: number): Promise<number> {
  const counter = { n: 0 };
  const started = Date.now();
  const until = started + seconds * 1000;
  await Promise.all(Array.from({ length: writers }, () => pgWriter(pool, perTransaction, until, counter)));
  return counter.n / ((Date.now() - started) / 1000);
}

function sqliteScenario(dir: string, sync: SyncMode, seconds: number): number {
  const db = openDatabase({ path: join(dir, `bench-${sync}.db`), sync });
  const recorder = new AuditRecorder(db.$client, { revision: () => 'rev_0123456789abcdef0123456789abcdef', logAllDecisions: () => false });
  let n = 0;
  const started = Date.now();
  const until = started + seconds * 1000;
  while (Date.now() < until) {
    for (let i = 0; i < 50; i++) recorder.appendDenial(denial(n++));
  }
  const rate = n / ((Date.now() - started) / 1000);
  db.$client.close();
  return rate;
}

export async function runPostgresBench(options: { seconds?: number; log?: (line: string) => void } = {}): Promise<PgBenchResult> {
  const seconds = options.seconds ?? 4;
  const log = options.log ?? (() => {});
  const cluster = await startPostgres({ durable: true });
  const dir = mkdtempSync(join(tmpdir(), 'swarm-pgbench-'));
  const pool = openPool({ url: cluster.url, max: 10 });
  try {
    await migratePostgres(pool, cluster.url);
    const version = (await pool.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]!.v;
    const rows: PgWriteRow[] = [];
    const pgDurability = 'fsync, synchronous_commit on (power loss)';
    for (const [writers, per, scenario] of [
      [1, 1, 'one writer, one denial per transaction'],
      [8, 1, '8 writers at once, one denial per transaction'],
      [8, 64, '8 writers, 64 denials per transaction (group commit)'],
    ] as const) {
      const rate = await pgScenario(pool, writers, per, seconds);
      rows.push({ database: 'PostgreSQL', scenario, durability: pgDurability, writers, denialsPerTransaction: per, writesPerSec: rate });
      log(`postgres: ${scenario}: ${fmtInt(rate)} denials/s`);
    }
    const decisions: PgDecisionRow[] = [];
    const onPg = await decisionsOnPostgres(cluster.url, dir, 8, seconds);
    decisions.push({ database: 'PostgreSQL', how: 'decideAsync() of the application on PostgreSQL, 8 concurrent callers (the recorder commits concurrent denials together)', decisionsPerSec: onPg });
    log(`postgres: decisions ${fmtInt(onPg)}/s`);
    const onSqlite = decisionsOnSqlite(dir, seconds);
    decisions.push({ database: 'SQLite', how: 'decide(), the application engine (WAL, NORMAL)', decisionsPerSec: onSqlite });
    log(`sqlite: decisions ${fmtInt(onSqlite)}/s`);
    for (const sync of ['normal', 'full'] as const) {
      const rate = sqliteScenario(dir, sync, seconds);
      rows.push({
        database: 'SQLite',
        scenario: 'the recorder, one denial per transaction',
        durability: sync === 'normal' ? 'WAL, synchronous NORMAL (killed process)' : 'WAL, synchronous FULL (power loss)',
        writers: 1,
        denialsPerTransaction: 1,
        writesPerSec: rate,
      });
      log(`sqlite ${sync}: ${fmtInt(rate)} denials/s`);
    }
    return { seconds, version, rows, decisions };
  } finally {
    await pool.end();
    cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function formatPostgresResult(r: PgBenchResult): string {
  const full = r.rows.find((x) => x.database === 'SQLite' && x.durability.includes('FULL'))?.writesPerSec ?? NaN;
  return [
    `PostgreSQL ${r.version} (a throwaway cluster, durable defaults) beside SQLite, same machine and run, ${r.seconds} s per scenario; every denial hash-chained and committed before the next.`,
    '',
    markdownTable(
      ['database', 'scenario', 'a committed denial survives', 'denials/s', 'vs SQLite FULL'],
      r.rows.map((x) => [x.database, x.scenario, x.durability, fmtInt(x.writesPerSec), `${(x.writesPerSec / full).toFixed(2)}x`]),
    ),
    '',
    'Decisions through the engine, a mix of 6 allowed, 3 denied and 1 gated call in 10 (the denials and the approval requests recorded before the answer):',
    '',
    markdownTable(
      ['database', 'how', 'decisions/s'],
      r.decisions.map((d) => [d.database, d.how, fmtInt(d.decisionsPerSec)]),
    ),
  ].join('\n');
}

if (isMain(import.meta.url)) {
  const seconds = Number(process.argv[2] ?? 4);
  runPostgresBench({ seconds, log: (l) => console.error(l) })
    .then((r) => console.log(formatPostgresResult(r)))
    .catch((error: unknown) => {
      console.error(error);
      process.exit(1);
    });
}
