/**
 * swarm audit verify|checkpoint|key|explain|archive|events: the evidence trail for auditors.
 *   verify [--db FILE] [--public-key FILE] [--witness DIR|URL]... [--from DATE] [--to DATE] [--bundle FILE] [--json]
 *                              exit 0 intact, 1 naming the first bad row; the range requested and found
 *   checkpoint [--db FILE|URL] sign the current chain heads (when they moved) and print the latest checkpoints
 *   key [--db FILE|URL]        print the public verifier key, to keep somewhere else
 *   explain DECISION_ID [--db FILE|URL]   re-run a recorded decision under its revision and under today's configuration
 *   archive --before DATE -o FILE [--db FILE|URL]   move older rows into a signed, verifiable bundle, then remove them
 * On PostgreSQL (--db postgres://…, or SWARM_DB) the signing key is in SWARM_AUDIT_KEY_DIR: a URL has no folder to
 * keep it beside, and the command refuses rather than make a key nobody keeps.
 *   events [--since S] [--type T] [--actor A] [--outcome O] [--limit N] [--json]
 *   report --from DATE --to DATE [--profile NAME] [--format pdf|oscal] -o FILE
 *                              the audit report of a period (PDF or OSCAL assessment results), recorded as a security event
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { archiveBefore, archivedEvent, verifyBundle, type ArchiveBundle } from '@/lib/audit/trail/archive';
import { hasSigningKey, KeyDirRequired, keyDirFor, loadOrCreateSigningKey, loadSigningKey, parseVerifierKeys, trustedVerifierKeys, SigningKeyMissing, verifierKey, type SigningKey } from '@/lib/audit/trail/checkpoints';
import { explainDecision, type Explanation } from '@/lib/audit/explain';
import { PostgresDatabase, step } from '@/db/dialect';
import { eventToJson } from '@/lib/audit/security-events';
import { verifyTrail, type VerifyOptions, type VerifyRange, type VerifyReport } from '@/lib/audit/trail/verify';
import { readWitness, signedSizes, type WitnessedCheckpoint } from '@/lib/audit/trail/witness';
import { witnessServer } from '@/lib/audit/trail/witness-server';
import { verifySqliteFile } from '@/lib/server/sqlite';
import { controlCounts, coverageNotes } from '@/lib/reports/evidence';
import { generateReport } from '@/lib/reports/generate';
import { describePeriod, reportOptionsSchema } from '@/lib/reports/period';
import { expectPositionals, givenValues, parseCommand, parseOptions, requireOption, runSubcommand, validate, valueOptions } from '@/cli/args';
import { cliActor, dbLocation, withAnyApp, type CliContext } from '@/cli/context';
import { DatabaseUnavailable, openPool } from '@/db/pg/client';
import { locationTarget, type DbLocation } from '@/db/location';
import { CliError, UsageError } from '@/cli/errors';
import { cell, clean, isoTime, plural, printJson, printTable } from '@/cli/format';
import { messageOf, isError } from '@/lib/errors';

export function auditCommand(ctx: CliContext, sub: string | undefined, args: string[]): number | Promise<number> {
  return runSubcommand<number | Promise<number>>(ctx, 'audit', sub, args, { verify, checkpoint, key, explain, archive, events, report, witness });
}

/**
 * `swarm audit witness --key-dir DIR --log DIR --trust FILE [--port N] [--host H] [--name NAME]`: a witness server for
 * another team to run (lib/audit/trail/witness-server.ts), until SIGINT or SIGTERM. Its key is made in --key-dir on first use.
 */
