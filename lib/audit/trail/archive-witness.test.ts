/**
 * An archive past a witnessed checkpoint (issue 39, item 8): when no witness holds a checkpoint at or after an archive's
 * last row, only the archive's bundle shows that the archive's head extends the witnessed checkpoints it covers. Here
 * the real archive of a real trail: the genuine bundle shows it, no bundle or an altered one does not.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { step } from '@/db/dialect';
import type { CheckInput } from '@/lib/permissions';
import { tempApp, type TempApp } from '@/lib/test-support/temp-app';
import { archiveBefore, archivedEvent, bundleHashesAt, type ArchiveBundle } from './archive';
import { rowHash, CHAIN_COLUMNS } from './chain';
import { keyDirFor, loadOrCreateSigningKey, openCheckpoint, parseVerifierKey, trustedVerifierKeys } from './checkpoints';
import { verifyAudit, type VerifyOptions } from './verify';
import type { WitnessedCheckpoint } from './witness';

let t: TempApp;
let verifier: string;
let bundle: ArchiveBundle;
let witnessed: WitnessedCheckpoint;

const deny = (i: number): CheckInput => ({
  kind: 'tool',
  principal: { kind: 'agent', id: 'data_cleaner', role: 'viewer', agent: 'data_cleaner' },
  agent: 'data_cleaner',
  tool: 'deploy_serving',
  arguments: { model_id: `m-${i}`, env: 'prod' },
});

beforeAll(async () => {
  t = tempApp();
  for (let i = 0; i < 12; i++) t.app.engine.decide(deny(i));
  t.app.checkpointAudit();
  // What a witness keeps of the denials: the checkpoint of row 12.
  verifier = trustedVerifierKeys(keyDirFor(t.dbPath, {}), {})!;
  const note = t.app.auditCheckpoints().find((c) => c.chain === 'permission_denials')!.note;
  const opened = openCheckpoint(note, parseVerifierKey(verifier));
  if (!opened.ok) throw new Error(opened.problem);
  witnessed = { chain: 'permission_denials', size: opened.body.size, headHash: opened.body.headHash, time: opened.body.time, note };
  // Three more rows, then every row archived: the archive (up to row 15) reaches past what the witness saw.
  for (let i = 12; i < 15; i++) t.app.engine.decide(deny(i));
  const key = loadOrCreateSigningKey(keyDirFor(t.dbPath, {}));
  const file = join(t.dir, 'archive.ndjson');
  await archiveBefore(t.app.database, key, Date.now() / 1000 + 60, file, (res, tx) => step(t.app.recorder.recordWithin(tx, archivedEvent(res, 'cli:test'))));
  bundle = { file, text: readFileSync(file, 'utf8') };
});
afterAll(() => t.cleanup());

function verify(options: VerifyOptions) {
  const ro = new Database(t.dbPath, { readonly: true });
  try {
    return verifyAudit(ro, verifier, { witnessed: [witnessed], ...options });
  } finally {
    ro.close();
  }
}

describe('an archive past every witnessed checkpoint', () => {
  it('is shown to extend the witnessed checkpoint by its bundle, and only by it', () => {
    expect(witnessed.size).toBe(12);
    expect(verify({ archiveBundles: [bundle] })).toMatchObject({ ok: true });
    const alone = verify({});
    expect(alone.ok).toBe(false);
    expect(alone.failures).toEqual([
      expect.objectContaining({
        table: 'audit_archives',
        problem: 'archive not shown to extend a witnessed checkpoint',
        message: expect.stringMatching(/\(permission_denials up to row 15\) covers the checkpoint of row 12 witnessed at .*, and no bundle was given: .* Give its bundle with --archive .*archive\.ndjson$/),
      }),
    ]);
    expect(alone.chains.find((c) => c.chain === 'permission_denials')!.witnessed).toEqual({ checked: 1, newest: 12, notExtended: 1 });
  });

  it('is not shown by a bundle whose rows were rewritten behind the witnessed head, nor by one cut short', () => {
    // Row 5 changed and every hash after it recomputed: the bundle is consistent, and ends at another head.
    const lines = bundle.text.split('\n');
    let prev = '';
    const rewritten = lines
      .map((line) => {
        const item = line ? (JSON.parse(line) as { kind: string; chain?: string; row?: Record<string, unknown> & { id: number } }) : undefined;
        if (item?.kind !== 'row' || item.chain !== 'permission_denials' || item.row!.id < 5) {
          if (item?.kind === 'row' && item.chain === 'permission_denials') prev = item.row!.row_hash as string;
          return line;
        }
        const row = item.row!;
        if (row.id === 5) row.reason = 'nothing to see here';
        row.prev_hash = prev;
        row.row_hash = prev = rowHash(prev, row.id, CHAIN_COLUMNS.permission_denials.map((c) => row[c] ?? null));
        return JSON.stringify(item);
      })
      .join('\n');
    const hashes = bundleHashesAt([{ file: 'rewritten', text: rewritten }], 'permission_denials', 15, [12, 15]);
    expect(hashes.get(12)).not.toBe(witnessed.headHash);
    expect(verify({ archiveBundles: [{ file: 'rewritten', text: rewritten }] }).failures).toEqual([
      expect.objectContaining({ table: 'audit_archives', problem: 'archive does not match', message: expect.stringContaining("names another head for row 15 than its bundle's rows") }),
    ]);
    // Rows 13–15 taken out: no run of rows reaches the archive's head.
    const cut = lines.filter((l) => !/"kind":"row","chain":"permission_denials","row":\{"id":1[345],/.test(l)).join('\n');
    expect(verify({ archiveBundles: [{ file: 'cut', text: cut }] }).failures).toEqual([
      expect.objectContaining({ problem: 'archive not shown to extend a witnessed checkpoint', message: expect.stringContaining('the bundles given (cut) do not hold rows 13–15 of it') }),
    ]);
  });
});
