/**
 * MCP tool pins under policy change control (issue 42), on both databases, with two applications on one database
 * standing for two servers (the bfsi profile: two admins other than the proposer approve a change to the rules). The
 * pins are part of the revision: a pin accepted is a new revision that explain can tell, and under change control an
 * operator's acceptance is a proposal, put in force on every server only once it is approved.
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { openApp, type App } from '@/lib/app';
import { explainDecision } from '@/lib/audit/explain';
import type { CheckInput } from '@/lib/permissions';
import { TEST_APPROVAL_KEY } from '@/lib/test-support/temp-app';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { within } from '@/lib/test-support/wait';
import { acceptToolDefinition } from './accept';
import { definitionOf } from './definition';

const pg15 = usePostgres();
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const V1 = { name: 'write_file', description: 'Writes a file. Asks a person first.', inputSchema: { type: 'object' as const }, annotations: { destructiveHint: true } };
const V2 = { ...V1, description: 'Writes a file.', annotations: { destructiveHint: false } };
const tool = (t: typeof V1) => ({ name: t.name, ...definitionOf(t) });
const call = (sha256: string): CheckInput => ({
  kind: 'tool',
  principal: { kind: 'agent', id: 'desk', role: 'viewer', agent: 'desk' },
  agent: 'desk',
  tool: 'files__write_file',
  arguments: { path: 'a.txt' },
  mcp: { server: 'files', tool: 'write_file', sha256 },
});

async function twoServers(kind: 'SQLite' | 'PostgreSQL'): Promise<{ a: App; b: App }> {
  const dir = mkdtempSync(join(tmpdir(), 'swarm-pins-cc-'));
  writeFileSync(join(dir, 'agents.yaml'), 'agents:\n  desk:\n    tools: [files__write_file]\n');
  writeFileSync(join(dir, 'permission_policies.yaml'), 'rules: []\n');
  writeFileSync(join(dir, 'policy_tests.yaml'), 'tests: []\n');
  cpSync('config/profiles', join(dir, 'profiles'), { recursive: true });
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const dbPath = kind === 'SQLite' ? join(dir, 'cc.db') : pg15.cluster.urlOf(await pg15.freshDatabase('pinscc'));
  const open = async () => {
    const app = await openApp({ dbPath, configDir: dir, env: { SWARM_APPROVAL_KEY: TEST_APPROVAL_KEY, SWARM_PROFILE: 'bfsi' }, profile: 'bfsi', watchConfig: true });
    cleanups.push(() => app.close());
    return app;
  };
  return { a: await open(), b: await open() };
}

describe.each(['SQLite', 'PostgreSQL'] as const)('MCP pins under change control on %s', (kind) => {
  it('makes an acceptance a proposal; once two admins approve it, the pin is in force on both servers, as a new revision explain tells', async () => {
    const { a, b } = await twoServers(kind);
    // A first sight pins as it is (the profile does not hold new tools); then the upstream changes the tool.
    await a.mcpPins.observe('files', [tool(V1)]);
    const v1 = tool(V1).sha256;
    const v2 = tool(V2).sha256;
    expect(a.contentOfRevision(a.currentRevision())?.mcp_pins).toEqual({ files: { write_file: v1 } });
    expect((await a.mcpPins.observe('files', [tool(V2)]))[0]).toMatchObject({ state: 'held' });
    const refused = await a.decisions.decide(call(v2));
    expect(refused).toMatchObject({ decision: 'DENY', ruleSource: 'mcp_pin' });
    const revisionBefore = a.currentRevision();

    const r = await acceptToolDefinition(a, { server: 'files', tool: 'write_file', sha256: v2, reason: 'reviewed the new description' }, { id: 'olivia', role: 'operator' });
    expect(r.status).toBe('proposed');
    if (r.status !== 'proposed') return;
    // Not in force yet: the tool stays held, nothing was accepted.
    expect(a.mcpPins.isPinned('files', 'write_file', v1)).toBe(true);
    expect((await a.decisions.authorize(call(v2))).ruleSource).toBe('mcp_pin');
    const detail = await a.changeControl.detail(r.proposal.id);
    // (against the active revision, the seed: a first sight pins outside proposals, so it held no pin yet)
    expect(detail.files).toEqual([{ key: 'mcp_pins', name: 'MCP tool pins', before: null, after: `files/write_file ${v2}\n` }]);
    expect((await a.mcpPins.store.listing()).held).toHaveLength(1);

    await a.changeControl.vote(r.proposal.id, { id: 'bob', role: 'admin' }, 'approve', 'the diff is harmless');
    expect(a.mcpPins.isPinned('files', 'write_file', v1)).toBe(true);
    const voted = await a.changeControl.vote(r.proposal.id, { id: 'carol', role: 'admin' }, 'approve', 'agreed');
    expect(voted.activation).toBeGreaterThan(0);
    expect(a.mcpPins.isPinned('files', 'write_file', v2)).toBe(true);
    await within(5_000, async () => {
      await b.changeControl.sync();
      return b.mcpPins.isPinned('files', 'write_file', v2);
    });
    expect((await b.decisions.authorize(call(v2))).decision).not.toBe('DENY');
    const accepted = await a.database.all<{ actor: string; detailJson: string }>(sql`SELECT actor, detail_json AS "detailJson" FROM security_events WHERE type = 'mcp.tool.accepted'`);
    expect(accepted).toHaveLength(1);
    expect(accepted[0]!.actor).toBe('carol');
    expect(JSON.parse(accepted[0]!.detailJson)).toMatchObject({ sha256: v2, previous_sha256: v1, accepted_via: `proposal:${r.proposal.id}` });

    // A new revision: its content holds the new pin, and explain of the earlier denial says which pin was in force then.
    expect(a.currentRevision()).not.toBe(revisionBefore);
    expect(a.contentOfRevision(a.currentRevision())?.mcp_pins).toEqual({ files: { write_file: v2 } });
    const explained = await explainDecision(a, refused.decisionId!);
    expect(explained.recorded).toMatchObject({ rule_source: 'mcp_pin', policy_revision: revisionBefore });
    expect(explained.notes.join(' ')).toContain(`Pinned in the revision it was made under: ${v1.slice(0, 12)}…. Pinned today: ${v2.slice(0, 12)}….`);
  }, 60_000);
});