async function witness(ctx: CliContext, args: string[]): Promise<number> {
  const values = parseOptions(args, valueOptions('key-dir', 'log', 'trust', 'port', 'host', 'name'));
  const keyDir = resolve(requireOption(values['key-dir'], '--key-dir', "the folder of the witness's own key (made there on first use)"));
  const logDir = resolve(requireOption(values.log, '--log', 'the folder the witness keeps what it cosigned in'));
  const trustFile = requireOption(values.trust, '--trust', "the installation's verifier keys, as swarm audit key prints them");
  const port = Number(values.port ?? 8700);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be a port number, not "${values.port}".`);
  const name = values.name ?? 'swarm-witness';
  if (!/^[^+\s]+$/.test(name)) throw new UsageError(`--name must be one word without "+", not "${name}".`);
  let trusted;
  try {
    trusted = parseVerifierKeys(readKeyFile(trustFile));
  } catch (error) {
    throw new CliError(`--trust ${trustFile}: ${messageOf(error)}`);
  }
  const key = loadOrCreateSigningKey(keyDir, name);
  const server = witnessServer({ key, trusted, logDir });
  const host = values.host ?? '127.0.0.1';
  await new Promise<void>((ok, fail) => server.once('error', fail).listen(port, host, ok));
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  ctx.io.out(`Witness listening on http://${host}:${bound} (its key: ${verifierKey(key.name, key.raw)}); cosigned checkpoints in ${logDir}\n`);
  await new Promise<void>((done) => {
    const stop = () => server.close(() => done());
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return 0;
}

function readKeyFile(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    throw new CliError(`cannot read the public key file ${file}.`);
  }
}

/** What the signed checkpoints of a chain cover, in words. */
function coverageLine(c: VerifyReport['chains'][number]): string {
  const covered = c.coveredUpTo === null ? 'no row is under a signed checkpoint' : `rows up to ${c.coveredUpTo} are under a signed checkpoint`;
  if (!c.uncovered) return `coverage: ${covered}${c.coveredUpTo === null ? '' : ' (every row)'}`;
  const age = c.uncovered.ageSeconds === null ? 'of unknown age' : `the oldest written ${Math.round(c.uncovered.ageSeconds)} s ago`;
  return `coverage: ${covered}; ${plural(c.uncovered.rows, 'row')} from row ${c.uncovered.firstId} not yet (${age})`;
}

/** The lines of a verification report, as CloudTrail's validate-logs prints them. */
export function formatVerifyReport(r: VerifyReport, range: VerifyRange = {}): string {
  const lines: string[] = [];
  if (range.from !== undefined || range.to !== undefined) {
    const found = r.chains.map((c) => `${c.chain} ${plural(c.inRange.rows, 'row')}${c.inRange.firstId !== null ? ` (${c.inRange.firstId}–${c.inRange.lastId})` : ''}`).join(', ');
    lines.push(`Requested: ${range.from === undefined ? 'the beginning' : isoTime(range.from)} to ${range.to === undefined ? 'now' : isoTime(range.to)}; found ${found}. The whole chain is verified either way.`);
  }
  for (const c of r.chains) {
    const range =
      c.firstTimestamp === null ? 'no chained rows' : `rows ${c.lastId !== null && c.firstId !== null ? `${c.firstId}–${c.lastId}` : ''} from ${isoTime(c.firstTimestamp)} to ${isoTime(c.lastTimestamp)}`;
    lines.push(
      `${c.chain}: ${plural(c.rowsChecked, 'row')} checked (${range}), ${c.checkpointsValid}/${plural(c.checkpoints, 'checkpoint')} valid` +
        `${c.legacyRows ? `, ${c.legacyRows} earlier rows written before the chain began` : ''}${c.archivedUpTo !== null ? `, rows up to ${c.archivedUpTo} archived` : ''}` +
        `${c.headHash ? `; head ${c.headHash.slice(0, 16)}…` : ''}`,
    );
    lines.push(`  ${coverageLine(c)}`);
    if (c.witnessed.checked > 0) {
      // Said only when it is so: a witnessed head the trail is not shown to extend is a FAILED line below.
      const broken = c.witnessed.notExtended;
      lines.push(
        `  witnessed: ${plural(c.witnessed.checked, 'checkpoint')} checked, the newest at row ${c.witnessed.newest}: ${broken === 0 ? 'the trail extends every one' : `the trail is not shown to extend ${broken} of them (below)`}`,
      );
    }
  }
  if (r.ok) lines.push('Intact: every row matches its hash chain and every checkpoint.');
  for (const f of r.failures) lines.push(`FAILED ${f.table} at ${f.table === 'audit_checkpoints' ? 'checkpoint' : 'row'} ${f.id}: ${f.problem}: ${f.message}`);
  return `${lines.join('\n')}\n`;
}

async function verify(ctx: CliContext, args: string[]): Promise<number> {
  const values = parseOptions(args, {
    ...valueOptions('db', 'public-key', 'bundle', 'from', 'to'),
    json: { type: 'boolean' },
    witness: { type: 'string', multiple: true },
    archive: { type: 'string', multiple: true },
  });
  const date = (v: string | undefined, name: string) => {
    if (v === undefined) return undefined;
    const t = Date.parse(v);
    if (Number.isNaN(t)) throw new UsageError(`${name} must be an ISO date (2026-01-31 or 2026-01-31T12:00:00Z), not "${v}".`);
    return t / 1000;
  };
  const where = dbLocation(ctx.env, values.db);
  // The key ring: --public-key, else the trusted keys: pinned in SWARM_AUDIT_PUBLIC_KEYS, and the key folder's own key.
  // The key folder is the installation's (SWARM_AUDIT_KEY_DIR, or beside the database SWARM_DB names): never a key
  // found beside a file given with --db, which whoever handed over the file could have put there with it.
  const ownFolder = ctx.env.SWARM_AUDIT_KEY_DIR || (where.kind === 'sqlite' && !values.db) ? keyDirFor(locationTarget(where), ctx.env) : undefined;
  const localKeys = () => trustedVerifierKeys(ownFolder, ctx.env);
  // What the installation's key folder remembers signing: rows up to there have hashes, whatever the database says.
  const signedUpTo = ownFolder ? signedSizes(ownFolder, locationTarget(where)) : undefined;
  const range: VerifyOptions = {
    from: date(values.from, '--from'),
    to: date(values.to, '--to'),
    witnessed: await witnessedCheckpoints(values.witness ?? []),
    archiveBundles: (values.archive ?? []).map(readArchiveBundle),
    ...(signedUpTo ? { signedUpTo } : {}),
  };
  const keyText = values['public-key'] ? readKeyFile(values['public-key']) : localKeys();
  // A bundle is checked on its own, whatever database SWARM_DB names.
  if (values.bundle) {
    if (!keyText) throw new CliError('give --public-key FILE: a bundle is checked against the key that signed it.');
    const r = verifyBundle(readFileSync(values.bundle, 'utf8'), keyText);
    if (values.json) return printJson(ctx.io, r, r.ok ? 0 : 1);
    ctx.io.out(r.ok ? `Bundle intact: ${Object.entries(r.rows).map(([c, n]) => `${c} ${n} rows`).join(', ')}.\n` : `FAILED: ${r.problem}\n`);
    return r.ok ? 0 : 1;
  }
  const report = where.kind === 'postgres' ? await verifyPostgres(where.url, keyText, range) : await verifySqlite(where.path, keyText, range);
  if (!values.db) {
    // Verifying the live trail is itself a security event, on either database.
    await withAnyApp(ctx, async (app) => {
      await app.recorder.record({
        kind: 'audit',
        type: 'audit.verified',
        actor: cliActor(ctx.env),
        outcome: report.ok ? 'succeeded' : 'failed',
        detail: { failures: report.failures, chains: report.chains.map((c) => ({ chain: c.chain, rows: c.rowsChecked, head: c.headHash })) },
      });
    });
  }
  ctx.io.out(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatVerifyReport(report, range));
  return report.ok ? 0 : 1;
}

/** The chains of a SQLite file as it is: no migrations, no writes, triggers or not; long chains on every core. */
async function verifySqlite(file: string, keyText: string | undefined, range: VerifyOptions): Promise<VerifyReport> {
  if (!existsSync(file)) throw new CliError(`there is no database at ${file}.`);
  const { threads: _threads, ...report } = await verifySqliteFile(file, keyText, range);
  return report;
}

/** An archive bundle given with --archive; one that cannot be read is an error. */
function readArchiveBundle(file: string): ArchiveBundle {
  try {
    return { file, text: readFileSync(file, 'utf8') };
  } catch (error) {
    throw new CliError(`the archive bundle ${file} cannot be read: ${messageOf(error)}`);
  }
}

/** The checkpoints every --witness holds (a folder or a witness server's URL); one that cannot be read is an error. */
async function witnessedCheckpoints(witnesses: readonly string[]): Promise<WitnessedCheckpoint[]> {
  const out: WitnessedCheckpoint[] = [];
  for (const w of witnesses) {
    try {
      out.push(...(await readWitness(w)));
    } catch (error) {
      throw new CliError(`the witness ${w} cannot be read: ${messageOf(error)}`);
    }
  }
  return out;
}

/** The chains of a PostgreSQL database as they are (no migrations, no writes): the same checks. */
async function verifyPostgres(url: string, keyText: string | undefined, range: VerifyOptions): Promise<VerifyReport> {
  const pool = openPool({ url, max: 1, statementTimeoutMs: 600_000 });
  try {
    return await verifyTrail(new PostgresDatabase(pool), keyText, range);
  } catch (error) {
    throw new CliError(isError(error, DatabaseUnavailable) ? error.message : `the chains could not be read: ${messageOf(error)}`);
  } finally {
    await pool.end();
  }
}

/** The context of a command on the database --db names (a SQLite file or a PostgreSQL URL), else SWARM_DB's. */
function onDb(ctx: CliContext, db: string | undefined): CliContext {
  return db === undefined ? ctx : { ...ctx, env: { ...ctx.env, SWARM_DB: db } };
}

/**
 * The installation's signing key for this database; on PostgreSQL only from SWARM_AUDIT_KEY_DIR (refused otherwise),
 * and only a key that is there: a folder without one (a typo, a key not installed yet) is refused rather than given a
 * second key nobody keeps, unless `create` (swarm audit key, the step that makes it).
 */
function signingKey(ctx: CliContext, location: DbLocation, create = false): SigningKey {
  try {
    const dir = keyDirFor(locationTarget(location), ctx.env);
    if (location.kind === 'postgres' && !create) return loadSigningKey(dir);
    const existed = hasSigningKey(dir);
    const key = loadOrCreateSigningKey(dir);
    if (!existed && location.kind === 'postgres') ctx.io.err(`Created a new audit signing key pair in ${dir}: install this folder on every server (docs/deployment.md).\n`);
    return key;
  } catch (error) {
    if (isError(error, KeyDirRequired) || isError(error, SigningKeyMissing)) throw new CliError(error.message);
    throw error;
  }
}

function checkpoint(ctx: CliContext, args: string[]): Promise<number> {
  const values = parseOptions(args, { db: { type: 'string' } });
  // No key folder, or no key in it (PostgreSQL): refused here with the reason, before the database is opened.
  signingKey(ctx, dbLocation(ctx.env, values.db));
  return withAnyApp(onDb(ctx, values.db), async (app) => {
    await app.checkpointAudit();
    const latest = await app.auditCheckpoints();
    if (latest.length === 0) ctx.io.out('No checkpoint yet: the audit trail is empty.\n');
    else ctx.io.out('Keep these somewhere else (deleting the newest rows is detectable only against a head kept off this machine):\n\n');
    for (const c of latest) ctx.io.out(`${c.note}\n`);
    return 0;
  });
}

function key(ctx: CliContext, args: string[]): number {
  const values = parseOptions(args, { db: { type: 'string' } });
  const location = dbLocation(ctx.env, values.db);
  const k = signingKey(ctx, location, true);
  ctx.io.out(`${verifierKey(k.name, k.raw)}\n`);
  return 0;
}

/** Exit 1 when the kept revision was changed in the database: the evidence of that decision cannot be replayed. */
function printExplanation(ctx: CliContext, e: Explanation, json: boolean): number {
  const code = e.revision_intact === false ? 1 : 0;
  if (json) return printJson(ctx.io, e, code);
  const what = e.input.kind === 'tool' ? `agent ${e.input.agent} calling ${e.input.tool}` : `${e.input.method} ${e.input.path}`;
  ctx.io.out(`Decision ${e.decision_id}: ${what}, by ${e.input.principal ?? 'unknown'} (${e.input.role ?? 'no role'}), at ${isoTime(e.recorded.timestamp)}\n`);
  ctx.io.out(`Recorded:        ${e.recorded.decision} ${e.recorded.rule_source} (${cell(e.recorded.reason, 120)})\n`);
  ctx.io.out(`Policy revision: ${e.recorded.policy_revision ?? 'not recorded'}${e.revision_intact === false ? ' (CHANGED in the database: its content no longer hashes to its id)' : ''}\n`);
  if (e.introduced_by) {
    const o = e.introduced_by;
    ctx.io.out(
      o.proposal_id
        ? `Introduced by:   proposal ${o.proposal_id} (${clean(o.proposed_by ?? '')}: ${clean(o.message ?? '')}), activated ${new Date(o.activated_at * 1000).toISOString()}${o.kind === 'emergency' ? ' as an emergency rollback' : ''}\n`
        : `Introduced by:   the files seeded at the first start under change control (${new Date(o.activated_at * 1000).toISOString()})\n`,
    );
  }
  if (e.at_the_time) {
    ctx.io.out(`Re-run then:     ${e.at_the_time.decision} ${e.at_the_time.rule_source}: ${e.at_the_time.same ? 'the same as recorded' : 'DIFFERENT from the record'}\n`);
  }
  ctx.io.out(`Re-run today:    ${e.today.decision} ${e.today.rule_source}: ${e.today.same ? 'today\'s policy decides the same' : 'today\'s policy decides differently'}\n`);
  for (const n of e.notes) ctx.io.out(`note: ${n}\n`);
  return code;
}

function explain(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, { json: { type: 'boolean' }, db: { type: 'string' } });
  const [id] = expectPositionals(positionals, ['DECISION_ID']);
  if (!/^[0-9a-f-]{36}$/.test(id!)) throw new UsageError(`DECISION_ID is the decision_id of a denial or a decision event, not "${id}".`);
  const explained = { kind: 'audit', type: 'audit.explained', actor: cliActor(ctx.env), outcome: 'succeeded', target: id!, decisionId: id! } as const;
  return withAnyApp(onDb(ctx, values.db), async (app) => {
    const e = await explainDecision(app, id!);
    await app.recorder.record(explained);
    return printExplanation(ctx, e, values.json === true);
  });
}

