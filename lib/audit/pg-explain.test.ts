/**
 * `swarm audit explain` on PostgreSQL: a SQLite trail copied to a real cluster (ids, rows and revisions unchanged)
 * explains every decision exactly as on SQLite, through the one set of reads (explainReads) and the one re-run.
 */
import { writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { copySqliteToPostgres } from '@/db/pg/copy';
import type { CheckInput } from '@/lib/permissions';
import { tempApp, type TempApp } from '@/lib/test-support/temp-app';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { PostgresDatabase } from '@/db/dialect';
import { explainConfigOf, explainDecision, explainDecisionWith, explainReads } from './explain';

const cluster = usePostgres();
let t: TempApp | undefined;
afterAll(() => t?.cleanup());

const call = (agent: string, tool: string, args: Record<string, unknown> = {}): CheckInput => ({
  kind: 'tool',
  principal: { kind: 'agent', id: agent, role: 'viewer', agent },
  agent,
  tool,
  arguments: args,
});

describe('explain on PostgreSQL', () => {
  it('explains a denial and an allowed decision as on SQLite; an unknown id is not found', async () => {
    t = tempApp({ policy: 'rules:\n  - { id: no-profiling, decision: DENY, match: { tool: profile_dataset } }\n', env: { SWARM_FLAG_DECISION_LOG_ALL: 'true' } });
    const denied = t.app.engine.decide(call('data_cleaner', 'profile_dataset', { dataset_id: 'd' }));
    const allowed = t.app.engine.decide(call('data_cleaner', 'clean_dataset', { dataset_id: 'd' }));
    expect(denied.decision).toBe('DENY');
    expect(allowed.decision).toBe('ALLOW');
    // Today's policy no longer denies: the re-run today differs, the re-run then does not.
    writeFileSync(t.policyPath, 'rules: []\n');
    expect(t.app.policyFile.reload(true)).toBe(true);

    const db = await cluster.freshDatabase('explain');
    const pool = cluster.pool(db);
    await copySqliteToPostgres(t.dbPath, pool, undefined);

    const config = explainConfigOf(t.app);
    const onPg = explainReads(new PostgresDatabase(pool));
    const e = await explainDecisionWith(config, onPg, denied.decisionId!);
    expect(e.recorded).toMatchObject({ table: 'permission_denials', decision: 'DENY', rule_source: 'policy:no-profiling', policy_revision: expect.stringMatching(/^rev_/) });
    expect(e.at_the_time).toMatchObject({ decision: 'DENY', rule_source: 'policy:no-profiling', same: true });
    expect(e.today).toMatchObject({ decision: 'ALLOW', rule_source: 'agent_allowlist', same: false });
    expect(e).toEqual(await explainDecision(t.app, denied.decisionId!));
    expect(e).toEqual(await explainDecisionWith(config, explainReads(t.app.database), denied.decisionId!));

    const a = await explainDecisionWith(config, onPg, allowed.decisionId!);
    expect(a.recorded).toMatchObject({ table: 'security_events', decision: 'ALLOW' });
    expect(a.at_the_time).toMatchObject({ decision: 'ALLOW', same: true });
    expect(a).toEqual(await explainDecision(t.app, allowed.decisionId!));

    for (const reads of [onPg, explainReads(t.app.database)]) {
      await expect(explainDecisionWith(config, reads, '01900000-0000-7000-8000-000000000000')).rejects.toThrow(/No recorded decision has the id/);
    }
  });
});
