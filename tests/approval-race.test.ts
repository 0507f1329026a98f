/** Many operators deciding one request at once, each in its own process: exactly one outcome. */
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { deployRequest, tempApp, type TempApp } from '@/lib/test-support/temp-app';

let t: TempApp | undefined;
afterEach(() => {
  t?.cleanup();
  t = undefined;
});

function contender(args: string[], startAt: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', 'tests/fixtures/decide-approval.ts', ...args], { env: { ...process.env, RACE_START_AT: String(startAt) } });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('exit', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`contender failed: ${err}`))));
  });
}

describe('the approval race', () => {
  it('leaves exactly one outcome when six processes approve and reject at once; the losers get a conflict', async () => {
    t = tempApp();
    const { id } = await t.app.approvals.request(deployRequest());
    const startAt = Date.now() + 2500;
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => contender([t!.dbPath, t!.dir, id, i % 2 ? 'reject' : 'approve', `op${i}`], startAt)),
    );
    expect(results.filter((r) => r === 'won')).toHaveLength(1);
    expect(results.filter((r) => r === 'CONFLICT')).toHaveLength(5);
    const row = (await t.app.approvals.get(id))!;
    expect(['approved', 'rejected']).toContain(row.status);
    // A rejection is recorded once, and only if the rejection won.
    expect(await t.app.denials.count({ ruleSource: 'hitl' })).toBe(row.status === 'rejected' ? 1 : 0);
  }, 60_000);

  it('takes exactly two approvals of a two-person request when four operators approve at once', async () => {
    t = tempApp();
    const { id } = await t.app.approvals.request(deployRequest({ approvalsRequired: 2 }));
    const startAt = Date.now() + 2500;
    const results = await Promise.all(Array.from({ length: 4 }, (_, i) => contender([t!.dbPath, t!.dir, id, 'approve', `op${i}`], startAt)));
    expect(results.filter((r) => r === 'won')).toHaveLength(2);
    expect(results.filter((r) => r === 'CONFLICT')).toHaveLength(2);
    expect((await t.app.approvals.get(id))!.status).toBe('approved');
    expect((await t.app.approvals.votesFor([id])).get(id)).toHaveLength(2);
  }, 60_000);
});
