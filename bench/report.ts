/**
 * Audit report benchmark: the time and memory to produce the audit report (PDF and OSCAL) of a 30-day period over
 * 1,000,000 denials in a real SQLite file with the bfsi profile active.
 *
 *   node --import tsx bench/report.ts                 # seed a temp database with 1,000,000 denials, measure, delete it
 *   node --import tsx bench/report.ts --rows 200000   # a smaller world
 *
 * The denials are written in one transaction by a prepared INSERT that computes each row's hash chain exactly as the
 * recorder does (lib/audit/trail/chain.ts), so the report's verification walks a valid million-row chain; a checkpoint is
 * signed at the end. The report is then generated in a fresh child process, so that its peak RSS is the report's own
 * (the seeding's strings are not in it): gathering (SQL aggregates, and the verification of both chains on worker
 * threads at the same time) and rendering are timed apart.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApp } from '@/lib/app';
import { chainHash, CHAIN_COLUMNS, encodeRow, GENESIS_HASH } from '@/lib/audit/trail/chain';
import { buildReport } from '@/lib/reports/generate';
import { fmt, fmtInt, isMain, markdownTable, nowNs, pick, prng } from './util';

const DAY = 86400;
const SPAN_DAYS = 30;
export const REPORT_TARGET_SECONDS = 10;

const AGENTS = ['data_cleaner', 'trainer', 'evaluator', 'deployer', 'compliance_agent', 'shadow_agent', 'report_bot', 'labeler'];
const TOOLS = ['profile_dataset', 'clean_dataset', 'export_raw_data', 'train_model', 'tune_hyperparameters', 'evaluate_model', 'fairness_audit', 'deploy_serving', 'send_email', 'web_fetch'];
const RULES = [
  'agent_allowlist',
  'agent_allowlist',
  'agent_allowlist',
  'flag:auto_fairness_audit',
  'flag:raw_data_export',
  'policy:bfsi/no-pii-export',
  'policy:bfsi/tuning-capacity-review',
  'hitl:deploy',
  'rbac:admin',
  'default',
];

export interface ReportMeasure {
  format: 'pdf' | 'oscal';
  totalMs: number;
  gatherMs: number;
  /** during gatherMs, beside the SQL: recomputing both hash chains (on worker threads, lib/audit/trail/verify-parallel.ts) */
  verifyMs: number;
  renderMs: number;
  bytes: number;
  pages?: number;
  peakRssMb: number;
  heapUsedMb: number;
  denials: number;
  chainRows: number;
  verified: boolean;
}

export interface ReportBenchResult {
  rows: number;
  seedSeconds: number;
  measures: ReportMeasure[];
}

/** Seed `rows` denials over the last 30 days into a new database with the bfsi profile; returns its paths. */
function seed(rows: number, dir: string): { dbPath: string; configDir: string; seconds: number } {
  const configDir = join(dir, 'config');
  cpSync(fileURLToPath(new URL('../config', import.meta.url)), configDir, { recursive: true });
  const dbPath = join(dir, 'report.db');
  const app = createApp({ dbPath, configDir, env: {}, profile: 'bfsi', watchConfig: false });
  const revision = app.currentRevision();
  const sqlite = app.db.$client;
  const columns = CHAIN_COLUMNS.permission_denials;
  const insert = sqlite.prepare(`INSERT INTO permission_denials (id, ${columns.join(', ')}, prev_hash, row_hash) VALUES (${Array(columns.length + 3).fill('?').join(', ')})`);
  const rng = prng(20260101);
  const now = Date.now() / 1000;
  const start = now - SPAN_DAYS * DAY;
  const t0 = nowNs();
  sqlite.transaction(() => {
    let prev = GENESIS_HASH;
    for (let id = 1; id <= rows; id++) {
      const agent = pick(rng, AGENTS);
      const tool = pick(rng, TOOLS);
      const rule = pick(rng, RULES);
      const values = [
        `tc_${id.toString(36)}`,
        tool,
        agent,
        JSON.stringify({ dataset_id: `ds_${id % 97}`, env: pick(rng, ['dev', 'staging', 'prod']) }),
        rule,
        `Denied by ${rule}: ${agent} may not call ${tool}.`,
        'viewer',
        null,
        null,
        start + ((id - 1) / rows) * SPAN_DAYS * DAY,
        agent,
        null,
        null,
        revision,
        null,
      ];
      const hash = chainHash(prev, id, encodeRow(values));
      insert.run(id, ...values, prev, hash);
      prev = hash;
    }
  })();
  const seconds = Number(nowNs() - t0) / 1e9;
  app.checkpointAudit();
  app.close();
  return { dbPath, configDir, seconds };
}