function archive(ctx: CliContext, args: string[]): Promise<number> {
  const values = parseOptions(args, { before: { type: 'string' }, output: { type: 'string', short: 'o' }, db: { type: 'string' } });
  const before = Date.parse(requireOption(values.before, '--before', 'an ISO date: rows older than it are archived'));
  if (Number.isNaN(before)) throw new UsageError(`--before must be an ISO date (2026-01-31 or 2026-01-31T00:00:00Z), not "${values.before}".`);
  const out = requireOption(values.output, '-o', 'the bundle file to write (it must not exist)');
  if (existsSync(out)) throw new CliError(`${out} exists already: an archive never overwrites a file.`);
  const location = dbLocation(ctx.env, values.db);
  // The key first: on PostgreSQL a missing key folder or key is refused with its reason before the database is opened.
  const k = signingKey(ctx, location);
  return withAnyApp(onDb(ctx, values.db), async (app) => {
    // The record names the bundle by its full path: `verify` asks for it by that name (--archive FILE).
    const r = await archiveBefore(app.database, k, app.archivableBefore(before / 1000), resolve(out), (res, tx) =>
      step(app.recorder.recordWithin(tx, archivedEvent(res, cliActor(ctx.env)))),
    );
    for (const c of r.chains) ctx.io.out(`${c.chain}: ${c.rows ? `${plural(c.rows, 'row')} ${c.fromId}–${c.upToId} archived` : 'nothing older'}\n`);
    ctx.io.out(`Wrote ${out} (sha256 ${r.sha256}); verify it with: swarm audit verify --bundle ${out} --public-key KEYFILE\n`);
    return 0;
  });
}

