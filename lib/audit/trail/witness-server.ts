/**
 * A witness server (`swarm audit witness`): run by another team, on another machine, with its own key. A server of the
 * product sends it each checkpoint it signs, with the rows since the last checkpoint this witness saw; the witness
 * recomputes the chain from its last head through those rows, and cosigns the checkpoint only when it extends that head
 * (the C2SP witness model; a hash chain has no compact consistency proof, so the proof is the rows' encodings, masked as
 * they are stored). It keeps what it cosigned in a witness folder (witness.ts), which `swarm audit verify --witness`
 * reads, from the folder or through GET /checkpoints.
 *
 *   POST /add-checkpoint   {"chain", "note", "rows": [[id, encoded, row_hash], ...]}
 *                          200 {"note": <the note with the witness's cosignature>}
 *                          409 {"error": "...", "latest": {"size": N}}   (send the rows after N, or it does not extend)
 *                          400 (malformed), 403 (not signed by a trusted key)
 *   GET  /checkpoints      every checkpoint it cosigned, NDJSON
 *   GET  /latest           the newest of each chain
 */
import { sign } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { CHAIN_NAMES, GENESIS_HASH, chainHash, type ChainName } from './chain';
import { keyId, openCheckpointWithAny, originOf, type ParsedVerifierKey, type SigningKey } from './checkpoints';
import { latestInWitnessDir, recordInWitnessDir, type WitnessedCheckpoint } from './witness';
import { messageOf } from '@/lib/errors';

export interface WitnessServerOptions {
  /** the witness's own key (its name is the signature line's name) */
  key: SigningKey;
  /** the log's keys: only checkpoints they signed are cosigned */
  trusted: readonly ParsedVerifierKey[];
  /** the witness folder it keeps what it cosigned in */
  logDir: string;
}

const MAX_BODY = 64 * 1024 * 1024;

const addCheckpoint = z.object({
  chain: z.enum(CHAIN_NAMES as [ChainName, ...ChainName[]]),
  note: z.string().min(1).max(4096),
  rows: z.array(z.tuple([z.number().int().positive(), z.string(), z.string().regex(/^[0-9a-f]{64}$/)])).max(1_000_000),
});

export type AddCheckpoint = z.infer<typeof addCheckpoint>;

/** Add the witness's signature line to a signed note (over the same text, as C2SP cosignatures are). */
export function cosign(note: string, key: SigningKey): string {
  const split = note.lastIndexOf('\n\n');
  const text = note.slice(0, split + 1);
  const signature = sign(null, Buffer.from(text, 'utf8'), key.privateKey);
  return `${note.endsWith('\n') ? note : `${note}\n`}\u2014 ${key.name} ${Buffer.concat([keyId(key.name, key.raw), signature]).toString('base64')}\n`;
}

type Answer = { status: number; body: unknown };

/** The decision of the witness on one checkpoint (no I/O but its folder): the answer to send. */
export function addToWitness(options: WitnessServerOptions, input: AddCheckpoint): Answer {
  const opened = openCheckpointWithAny(input.note, options.trusted);
  if (!opened.ok) return { status: 403, body: { error: `the checkpoint is not signed by a key this witness trusts (${opened.problem})` } };
  const body = opened.body;
  if (body.origin !== originOf(input.chain, opened.key.name)) return { status: 400, body: { error: `the checkpoint's origin ${body.origin} is not the chain ${input.chain}` } };
  const latest = latestInWitnessDir(options.logDir).get(input.chain);
  const seen = { size: latest?.size ?? 0, headHash: latest?.headHash ?? GENESIS_HASH };
  if (latest && body.size === latest.size) {
    // The same head again: the same cosignature (a retry); another head at the same size is a fork.
    if (body.headHash === latest.headHash) return { status: 200, body: { note: latest.note } };
    return { status: 409, body: { error: `a different head for row ${body.size} than the one this witness cosigned: the trail was rewritten`, latest: { size: latest.size } } };
  }
  if (body.size < seen.size) return { status: 409, body: { error: `row ${body.size} is behind the newest checkpoint this witness cosigned (row ${seen.size}): a rollback`, latest: { size: seen.size } } };
  // The first checkpoint a witness sees is taken as it is (trust on first use); every later one must extend it.
  if (latest) {
    if (input.rows.length === 0 || input.rows[0]![0] !== seen.size + 1) {
      return { status: 409, body: { error: `send the rows after row ${seen.size}, the newest this witness cosigned`, latest: { size: seen.size } } };
    }
    let prev = seen.headHash;
    let expected = seen.size + 1;
    for (const [id, encoded, rowHash] of input.rows) {
      if (id !== expected || chainHash(prev, id, encoded) !== rowHash) {
        return { status: 409, body: { error: `row ${id} does not follow on from the head this witness cosigned at row ${seen.size}: the trail behind it was rewritten`, latest: { size: seen.size } } };
      }
      prev = rowHash;
      expected = id + 1;
      if (id === body.size) break;
    }
    if (expected !== body.size + 1 || prev !== body.headHash) {
      return { status: 409, body: { error: `the rows sent do not end at the checkpoint's head (row ${body.size})`, latest: { size: seen.size } } };
    }
  }
  const note = cosign(input.note, options.key);
  const kept: WitnessedCheckpoint = { chain: input.chain, size: body.size, headHash: body.headHash, time: body.time, note };
  recordInWitnessDir(options.logDir, [kept]);
  return { status: 200, body: { note } };
}

function send(res: ServerResponse, status: number, body: unknown, type = 'application/json'): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The witness's HTTP server (not listening yet). Refusals are also appended to refused.ndjson in its folder. */
export function witnessServer(options: WitnessServerOptions): Server {
  mkdirSync(options.logDir, { recursive: true });
  // One checkpoint at a time: each is decided against the newest the one before it left.
  let queue: Promise<unknown> = Promise.resolve();
  return createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/checkpoints') {
      const log = join(options.logDir, 'checkpoints.ndjson');
      send(res, 200, existsSync(log) ? readFileSync(log, 'utf8') : '', 'application/x-ndjson');
      return;
    }
    if (req.method === 'GET' && path === '/latest') {
      send(res, 200, Object.fromEntries(latestInWitnessDir(options.logDir)));
      return;
    }
    if (path !== '/add-checkpoint') return send(res, 404, { error: 'not found' });
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      return send(res, 405, { error: 'POST a checkpoint' });
    }
    void readBody(req).then((text) => {
      if (text === undefined) return send(res, 413, { error: `the body is over ${MAX_BODY} bytes: send fewer rows at a time` });
      let parsed: AddCheckpoint;
      try {
        const r = addCheckpoint.safeParse(JSON.parse(text));
        if (!r.success) return send(res, 400, { error: 'not a checkpoint', issues: r.error.issues });
        parsed = r.data;
      } catch {
        return send(res, 400, { error: 'the body is not JSON' });
      }
      const run = queue.then(() => addToWitness(options, parsed));
      queue = run.catch(() => undefined);
      void run.then(
        (answer) => {
          if (answer.status !== 200) {
            appendFileSync(join(options.logDir, 'refused.ndjson'), `${JSON.stringify({ at: Date.now() / 1000, chain: parsed.chain, note: parsed.note, ...(answer.body as object) })}\n`);
          }
          send(res, answer.status, answer.body);
        },
        (error: unknown) => send(res, 500, { error: messageOf(error) }),
      );
    });
  });
}
