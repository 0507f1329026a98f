/**
 * Runs every benchmark, prints a summary and the tables, and writes bench/RESULTS.md.
 *
 *   npm run bench        (node --import tsx bench/run.ts)
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { formatCompareResult, ratios, runCompareBench, RATIO_TARGET, type CompareResult } from './compare';
import { formatDenialsResult, runDenialsBench, type DenialsBenchResult } from './denials';
import { formatEngineResult, runEngineBench, type EngineBenchResult } from './engine';
import { formatHttpResult, runHttpBench, type HttpBenchResult } from './http';
import { formatMcpResult, MCP_ADDED_P50_TARGET_MS, runMcpBench, type McpBenchResult } from './mcp';
import { formatClientBench, runClientBench } from './client';
import { formatImpactResult, IMPACT_TARGET_SECONDS, runImpactBench, type ImpactBenchResult } from './impact';
import { formatPostgresResult, runPostgresBench, type PgBenchResult } from './postgres';
import { formatReportResult, REPORT_TARGET_SECONDS, runReportBench, type ReportBenchResult } from './report';
import { formatFreeText, freeTextFirstPage, runFreeTextBench, type FreeTextResult } from './denial-queries';
import { formatSoakResult, runSoakBench, SOAK_BENCH_MINUTES, SOAK_SECTION, soakOptionsFromEnv, type SoakResult } from './soak';
import { fmt, fmtInt, markdownTable } from './util';

const TARGETS = {
  engineP50Us: 1,
  engineP99Us: 10,
  durableWritesPerSec: 30_000,
} as const;

function machine(): string[] {
  const cpus = os.cpus();
  const load = os.loadavg().map((l) => l.toFixed(2)).join(' / ');
  return [
    `- CPU: ${cpus[0]?.model ?? 'unknown'}, ${cpus.length} cores`,
    `- Memory: ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `- OS: ${os.type()} ${os.release()} (${os.arch()})`,
    `- Node: ${process.version}`,
    `- Load average at start (1/5/15 min): ${load}`,
  ];
}

/** The explorer's first page of a free-text search over 1,000,000 denials (issue 13). */
const FREE_TEXT_TARGET_MS = 50;

