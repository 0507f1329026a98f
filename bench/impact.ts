/**
 * Impact by replay (issue 28): the time to decide 1,000,000 recorded calls again under a proposed configuration and
 * under the one in force (`swarm policy impact`), with the engine's own rate beside it in the same run.
 *
 *   node --import tsx bench/impact.ts               # 1,000,000 recorded calls
 *   node --import tsx bench/impact.ts --rows 200000
 *
 * A temp SQLite file is seeded with denial rows of tool calls over a week (agents, tools and arguments from a seeded
 * PRNG; the hash chain is not computed: the replay does not read it). The replay reads them back in batches
 * (recordedCalls), parses their arguments and decides each twice (impactOf). The reference: the same two engines
 * deciding the same calls from memory, without reading or parsing (the engine's own rate).
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApp } from '@/lib/app';
import { impactOf, recordedCalls, replayConfiguration } from '@/lib/audit/impact';
import { authorize } from '@/lib/permissions';
import { parseAgents } from '@/lib/config/agents';
import { parsePolicy } from '@/lib/permissions/policy';
import type { ToolContext } from '@/lib/permissions';
import { fmt, fmtInt, isMain, markdownTable, nowNs, pick, prng } from './util';

export const IMPACT_TARGET_SECONDS = 30;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const AGENTS = Array.from({ length: 20 }, (_, i) => `agent_${i}`);
const TOOLS = Array.from({ length: 40 }, (_, i) => `tool_${i}`);
const AGENTS_YAML = `agents:\n${AGENTS.map((a, i) => `  ${a}:\n    tools: [${TOOLS.filter((_, j) => (i + j) % 3 === 0).join(', ')}]\n`).join('')}`;
const POLICY = `rules:\n${TOOLS.slice(0, 20).map((t, i) => `  - id: r${i}\n    decision: DENY\n    priority: 950\n    reason: no.\n    when: "args.size > ${i * 5}"\n    match: { tool: ${t} }\n`).join('')}`;
const CANDIDATE_POLICY = `rules:\n${TOOLS.slice(0, 20).map((t, i) => `  - id: r${i}\n    decision: DENY\n    priority: 950\n    reason: no.\n    when: "args.size > ${i * 5 + 3}"\n    match: { tool: ${t} }\n`).join('')}`;

export interface ImpactBenchResult {
  rows: number;
  replaySeconds: number;
  changed: number;
  /** the two engines deciding the same calls from memory: decisions (two per call) per second */
  engineDecisionsPerSec: number;
  replayDecisionsPerSec: number;
}

export async function runImpactBench(options: { rows?: number; log?: (l: string) => void } = {}): Promise<ImpactBenchResult> {
  const rows = options.rows ?? 1_000_000;
  const log = options.log ?? (() => {});
  const dir = mkdtempSync(join(tmpdir(), 'swarm-bench-impact-'));
  cpSync(join(ROOT, 'config'), join(dir, 'config'), { recursive: true });
  writeFileSync(join(dir, 'config', 'agents.yaml'), AGENTS_YAML);
  writeFileSync(join(dir, 'config', 'permission_policies.yaml'), POLICY);
  writeFileSync(join(dir, 'config', 'policy_tests.yaml'), 'tests: []\n');
  const app = createApp({ dbPath: join(dir, 'impact.db'), configDir: join(dir, 'config'), env: {}, profile: '' });
  try {
    log(`impact: seeding ${fmtInt(rows)} recorded calls`);
    const rnd = prng(28);
    const now = Date.now() / 1000;
    const calls: ToolContext[] = [];
    const insert = app.db!.$client.prepare(
      `INSERT INTO permission_denials (tool_name, agent_name, arguments_json, rule_source, reason, user_role, timestamp, principal, decision_id)
       VALUES (?, ?, ?, 'agent_allowlist', 'seeded', 'viewer', ?, ?, ?)`,
    );
    app.db!.$client.transaction(() => {
      for (let i = 0; i < rows; i++) {
        const agent = pick(rnd, AGENTS);
        const tool = pick(rnd, TOOLS);
        const args = { size: Math.floor(rnd() * 100), note: `call ${i}` };
        const ts = now - rnd() * 7 * 86400;
        insert.run(tool, agent, JSON.stringify(args), ts, agent, `seed-${i}`);
        if (i < 200_000) calls.push({ kind: 'tool', principal: { kind: 'agent', id: agent, role: 'viewer', agent }, agent, tool, arguments: args, now: ts * 1000 });
      }
    })();
    const current = app.policyConfig();
    const candidate = { agents: parseAgents(AGENTS_YAML), policy: parsePolicy(CANDIDATE_POLICY), gates: app.gates };
    const flags = app.flags.values();

    log('impact: the engines alone, from memory');
    const a = replayConfiguration(current, flags).snapshot;
    const b = replayConfiguration(candidate, flags).snapshot;
    for (const c of calls.slice(0, 20_000)) (authorize(a, c), authorize(b, c));
    let t = nowNs();
    for (const c of calls) (authorize(a, c), authorize(b, c));
    const engineDecisionsPerSec = (2 * calls.length) / (Number(nowNs() - t) / 1e9);

    log('impact: the replay from the database');
    t = nowNs();
    const report = await impactOf(recordedCalls(app.database, now - 8 * 86400), current, candidate, flags);
    const replaySeconds = Number(nowNs() - t) / 1e9;
    if (report.replayed !== rows) throw new Error(`replayed ${report.replayed} of ${rows} rows`);
    return { rows, replaySeconds, changed: report.changed, engineDecisionsPerSec, replayDecisionsPerSec: (2 * rows) / replaySeconds };
  } finally {
    app.close();
    rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 25 });
  }
}

export function formatImpactResult(r: ImpactBenchResult): string {
  return markdownTable(
    ['measure', 'value'],
    [
      [`replay of ${fmtInt(r.rows)} recorded calls under two configurations (read, parse, decide twice)`, `${fmt(r.replaySeconds)} s (target < ${IMPACT_TARGET_SECONDS} s)`],
      ['calls whose decision or rule changes', fmtInt(r.changed)],
      ['decisions per second in the replay', fmtInt(r.replayDecisionsPerSec)],
      ['decisions per second of the same two engines from memory (reference, same run)', fmtInt(r.engineDecisionsPerSec)],
      ['replay rate / engine rate', `${fmt(r.replayDecisionsPerSec / r.engineDecisionsPerSec)}x`],
    ],
  );
}

if (isMain(import.meta.url)) {
  const i = process.argv.indexOf('--rows');
  const result = await runImpactBench({ rows: i > 0 ? Number(process.argv[i + 1]) : undefined, log: (l) => console.error(l) });
  console.log(formatImpactResult(result));
}
