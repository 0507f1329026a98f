/**
 * The server the end-to-end tests drive: the real production build (`next start`) on a fresh SQLite file, seeded
 * with one user per role. Started by Playwright's webServer (see playwright.config.ts).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createApp } from '@/lib/app';
import { keyDirFor } from '@/lib/audit/trail/checkpoints';
import { signedHeadsFile } from '@/lib/audit/trail/witness';
import { serve } from '@/lib/server/serve';
import { E2E } from '@/e2e/fixtures/accounts';

const db = process.env.SWARM_DB ?? join('data', 'e2e.db');
for (const suffix of ['', '-wal', '-shm']) rmSync(`${db}${suffix}`, { force: true });
// A new installation on purpose: the key folder forgets the heads it signed for the database just removed (the signer
// would otherwise refuse the new, shorter trail as a rollback).
rmSync(signedHeadsFile(keyDirFor(db, process.env), db), { force: true });

const env = { ...process.env, SWARM_DB: db };
const app = createApp({ dbPath: db, env });
await app.bootstrap();
for (const u of E2E.users) if (u.username !== 'admin') await app.auth.createUser(u.username, u.role, u.password);
await app.auth.ensureToken(E2E.deployerToken, { agent: 'deployer' }, 'e2e deployer agent');

// ---------------------------------------------------------------------------------------------------------------
// Denial explorer seed (e2e/denials.spec.ts): a history of denials over the three weeks before yesterday, recorded
// with their own timestamps (the API records everything "now"), so that time windows and the chart have something
// to show. All of it is older than a day; report_bot appears only here. Deterministic: the same rows every run.
// ---------------------------------------------------------------------------------------------------------------
{
  let seed = 7;
  const rnd = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
  const pick = <T,>(items: readonly T[]): T => items[Math.floor(rnd() * items.length)] as T;
  const now = Date.now() / 1000;
  const kinds = [
    { agent: 'data_cleaner', tool: 'deploy_serving', rule: 'agent_allowlist', reason: 'Tool "deploy_serving" is not in the allowlist of agent "data_cleaner".', args: () => ({ model_id: `m-${100 + Math.floor(rnd() * 900)}`, env: pick(['staging', 'prod']) }) },
    { agent: 'trainer', tool: 'tune_hyperparameters', rule: 'policy:bfsi/tuning-capacity-review', reason: 'Hyperparameter searches of 500 or more trials need a capacity review first.', args: () => ({ model_id: `m-${100 + Math.floor(rnd() * 900)}`, trials: pick([500, 1000]) }) },
    { agent: 'evaluator', tool: 'grade_with_llm', rule: 'flag:evaluator_grading', reason: 'Feature flag "evaluator_grading" is off, so tool "grade_with_llm" is disabled.', args: () => ({ model_id: `m-${100 + Math.floor(rnd() * 900)}`, api_key: '[REDACTED]' }) },
    { agent: 'compliance_agent', tool: 'export_raw_data', rule: 'policy:bfsi/no-pii-export', reason: 'Exports that contain personal data are never allowed (GDPR art. 5).', args: () => ({ dataset_id: pick(['ds_loans_2024', 'ds_claims_2025']), destination: 's3://exports/q3.parquet', contains_pii: true }) },
    { agent: 'report_bot', tool: 'generate_report', rule: 'agent_allowlist', reason: 'Unknown agent "report_bot": it is not declared in config/agents.yaml.', args: () => ({ period: pick(['2025-Q2', '2025-Q3']) }) },
  ] as const;
  // Recorded in time order, as the recorder writes them: newest first is also the order of ids.
  const rows: Parameters<typeof app.recorder.appendDenial>[0][] = [];
  for (let i = 0; i < 240; i++) {
    const k = pick(kinds);
    rows.push({
      toolName: k.tool,
      agentName: k.agent,
      argumentsJson: JSON.stringify(k.args()),
      ruleSource: k.rule,
      reason: k.reason,
      userRole: 'viewer',
      principal: k.agent,
      toolCallId: `tc_seed_${i}`,
      traceJson: JSON.stringify([['DENY', k.rule.startsWith('policy') ? 500 : k.rule.startsWith('flag') ? 800 : 900, k.rule, k.reason]]),
      timestamp: now - 86400 * (1.2 + rnd() * 20),
    });
  }
  for (let i = 0; i < 30; i++) {
    rows.push({ toolName: 'http', ruleSource: 'rbac:auditor', reason: 'Role "viewer" is below the role "auditor" this endpoint requires.', userRole: 'viewer', httpMethod: 'GET', httpPath: '/api/v1/permissions/denials', principal: 'victor', timestamp: now - 86400 * (1.5 + rnd() * 18) });
  }
  for (const r of rows.sort((a, b) => (a.timestamp ?? 0) - (b.timestamp ?? 0))) app.recorder.appendDenial(r);
}

// The seed goes under a signed checkpoint, as everything a server writes does (verification fails on old rows outside one).
app.checkpointAudit();
app.close();

// The product's server, as `npm start` runs it: the decision listener on the port, Next.js behind it on loopback.
// The listener decides with an application of its own on the same database, as a long-lived server does.
const front = createApp({ dbPath: db, env, watchConfig: true, backgroundCheckpoints: true, enforcePolicyTests: true });
// Under a profile with change control the listener decides with the active revision, as every process of a server does.
await front.startChangeControl();
const serving = await serve({ app: front, port: E2E.port, env });
const stop = () =>
  void serving.close().then(() => {
    front.close();
    process.exit(0);
  });
for (const s of ['SIGINT', 'SIGTERM'] as const) process.on(s, stop);
serving.next.on('exit', (code) => {
  front.close();
  process.exit(code ?? 0);
});