function summary(
  engine: EngineBenchResult,
  denials: DenialsBenchResult,
  compare: CompareResult,
  http: HttpBenchResult,
  report: ReportBenchResult,
  postgres: PgBenchResult,
  freeText: { rows: number; result: FreeTextResult },
  soak: SoakResult,
  mcp: McpBenchResult,
  impact: ImpactBenchResult,
): string {
  const noLookup = engine.rows.find((r) => r.label.startsWith('no approval lookup'));
  const all = engine.rows.find((r) => r.label.startsWith('all calls'));
  // The server's mode: background checkpoints (the inline row is there for comparison).
  const normal = denials.rows.find((r) => r.sync === 'normal' && !r.reader && r.label.includes('background'));
  const chainCost = denials.chainCost.cost;
  const normalReader = denials.rows.find((r) => r.sync === 'normal' && r.reader);
  const full = denials.rows.find((r) => r.sync === 'full' && !r.reader);
  const verdict = (ok: boolean | undefined) => (ok === undefined ? '–' : ok ? 'met' : 'MISSED');
  const rows: string[][] = [
    [
      'engine decisions/s, all calls (1,000 rules)',
      all ? fmtInt(all.decisionsPerSec) : '–',
      '–',
      '–',
    ],
    [
      'engine p50, no approval lookup (64-call batches)',
      noLookup ? `${fmt(noLookup.p50Us)} µs` : '–',
      `< ${TARGETS.engineP50Us} µs`,
      verdict(noLookup && noLookup.p50Us < TARGETS.engineP50Us),
    ],
    [
      'engine p99, no approval lookup (single calls)',
      noLookup ? `${fmt(noLookup.singleP99Us)} µs` : '–',
      `< ${TARGETS.engineP99Us} µs`,
      verdict(noLookup && noLookup.singleP99Us < TARGETS.engineP99Us),
    ],
    [
      'engine p99, no approval lookup (64-call batches, GC included)',
      noLookup ? `${fmt(noLookup.p99Us)} µs` : '–',
      `< ${TARGETS.engineP99Us} µs`,
      verdict(noLookup && noLookup.p99Us < TARGETS.engineP99Us),
    ],
    [
      'durable writes with the evidence trail against the writer before it (same run, interleaved)',
      `${(100 * chainCost).toFixed(1)}% slower`,
      '≤ 15% slower',
      verdict(chainCost <= 0.15),
    ],
    [
      'durable denial writes/s, WAL + NORMAL, background checkpoints (the server)',
      normal ? fmtInt(normal.writesPerSec) : '–',
      `≥ ${fmtInt(TARGETS.durableWritesPerSec)}`,
      verdict(normal && normal.writesPerSec >= TARGETS.durableWritesPerSec),
    ],
    [
      'the same with one reader running the explorer query in a loop',
      normalReader ? fmtInt(normalReader.writesPerSec) : '–',
      `≥ ${fmtInt(TARGETS.durableWritesPerSec)}`,
      verdict(normalReader && normalReader.writesPerSec >= TARGETS.durableWritesPerSec),
    ],
    ['durable denial writes/s, WAL + FULL', full ? fmtInt(full.writesPerSec) : '–', '–', '–'],
  ];
  // PostgreSQL beside SQLite, same run (bench/postgres.ts): both durable against a power loss.
  const pgGroup = postgres.rows.find((r) => r.database === 'PostgreSQL' && r.denialsPerTransaction > 1);
  const pgSingle = postgres.rows.find((r) => r.database === 'PostgreSQL' && r.denialsPerTransaction === 1 && r.writers === 1);
  const sqliteFull = postgres.rows.find((r) => r.database === 'SQLite' && r.durability.includes('FULL'));
  rows.push([
    `durable denial writes/s on PostgreSQL ${postgres.version.split(' ')[0]}: one a transaction / 64 a transaction (vs SQLite FULL, same run)`,
    pgSingle && pgGroup && sqliteFull ? `${fmtInt(pgSingle.writesPerSec)} / ${fmtInt(pgGroup.writesPerSec)} (${fmtInt(sqliteFull.writesPerSec)})` : '–',
    '–',
    '–',
  ]);
  const pgDecisions = postgres.decisions.find((d) => d.database === 'PostgreSQL');
  const sqliteDecisions = postgres.decisions.find((d) => d.database === 'SQLite');
  rows.push([
    'decisions/s through the engine, 6 allowed, 3 denied, 1 gated in 10: PostgreSQL stores, 8 callers (SQLite, same run)',
    pgDecisions && sqliteDecisions ? `${fmtInt(pgDecisions.decisionsPerSec)} (${fmtInt(sqliteDecisions.decisionsPerSec)})` : '–',
    '–',
    '–',
  ]);
  const mismatches = compare.agreement.reduce((n, a) => n + a.mismatches, 0);
  rows.push([
    `same decision in all engines (${fmtInt(compare.sampleSize)} sampled calls x ${compare.agreement.length} configurations)`,
    `${mismatches} mismatches`,
    '0',
    verdict(mismatches === 0),
  ]);
  for (const r of ratios(compare)) {
    rows.push([
      `this engine vs ${r.versus}: decisions/s (p50)`,
      `${fmtInt(r.throughput)}x (${fmtInt(r.p50)}x)`,
      `≥ ${RATIO_TARGET}x`,
      verdict(Math.min(r.throughput, r.p50) >= RATIO_TARGET),
    ]);
  }
  rows.push([
    'engine vs bare indexed five-source loop, mean per decision with trace (same stream, 64-call batches)',
    `${engine.bare.ratio.toFixed(2)}x (${fmt(engine.bare.engineNs)} vs ${fmt(engine.bare.bareNs)} ns; ${fmtInt(engine.bare.mismatches)} mismatches)`,
    '≤ 3x',
    verdict(engine.bare.mismatches === 0 && engine.bare.ratio <= 3),
  ]);
  const bare = http.rows[0];
  for (const row of http.rows.slice(1)) {
    const decisions = row.requestsPerSec * (row.perRequest ?? 1);
    rows.push([
      `${row.label}: vs the bare node:http server`,
      row.perRequest
        ? `${fmtInt(decisions)} decisions/s (${fmtInt(row.requestsPerSec)} requests/s)`
        : `${((row.ratio ?? Number.NaN) * 100).toFixed(0)}% (${fmtInt(row.requestsPerSec)} vs ${fmtInt(row.referenceBeside ?? Number.NaN)} beside it; p99 ${fmt(row.p99Ms)} vs ${fmt(bare?.p99Ms ?? Number.NaN)} ms)`,
      row.target === undefined ? '–' : `≥ ${Math.round(row.target * 100)}%`,
      verdict(row.target === undefined || row.ratio === undefined ? undefined : row.ratio >= row.target),
    ]);
  }
  const pdf = report.measures.find((m) => m.format === 'pdf');
  rows.push([
    `audit report PDF of 30 days over ${fmtInt(report.rows)} denials (chain verified), peak RSS`,
    pdf ? `${fmt(pdf.totalMs / 1000)} s, ${fmt(pdf.peakRssMb)} MB` : '–',
    `< ${REPORT_TARGET_SECONDS} s`,
    verdict(pdf && pdf.totalMs / 1000 < REPORT_TARGET_SECONDS),
  ]);
  const ft = freeTextFirstPage(freeText.result);
  rows.push([
    `free text over ${fmtInt(freeText.rows)} denials, first page, slowest of ${freeText.result.rows.length} searches: FTS5 trigram index vs the LIKE scan before it`,
    `${fmt(ft.trigramMs)} ms vs ${fmt(ft.likeMs)} ms (${fmt(ft.ratio)}x faster)`,
    `< ${FREE_TEXT_TARGET_MS} ms`,
    verdict(ft.trigramMs < FREE_TEXT_TARGET_MS),
  ]);
  for (const row of mcp.rows.filter((r) => r.addedP50Ms !== null)) {
    rows.push([
      `MCP tools/call ${row.label}: added p50 against the upstream called directly (same run)`,
      `${fmt(row.addedP50Ms!)} ms (${fmt(row.p50Ms)} vs ${fmt(mcp.rows[0]!.p50Ms)} ms)`,
      row.label.includes('in process') ? `< ${MCP_ADDED_P50_TARGET_MS} ms` : '–',
      row.label.includes('in process') ? verdict(row.addedP50Ms! < MCP_ADDED_P50_TARGET_MS) : '–',
    ]);
  }
  rows.push([
    `policy impact: ${fmtInt(impact.rows)} recorded calls replayed under two configurations (engine alone beside it: ${fmtInt(impact.engineDecisionsPerSec)} decisions/s)`,
    `${fmt(impact.replaySeconds)} s (${fmt(impact.replayDecisionsPerSec / impact.engineDecisionsPerSec)}x the engine's rate)`,
    `< ${IMPACT_TARGET_SECONDS} s`,
    verdict(impact.replaySeconds < IMPACT_TARGET_SECONDS),
  ]);
  const v = soak.verdict;
  rows.push([
    `RSS of every server process under ${fmt(soak.minutes)} min of denials for new agent names: idle / peak / end (after warm-up: slope over the second half, last minute and highest sample against the first minute after warm-up)`,
    `${fmtInt(soak.startRssMb)} / ${fmtInt(soak.peak.rssMb)} / ${fmtInt(soak.end.rssMb)} MB, ${fmtInt(soak.denials)} denials at ${fmtInt(soak.meanRate)}/s, ${soak.errors} errors (${v.slopeMbPerMin >= 0 ? '+' : ''}${fmt(v.slopeMbPerMin)} MB/min, ${v.growth >= 0 ? '+' : ''}${(100 * v.growth).toFixed(1)}%, highest ${v.peakGrowth >= 0 ? '+' : ''}${(100 * v.peakGrowth).toFixed(1)}%)`,
    `flat: ≤ ${fmt(v.maxSlopeMbPerMin)} MB/min, ≤ +${(100 * v.maxGrowth).toFixed(0)}%, highest ≤ +${(100 * v.maxPeakGrowth).toFixed(0)}%`,
    verdict(v.flat && soak.errors === 0),
  ]);
  return markdownTable(['measure', 'measured', 'target', ''], rows);
}