function events(ctx: CliContext, args: string[]): Promise<number> {
  const values = parseOptions(args, { ...valueOptions('since', 'type', 'actor', 'outcome', 'limit'), json: { type: 'boolean' } });
  const since = values.since === undefined ? undefined : Number(values.since);
  if (since !== undefined && !(since > 0)) throw new UsageError('--since is a number of seconds.');
  const limit = values.limit === undefined ? 50 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit is 1 to 1000.');
  return withAnyApp(ctx, async (app) => {
    const page = await app.securityEvents.list({ since, type: values.type, actor: values.actor, outcome: values.outcome, limit });
    await app.recorder.record({ kind: 'audit', type: 'audit.queried', actor: cliActor(ctx.env), outcome: 'succeeded', target: 'security_events', detail: { filter: { since, type: values.type, actor: values.actor, outcome: values.outcome } } });
    if (values.json) return printJson(ctx.io, { events: page.rows.map(eventToJson), next_cursor: page.nextCursor });
    printTable(
      ctx.io,
      'No security events match.\n',
      ['ID', 'TIME (UTC)', 'TYPE', 'ACTOR', 'OUTCOME', 'TARGET'],
      page.rows.map((e) => [String(e.id), isoTime(e.timestamp), e.type, cell(e.actor, 40), e.outcome, cell(e.target, 60)]),
    );
    return 0;
  });
}

