/**
 * Witnesses: where checkpoints are delivered (SWARM_AUDIT_WITNESSES), what a witness folder keeps, and what a witness
 * server cosigns: only a checkpoint of a trusted key whose rows extend the last head it saw.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GENESIS_HASH, chainHash, encodeRow } from './chain';
import { checkpointOf, loadOrCreateSigningKey, openCheckpointWithAny, parseVerifierKey, verifierKey } from './checkpoints';
import { addToWitness } from './witness-server';
import { latestInWitnessDir, readWitnessDir, recordInWitnessDir, witnessTargets, WitnessConfigInvalid } from './witness';

const dir = mkdtempSync(join(tmpdir(), 'swarm-witness-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const logKey = loadOrCreateSigningKey(join(dir, 'log-key'));
const witnessKey = loadOrCreateSigningKey(join(dir, 'witness-key'), 'team-b-witness');
const stranger = loadOrCreateSigningKey(join(dir, 'stranger-key'));
const trusted = [parseVerifierKey(verifierKey(logKey.name, logKey.raw))];

/** A chain of `n` rows: [id, encoded, row_hash] each, as a signer sends them. */
function chain(n: number, salt = ''): [number, string, string][] {
  const rows: [number, string, string][] = [];
  let prev = GENESIS_HASH;
  for (let id = 1; id <= n; id++) {
    const encoded = encodeRow([`reason ${id}${salt}`, id]);
    const hash = chainHash(prev, id, encoded);
    rows.push([id, encoded, hash]);
    prev = hash;
  }
  return rows;
}
const noteAt = (rows: [number, string, string][], size: number, key = logKey) => checkpointOf(key, 'permission_denials', { id: size, hash: rows[size - 1]![2] }).note;

describe('SWARM_AUDIT_WITNESSES', () => {
  it('takes folders and http(s) URLs, comma-separated, and refuses any other scheme', () => {
    expect(witnessTargets({ SWARM_AUDIT_WITNESSES: ' /mnt/worm/witness , https://witness.example/team-b/ ,' })).toEqual({ dirs: ['/mnt/worm/witness'], urls: ['https://witness.example/team-b'] });
    expect(witnessTargets({})).toEqual({ dirs: [], urls: [] });
    expect(() => witnessTargets({ SWARM_AUDIT_WITNESSES: 's3://bucket/witness' })).toThrow(WitnessConfigInvalid);
  });
});

describe('a witness folder', () => {
  it('keeps every checkpoint in order and the newest of each chain', () => {
    const folder = join(dir, 'folder');
    const rows = chain(3);
    const c = (size: number) => ({ chain: 'permission_denials' as const, size, headHash: rows[size - 1]![2], time: 1_795_000_000 + size, note: noteAt(rows, size) });
    recordInWitnessDir(folder, [c(1), c(2)]);
    recordInWitnessDir(folder, [c(3)]);
    expect(readWitnessDir(folder).map((w) => w.size)).toEqual([1, 2, 3]);
    expect(latestInWitnessDir(folder).get('permission_denials')?.size).toBe(3);
    expect(() => readWitnessDir(join(dir, 'nothing-here'))).toThrow(/not a witness folder/);
    // An append cut short by a crash leaves half a last line: what came before stands. A bad line before it is refused.
    appendFileSync(join(folder, 'checkpoints.ndjson'), '{"chain":"permission_denials","si');
    expect(readWitnessDir(folder).map((w) => w.size)).toEqual([1, 2, 3]);
    writeFileSync(join(folder, 'checkpoints.ndjson'), `not json\n${readFileSync(join(folder, 'checkpoints.ndjson'), 'utf8')}`);
    expect(() => readWitnessDir(folder)).toThrow(/checkpoints\.ndjson:1: not JSON/);
  });
});

describe('a witness server', () => {
  const options = () => ({ key: witnessKey, trusted, logDir: mkdtempSync(join(dir, 'log-')) });

  it('cosigns the first checkpoint it sees, then only one whose rows extend it', () => {
    const o = options();
    const rows = chain(5);
    const first = addToWitness(o, { chain: 'permission_denials', note: noteAt(rows, 2), rows: [] });
    expect(first.status).toBe(200);
    const cosigned = (first.body as { note: string }).note;
    // Both signatures verify: the log's and the witness's own.
    expect(openCheckpointWithAny(cosigned, trusted).ok).toBe(true);
    expect(openCheckpointWithAny(cosigned, [parseVerifierKey(verifierKey(witnessKey.name, witnessKey.raw))]).ok).toBe(true);

    // Without the rows since row 2 it asks for them; with them it cosigns.
    const asks = addToWitness(o, { chain: 'permission_denials', note: noteAt(rows, 5), rows: [] });
    expect(asks).toMatchObject({ status: 409, body: { latest: { size: 2 } } });
    expect(addToWitness(o, { chain: 'permission_denials', note: noteAt(rows, 5), rows: rows.slice(2) }).status).toBe(200);
    expect(latestInWitnessDir(o.logDir).get('permission_denials')?.size).toBe(5);
  });

  it('refuses a rewrite behind the head it saw, a rollback, a fork at the same size and a key it does not trust', () => {
    const o = options();
    const rows = chain(4);
    expect(addToWitness(o, { chain: 'permission_denials', note: noteAt(rows, 2), rows: [] }).status).toBe(200);
    // The same trail rewritten from row 2 on (every hash recomputed), then extended: the rows do not follow row 2.
    const rewritten = chain(4, ' (edited)');
    expect(addToWitness(o, { chain: 'permission_denials', note: noteAt(rewritten, 4), rows: rewritten.slice(2) })).toMatchObject({
      status: 409,
      body: { error: expect.stringMatching(/does not follow on from the head this witness cosigned at row 2/) },
    });
    expect(addToWitness(o, { chain: 'permission_denials', note: noteAt(rewritten, 2), rows: [] })).toMatchObject({ status: 409, body: { error: expect.stringMatching(/different head for row 2/) } });
    expect(addToWitness(o, { chain: 'permission_denials', note: noteAt(rows, 4), rows: rows.slice(2) }).status).toBe(200);
    expect(addToWitness(o, { chain: 'permission_denials', note: noteAt(rows, 3), rows: [] })).toMatchObject({ status: 409, body: { error: expect.stringMatching(/a rollback/) } });
    expect(addToWitness(o, { chain: 'permission_denials', note: noteAt(rows, 4, stranger), rows: [] }).status).toBe(403);
    // The same checkpoint again is a retry: the same cosignature.
    expect(addToWitness(o, { chain: 'permission_denials', note: noteAt(rows, 4), rows: [] }).status).toBe(200);
  });
});