async function main(): Promise<void> {
  const started = new Date();
  const machineLines = machine();
  const log = (line: string) => console.error(`[${((Date.now() - started.getTime()) / 1000).toFixed(1)}s] ${line}`);
  const engine = await runEngineBench({ log });
  const compare = await runCompareBench({ log });
  const denials = await runDenialsBench({ log });
  const postgres = await runPostgresBench({ log });
  const http = await runHttpBench({ log });
  const report = await runReportBench({ log });
  const freeText = await runFreeTextBench({ log });
  const mcp = await runMcpBench({ log });
  const impact = await runImpactBench({ log });
  const client = await runClientBench({ log });
  // Last, so that its load slows none of the measures before it; ten minutes unless SOAK_MINUTES says (bench/README.md).
  const soak = await runSoakBench(soakOptionsFromEnv({ minutes: SOAK_BENCH_MINUTES, log }));
  const seconds = (Date.now() - started.getTime()) / 1000;
  const loadAtEnd = os.loadavg().map((l) => l.toFixed(2)).join(' / ');

  const sum = summary(engine, denials, compare, http, report, postgres, freeText, soak, mcp, impact);
  const engineText = formatEngineResult(engine);
  const compareText = formatCompareResult(compare);
  const denialsText = formatDenialsResult(denials);
  const httpText = formatHttpResult(http);
  const reportText = formatReportResult(report);
  const postgresText = formatPostgresResult(postgres);
  const freeTextText = formatFreeText(freeText.result, freeText.rows);
  const soakText = formatSoakResult(soak);
  const mcpText = formatMcpResult(mcp);
  const impactText = formatImpactResult(impact);
  console.log(['', sum, '', engineText, '', compareText, '', denialsText, '', postgresText, '', httpText, '', reportText, '', freeTextText, '', mcpText, '', impactText, '', soakText, ''].join('\n'));

  const md = [
    '# Benchmark results',
    '',
    `Run on ${started.toISOString()} with \`npm run bench\` (${seconds.toFixed(0)} s). Numbers from a shared machine are ` +
      'noisy: compare runs on the same machine, and look at the load average below.',
    '',
    '## Machine',
    '',
    ...machineLines,
    `- Load average at the end (1/5/15 min): ${loadAtEnd}`,
    '',
    '## Summary',
    '',
    sum,
    '',
    '## Permission engine (`bench/engine.ts`)',
    '',
    engineText,
    '',
    '## Three engines, one workload (`bench/compare.ts`)',
    '',
    compareText,
    '',
    '## Durable denial writes (`bench/denials.ts`)',
    '',
    denialsText,
    '',
    '## PostgreSQL beside SQLite (`bench/postgres.ts`)',
    '',
    postgresText,
    '',
    '## Check endpoint under load (`bench/http.ts`)',
    '',
    httpText,
    '',
    '## Audit report (`bench/report.ts`)',
    '',
    reportText,
    '',
    '## Free text in the denial explorer, before and after (`bench/denial-queries.ts`)',
    '',
    freeTextText,
    '',
    '## MCP gateway (`bench/mcp.ts`)',
    '',
    mcpText,
    '',
    '## Policy impact by replay (`bench/impact.ts`)',
    '',
    impactText,
    '',
    '## The client package and its adapters (`bench/client.ts`)',
    '',
    formatClientBench(client),
    '',
    SOAK_SECTION,
    '',
    soakText,
    '',
  ].join('\n');
  const out = fileURLToPath(new URL('./RESULTS.md', import.meta.url));
  writeFileSync(out, md);
  log(`wrote ${out}`);
  // The soak judges itself (bench/soak.ts): a curve that is not flat, or a call not answered with a denial, fails the run.
  if (!soak.verdict.flat || soak.errors > 0) process.exitCode = 1;
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