async function report(ctx: CliContext, args: string[]): Promise<number> {
  const values = parseOptions(args, { ...valueOptions('from', 'to', 'profile', 'format'), output: { type: 'string', short: 'o' } });
  const options = validate(reportOptionsSchema, givenValues(values, ['from', 'to', 'profile', 'format']));
  const out = requireOption(values.output, '-o', `the file to write, e.g. report.${options.format === 'pdf' ? 'pdf' : 'oscal.json'}`);
  return withAnyApp(ctx, async (app) => {
    const r = await generateReport(app, { period: { from: options.from, to: options.to }, profile: options.profile, format: options.format, generatedBy: { actor: cliActor(ctx.env), role: null } });
    // Written beside the target and renamed: a reader never sees half a report.
    const partial = `${out}.partial`;
    try {
      writeFileSync(partial, r.bytes);
      renameSync(partial, out);
    } catch (error) {
      throw new CliError(`cannot write ${out}: ${messageOf(error)}`);
    }
    const d = r.data;
    ctx.io.out(
      `Wrote ${out} (${r.format === 'pdf' ? 'PDF' : 'OSCAL assessment results'}, ${plural(r.bytes.length, 'byte')}): report ${r.id}\n` +
        `Period ${describePeriod(d.period)}; ${plural(d.denials.total, 'denial')}, ${plural(d.oversight.requested, 'approval request')}; ` +
        `integrity ${d.integrity.ok ? 'verified' : 'FAILED'}${d.scope.profiles.length ? `; controls of ${d.scope.profiles.map((p) => p.name).join(', ')}: ${controlCounts(r.rows)}` : ''}.\n` +
        // What the trail cannot show for the period (before its first row, unsigned days), as the cover states it.
        coverageNotes(d)
          .map((n) => `${n}\n`)
          .join(''),
    );
    return d.integrity.ok ? 0 : 1;
  });
}
