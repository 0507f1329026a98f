/**
 * `swarm hook claude-code` deciding in process on PostgreSQL, as it does on SQLite (it used to refuse a postgres://
 * SWARM_DB): the real CLI in a child process with the event on stdin (what Claude Code runs), the denial read back from
 * the database.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { TEST_APPROVAL_KEY } from '@/lib/test-support/temp-app';

const pg15 = usePostgres();
const dir = mkdtempSync(join(tmpdir(), 'swarm-hook-pg-'));
let env: Record<string, string> = {};
let database = '';

beforeAll(async () => {
  database = await pg15.freshDatabase('hook');
  const config = join(dir, 'config');
  cpSync('config', config, { recursive: true });
  writeFileSync(join(config, 'agents.yaml'), 'agents:\n  claude_code:\n    tools: [bash, read]\n');
  writeFileSync(
    join(config, 'permission_policies.yaml'),
    "rules:\n  - id: no-recursive-delete\n    decision: DENY\n    priority: 950\n    reason: Recursive deletes are not run by agents.\n    when: \"args.command.contains('rm -rf')\"\n    match: { tool: bash }\n",
  );
  writeFileSync(join(config, 'policy_tests.yaml'), 'tests: []\n');
  writeFileSync(join(config, 'hooks.yaml'), 'hooks: []\n');
  env = {
    SWARM_DB: pg15.cluster.urlOf(database),
    SWARM_CONFIG_DIR: config,
    SWARM_APPROVAL_KEY: TEST_APPROVAL_KEY,
    SWARM_POLICY_FILE: '',
    SWARM_PROFILE: '',
    SWARM_URL: '',
    SWARM_TOKEN: '',
  };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function hook(stdin: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/swarm.mjs', 'hook', 'claude-code'], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
    child.stdin.end(stdin);
  });
}

describe('swarm hook claude-code on PostgreSQL, in process', () => {
  it('decides and records like on SQLite', async () => {
    const allowed = await hook(readFileSync('tests/fixtures/claude-code/bash-ls.json', 'utf8'));
    expect(allowed.err).toBe('');
    expect(JSON.parse(allowed.out).hookSpecificOutput).toMatchObject({ permissionDecision: 'allow' });

    const denied = await hook(readFileSync('tests/fixtures/claude-code/bash-rm.json', 'utf8'));
    expect(JSON.parse(denied.out).hookSpecificOutput.permissionDecision).toBe('deny');
    const rows = await pg15.pool(database, 1).query<{ rule_source: string; tool_call_id: string }>('SELECT rule_source, tool_call_id FROM permission_denials ORDER BY id');
    expect(rows.rows).toEqual([{ rule_source: 'policy:no-recursive-delete', tool_call_id: 'toolu_01ABCDEF0123456790' }]);
  }, 60_000);
});