/** In the child: generate one report and print its measures as JSON. */
async function measureOnce(dbPath: string, configDir: string, format: 'pdf' | 'oscal'): Promise<ReportMeasure> {
  const app = createApp({ dbPath, configDir, env: {}, profile: 'bfsi', watchConfig: false });
  const now = Date.now() / 1000;
  const to = (Math.floor(now / DAY) + 1) * DAY;
  const t0 = nowNs();
  const r = await buildReport(app, { period: { from: to - SPAN_DAYS * DAY - DAY, to }, format, generatedBy: { actor: 'bench', role: 'auditor' } });
  const totalMs = Number(nowNs() - t0) / 1e6;
  const pages = format === 'pdf' ? (r.bytes.toString('latin1').match(/\/Type \/Page\b/g) ?? []).length : undefined;
  const m: ReportMeasure = {
    format,
    totalMs,
    gatherMs: r.timings.gatherMs,
    verifyMs: r.data.integrity.verifyMs,
    renderMs: r.timings.renderMs,
    bytes: r.bytes.length,
    pages,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    heapUsedMb: process.memoryUsage().heapUsed / 2 ** 20,
    denials: r.data.denials.total,
    chainRows: r.data.integrity.chains.reduce((n, c) => n + c.rowsChecked, 0),
    verified: r.data.integrity.ok,
  };
  app.close();
  return m;
}

export async function runReportBench(options: { rows?: number; log?: (line: string) => void } = {}): Promise<ReportBenchResult> {
  const rows = options.rows ?? 1_000_000;
  const log = options.log ?? ((l: string) => console.error(l));
  const dir = mkdtempSync(join(tmpdir(), 'swarm-bench-report-'));
  try {
    log(`report: seeding ${fmtInt(rows)} chained denials`);
    const s = seed(rows, dir);
    log(`report: seeded in ${s.seconds.toFixed(1)} s; generating the reports in a fresh process`);
    const measures: ReportMeasure[] = [];
    for (const format of ['pdf', 'oscal'] as const) {
      const child = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--measure', s.dbPath, s.configDir, format], {
        encoding: 'utf8',
        cwd: fileURLToPath(new URL('..', import.meta.url)),
        maxBuffer: 1 << 20,
      });
      if (child.status !== 0) throw new Error(`the report child failed: ${child.stderr}`);
      measures.push(JSON.parse(child.stdout.trim().split('\n').pop()!) as ReportMeasure);
    }
    return { rows, seedSeconds: s.seconds, measures };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function formatReportResult(r: ReportBenchResult): string {
  return [
    `${fmtInt(r.rows)} chained denials over ${SPAN_DAYS} days (seeded in ${r.seedSeconds.toFixed(1)} s, one transaction); the report of the whole period, generated in a fresh process. ` +
      'The chains are verified on worker threads (lib/audit/trail/verify-parallel.ts) while the figures are read, so gathering takes about as long as the verification; peak RSS includes the workers.',
    '',
    markdownTable(
      ['format', 'total', 'gathering (SQL and verification at once)', 'of which chain verification', 'render', 'output', 'peak RSS', 'heap used', 'denials counted', 'chain rows verified'],
      r.measures.map((m) => [
        m.format === 'pdf' ? 'PDF' : 'OSCAL JSON',
        `${fmt(m.totalMs / 1000)} s`,
        `${fmt(m.gatherMs / 1000)} s`,
        `${fmt(m.verifyMs / 1000)} s`,
        `${fmt(m.renderMs)} ms`,
        `${fmt(m.bytes / 1024)} KiB${m.pages ? `, ${m.pages} pages` : ''}`,
        `${fmt(m.peakRssMb)} MB`,
        `${fmt(m.heapUsedMb)} MB`,
        fmtInt(m.denials),
        `${fmtInt(m.chainRows)}${m.verified ? ' (intact)' : ' (FAILED)'}`,
      ]),
    ),
  ].join('\n');
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args[0] === '--measure') {
    const [, dbPath, configDir, format] = args;
    console.log(JSON.stringify(await measureOnce(dbPath!, configDir!, format === 'oscal' ? 'oscal' : 'pdf')));
    return;
  }
  const i = args.indexOf('--rows');
  const result = await runReportBench({ rows: i >= 0 ? Number(args[i + 1]) : undefined });
  console.log(formatReportResult(result));
}

if (isMain(import.meta.url)) {
  main().catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  });
}
