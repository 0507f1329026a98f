/**
 * Policy change control (issue 28). A change to the rules is a proposal: the proposed files stored as a revision,
 * with the impact of the change on the recorded calls (lib/audit/impact.ts) and the policy tests' result. Where a
 * compliance profile asks for change control (`change_control: { approvers, roles }`), the configuration in force
 * changes only through an approved proposal: the proposer cannot approve, every vote is a security event, and once the
 * last approval needed is given the proposal is activated in the same transaction; every server hears of it on the
 * change feed and puts the revision in force within a second. The files on disk are then the seed (activated at the
 * first start) and a file that differs from the active revision is drift: shown, recorded, never loaded. A rollback
 * is a proposal of an earlier revision's files; an emergency rollback from the command line (the break-glass path)
 * activates at once and is recorded as such.
 *
 * Without a profile that asks for it, the files on disk are the rules as before and proposals are advisory: the same
 * review (diff, impact, tests, votes), and an approval says the files may be deployed.
 *
 * An activation is put in force only when its revision's content hashes to its id and the chained trail holds the
 * security event that recorded it: a row written into policy_activations by someone with the database file is refused
 * (recorded as policy.unverified), never loaded.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { canonicalJson } from '@/lib/approvals/canonical';
import type { SqlDatabase, Step, TxRunner, TxSteps } from '@/db/dialect';
import { step } from '@/db/dialect';
import { impactOf, recordedCalls } from '@/lib/audit/impact';
import { revisionOf, type RevisionContent, type RevisionStore } from '@/lib/audit/revisions';
import { describeFailure, runPolicyTests, type PolicyConfig, type PolicyTests } from '@/lib/config/policy-tests';
import { AppError, brand, messageOf, isError } from '@/lib/errors';
import type { AuditEvent, ConfigEventType, Outcome, Role, SecurityEvent } from '@/lib/permissions';
import type { ActiveProfiles } from '@/lib/profiles/load';
import { changedFiles, configOfTexts, RULE_FILE_NAMES, RULE_FILES, textsOfRevision, type RuleFile, type RuleTexts } from './files';
import type { CredentialSeal } from '@/lib/auth/seal';
import { CHANGE_CONTROL_LOCK, ChangeControlStore, problemIn, RULES_CHANNEL, tx, type Activation, type ImpactSummary, type Proposal, type TestsSummary } from './store';

/** How the MCP tool pins of a revision are named among its files (a proposal's diff, its event). */
export const MCP_PINS_NAME = 'MCP tool pins';

/** The MCP tool pins of a revision, one `server/tool sha256` line each (null: none). */
export function pinsText(content: RevisionContent | undefined): string | null {
  const pins = content?.mcp_pins;
  if (!pins || Object.keys(pins).length === 0) return null;
  const lines: string[] = [];
  for (const server of Object.keys(pins).sort()) for (const tool of Object.keys(pins[server]!).sort()) lines.push(`${server}/${tool} ${pins[server]![tool]}`);
  return `${lines.join('\n')}\n`;
}

/** How far back a proposal's impact replays the recorded calls by default (seconds). */
export const DEFAULT_IMPACT_PERIOD = 7 * 86_400;

/** Who acts: a person (or the command line's user) and their role. */
export interface Actor {
  id: string;
  role: Role;
}

/** What the service needs of the application (lib/server/app.ts), and nothing more. */
export interface ChangeControlHost {
  readonly database: SqlDatabase;
  readonly revisions: RevisionStore;
  readonly profiles: ActiveProfiles;
  /** writes a security event inside a transaction of the port (the recorder the engine uses) */
  readonly recorder: { recordWithin(t: TxRunner, event: SecurityEvent): Step<unknown> };
  /** records an event nothing waits for (drift, an unverified activation) */
  recordEvent(event: AuditEvent): void;
  /** the texts of the five rule files in force */
  textsInForce(): RuleTexts;
  /** the configuration in force, as the policy tests see it */
  configInForce(): PolicyConfig;
  /** every policy test case in force (the configuration folder's and the profiles') */
  testsInForce(): PolicyTests;
  flagValues(): ReadonlyMap<string, boolean>;
  /** the content a revision of these texts has with the flags, profiles and MCP pins in force (or `pins`) */
  revisionContentOf(texts: RuleTexts, pins?: RevisionContent['mcp_pins']): RevisionContent;
  /** the revision in force as the audit rows name it */
  currentRevision(): string;
  /** put these texts in force instead of the files on disk; throws when one does not parse */
  pin(texts: RuleTexts): void;
  /** put the MCP tool pins of an activated revision in force (lib/mcp/pins), as accepted by its activator */
  applyMcpPins?(content: RevisionContent, activation: Activation): Promise<void>;
  /** the seal of the installation (lib/auth/seal.ts): votes and activations carry it */
  seal(): CredentialSeal;
  /** the stdio commands a configuration from the database may start on this server (read from its disk) */
  allowedMcpCommands(): ReadonlySet<string>;
  /**
   * Stop deciding (`reason`: why; every decision fails with RulesUnavailable), or decide again (undefined): the newest
   * activation the trail records cannot be used, and older rules are never taken in its place.
   */
  refuseRules(reason: string | undefined): void;
}

/**
 * Thrown by a decision while the rules in force cannot be used (issue 39: corruption fails closed): the newest
 * activation the audit trail records has a revision that is not stored or no longer hashes to its id. Answered 503.
 */
export class RulesUnavailable extends Error {
  static readonly kind = 'RulesUnavailable';
  readonly code = 'RULES_UNAVAILABLE';
  constructor(readonly reason: string) {
    super(`The rules in force cannot be used: ${reason}`);
    brand(this, RulesUnavailable);
  }
}

export interface ProposeInput {
  texts: RuleTexts;
  message: string;
  by: Actor;
  /** the policy tests to run (default: those in force); the profiles' tests are always run */
  tests?: PolicyTests;
  /** replay the calls recorded since (seconds since the epoch; default: the last seven days) */
  since?: number;
  kind?: 'change' | 'rollback';
  /** the MCP tool pins the proposal puts in force (an operator's acceptance of a tool's new definition); default: those in force */
  mcpPins?: RevisionContent['mcp_pins'];
}

export type ProposalDetail = Awaited<ReturnType<ChangeControl['detail']>>;

const newProposalId = (): string => `prp_${randomBytes(9).toString('base64url')}`;
/** what a proposal id looks like (older or longer ones included): anything else names no proposal */
export const PROPOSAL_ID = /^prp_[A-Za-z0-9_-]{6,40}$/;

/** The impact, short, for events and the report. */
export function impactDigest(i: ImpactSummary) {
  return { replayed: i.replayed, changed: i.changed, uncertain: i.uncertain, ...i.by_direction };
}

/** A security event of change control, by a person or (no actor) the system. */
function configEvent(type: ConfigEventType, by: Actor | undefined, target: string, detail: Record<string, unknown>, outcome: Outcome = 'succeeded'): SecurityEvent {
  return { kind: 'config', type, actor: by?.id ?? 'system', actorRole: by?.role, outcome, target, detail };
}

export class ChangeControl {
  readonly store: ChangeControlStore;
  private appliedSeq = 0;
  private stopFeed: (() => Promise<void>) | undefined;
  private resync: NodeJS.Timeout | undefined;
  private syncing: Promise<void> | undefined;
  private syncAgain = false;
  private readonly unverified = new Set<number>();
  private lastActivation: Activation | undefined;
  private started = false;

  constructor(private readonly host: ChangeControlHost) {
    this.store = new ChangeControlStore(host.database);
  }

  /** The profiles' requirement (undefined: the files on disk are the rules; proposals are advisory). */
  get settings(): ActiveProfiles['changeControl'] {
    return this.host.profiles.changeControl;
  }

  get enforced(): boolean {
    return this.settings !== undefined;
  }

  /** The activation in force on this server (undefined: none applied, or change control is off). */
  get active(): Activation | undefined {
    return this.lastActivation;
  }

  /**
   * Under change control: put the newest activation in force and (`watch`: a long-lived process) hear of every later
   * one (the change feed, and a read every few seconds in case a notification was lost). A server (`watch`) seeds the
   * first activation from the files on disk when there is none; a one-shot command only reads (it may run against a
   * copy), and seeds only when it changes the rules (propose, vote, rollback). Without change control, nothing.
   */
  async start(options: { watch?: boolean } = {}): Promise<void> {
    if (!this.enforced) return;
    if (!this.started) {
      this.started = true;
      if (options.watch) await this.seed();
      await this.sync();
    }
    if (options.watch && !this.stopFeed && !this.resync) {
      this.stopFeed = await this.host.database.changes(RULES_CHANNEL, () => void this.sync());
      this.resync = setInterval(() => void this.sync(), 5_000);
      this.resync.unref();
    }
  }

  async stop(): Promise<void> {
    if (this.resync) clearInterval(this.resync);
    this.resync = undefined;
    const stop = this.stopFeed;
    this.stopFeed = undefined;
    await stop?.();
  }

  /** Before a change to the rules under change control: the seed exists, and the newest activation is in force. */
  private async seeded(): Promise<void> {
    if (!this.enforced) return;
    await this.seed();
    await this.sync();
  }

  /** The files on disk become the first activation (once, whichever server starts first). */
  private async seed(): Promise<void> {
    // The common case, read without the lock; the transaction checks again, against what the trail records.
    const latest = await this.store.latestActivation();
    if (latest && !(await this.unverifiedBecause(latest))) return;
    const texts = this.host.textsInForce();
    const content = this.host.revisionContentOf(texts);
    const revision = revisionOf(content);
    const at = Date.now() / 1000;
    const recorder = this.host.recorder;
    const seal = this.host.seal();
    await this.host.database.transaction(
      function* (t) {
        // Once: whichever server starts first (a row the trail does not record is no activation).
        if (yield* tx.latestVerifiedActivation(t, seal)) return;
        yield* tx.storeRevision(t, revision, JSON.stringify(content), at);
        const seq = yield* tx.insertActivation(t, seal, { revision, proposalId: null, kind: 'seed', activatedBy: 'system', activatedAt: at });
        const files = RULE_FILES.filter((f) => texts[f] !== null).map((f) => RULE_FILE_NAMES[f]);
        yield* step(recorder.recordWithin(t, configEvent('policy.activated', undefined, revision, { activation: seq, kind: 'seed', files })));
        yield* t.publish(RULES_CHANNEL);
      },
      { serialise: CHANGE_CONTROL_LOCK },
    );
  }

  /**
   * A database from before seals: its activations carry none, so none would be loaded. Once, at the first start that
   * seals the installation's credentials (App.sealLegacyCredentials), the newest activation sound by the rules of that
   * release is carried over as a new, sealed activation of the same revision (recorded as policy.activated with
   * `carried_over_from`), so that the rules in force stay the same. Returns its seq, or undefined when there was none
   * to carry over (or a sealed one exists).
   */
  async carryOverUnsealed(): Promise<number | undefined> {
    const seal = this.host.seal();
    const recorder = this.host.recorder;
    const seq = await this.host.database.transaction(
      function* (t) {
        if (yield* tx.latestVerifiedActivation(t, seal)) return undefined;
        const old = yield* tx.latestVerifiedActivation(t, null);
        if (!old) return undefined;
        const at = Date.now() / 1000;
        const seq = yield* tx.insertActivation(t, seal, { revision: old.revision, proposalId: old.proposalId, kind: old.kind, activatedBy: 'system', activatedAt: at });
        yield* step(recorder.recordWithin(t, configEvent('policy.activated', undefined, old.revision, { activation: seq, kind: old.kind, carried_over_from: old.seq })));
        yield* t.publish(RULES_CHANNEL);
        return seq;
      },
      { serialise: CHANGE_CONTROL_LOCK },
    );
    // In force here at once (the other processes hear of it on the feed).
    if (seq !== undefined) await this.sync();
    return seq;
  }

  /** Put the newest activation in force if it is not yet (one at a time; a call meanwhile runs once more after). */
  sync(): Promise<void> {
    if (this.syncing) {
      this.syncAgain = true;
      return this.syncing;
    }
    this.syncing = (async () => {
      try {
        do {
          this.syncAgain = false;
          await this.applyNewest();
        } while (this.syncAgain);
      } catch (error) {
        console.error('Reading the active policy revision failed; trying again in a few seconds.', error);
      } finally {
        this.syncing = undefined;
      }
    })();
    return this.syncing;
  }

  /**
   * Put the newest sound activation in force. A newer row that is not sound (written behind the service's back) is
   * recorded once as policy.unverified and passed over: the server keeps, or at its start takes, the newest sound one.
   */
  private async applyNewest(): Promise<void> {
    if (!this.enforced) return;
    const latest = await this.store.latestActivation();
    if (!latest || latest.seq === this.appliedSeq) return;
    let sound: Activation | undefined = latest;
    const found = await this.host.database.transaction((t) => tx.assess(t, latest, this.host.seal()), { readOnly: true });
    const problem = problemIn(found);
    // A genuine activation (sealed) the trail records whose revision is gone or changed: the rules in force were
    // corrupted. Nothing is decided until it is repaired or a newer activation (an emergency rollback) replaces it;
    // older rules are never put in force in its place (a DENY must not become an ALLOW).
    const corrupted = found.sealed && found.recorded ? found.content : undefined;
    if (corrupted) {
      const reason = `activation ${latest.seq} of ${latest.revision}: ${corrupted}`;
      if (!this.unverified.has(latest.seq)) {
        this.unverified.add(latest.seq);
        console.error(`No decision is taken: the rules in force cannot be used (${reason}).`);
        this.host.recordEvent(configEvent('config.refused', undefined, latest.revision, { activation: latest.seq, error: `the rules in force cannot be used: ${corrupted}; nothing is decided until they are repaired or rolled back` }, 'refused'));
      }
      this.host.refuseRules(reason);
      return;
    }
    if (problem) {
      if (!this.unverified.has(latest.seq)) {
        this.unverified.add(latest.seq);
        console.error(`Activation ${latest.seq} of ${latest.revision} is not loaded: ${problem}`);
        this.host.recordEvent(configEvent('policy.unverified', undefined, latest.revision, { activation: latest.seq, problem }, 'refused'));
      }
      sound = await this.host.database.transaction((t) => tx.latestVerifiedActivation(t, this.host.seal()), { readOnly: true });
    }
    if (!sound || sound.seq === this.appliedSeq) return;
    const content = (await this.host.revisions.get(sound.revision))!;
    try {
      this.host.pin(textsOfRevision(content));
    } catch (error) {
      if (!this.unverified.has(sound.seq)) {
        this.unverified.add(sound.seq);
        this.host.recordEvent(configEvent('config.refused', undefined, sound.revision, { activation: sound.seq, error: messageOf(error) }, 'refused'));
      }
      return;
    }
    this.appliedSeq = sound.seq;
    this.lastActivation = sound;
    this.host.refuseRules(undefined);
    // The MCP tool pins are part of the revision: those it holds are put in force too (each once, on any server).
    try {
      await this.host.applyMcpPins?.(content, sound);
    } catch (error) {
      // Applied again at the next read of the activations (within seconds): every pin of it is written once.
      this.appliedSeq = 0;
      console.error(`Putting the MCP tool pins of activation ${sound.seq} in force failed; trying again in a few seconds.`, error);
    }
    await this.checkProfiles(sound, content);
  }

  /**
   * Record a drift (`config.drift`) unless the newest one of this target already says the same in `keys`: once per
   * version, whichever process of a server sees it first (two that see it at the same moment may both record it).
   * Returns whether it recorded.
   */
  async recordDriftOnce(target: string, detail: Record<string, unknown>, keys: readonly string[]): Promise<boolean> {
    try {
      const last = await this.store.db.one<{ detailJson: string | null }>(
        sql`SELECT detail_json AS "detailJson" FROM security_events WHERE type = 'config.drift' AND target = ${target} ORDER BY id DESC LIMIT 1`,
      );
      const seen = last ? (JSON.parse(last.detailJson ?? '{}') as Record<string, unknown>) : undefined;
      if (seen && keys.every((k) => canonicalJson(seen[k] ?? null) === canonicalJson(detail[k] ?? null))) return false;
      this.host.recordEvent(configEvent('config.drift', undefined, target, detail, 'refused'));
      return true;
    } catch (error) {
      console.error('Recording a drifted configuration failed.', error);
      return false;
    }
  }

  /**
   * The compliance profiles are read from disk when a process starts (their rules, gates, locks and settings shape the
   * whole application), so an activation cannot swap them; a profile whose files differ from those the active revision
   * was made with is drift too: recorded once per revision (`config.drift`, target `profiles`), and named in the log.
   */
  private async checkProfiles(a: Activation, content: RevisionContent): Promise<void> {
    const key = (list: readonly { name: string; texts: unknown }[] | undefined) => canonicalJson((list ?? []).map((p) => ({ name: p.name, texts: p.texts })));
    const loaded = this.host.profiles.sources;
    if (key(loaded) === key(content.profiles)) return;
    const differing = [...new Set([...loaded.map((p) => p.name), ...(content.profiles ?? []).map((p) => p.name)])].filter(
      (name) => key(loaded.filter((p) => p.name === name)) !== key((content.profiles ?? []).filter((p) => p.name === name)),
    );
    if (await this.recordDriftOnce('profiles', { profiles: differing, active_revision: a.revision }, ['profiles', 'active_revision'])) {
      console.error(`The compliance profiles ${differing.join(', ')} on this server's disk differ from those of the active revision ${a.revision}; they stay as loaded at start.`);
    }
  }

  /** Why an activation must not be loaded: its content does not hash to it, or the trail does not record it. */
  private unverifiedBecause(a: Activation): Promise<string | undefined> {
    return this.host.database.transaction((t) => tx.problemOf(t, a, this.host.seal()), { readOnly: true });
  }

  /**
   * Store a proposal: the files compiled (a file that does not compile is refused with its file:line:column), its
   * policy tests run, its impact replayed, and the proposal recorded with its security event.
   */
  async propose(input: ProposeInput): Promise<Proposal> {
    const message = input.message.trim();
    if (!message) throw new AppError('BAD_REQUEST', 'A proposal needs a message that says why.');
    await this.seeded();
    const candidate = configOfTexts(input.texts, this.host.profiles, 'proposed', { allowedCommands: this.host.allowedMcpCommands() });
    const files = changedFiles(this.host.textsInForce(), input.texts).map((f) => RULE_FILE_NAMES[f]);
    const content = this.host.revisionContentOf(input.texts, input.mcpPins);
    const pinsChange = input.mcpPins !== undefined && canonicalJson(content.mcp_pins ?? {}) !== canonicalJson(this.host.revisionContentOf(input.texts).mcp_pins ?? {});
    if (pinsChange) files.push(MCP_PINS_NAME);
    if (files.length === 0) throw new AppError('BAD_REQUEST', 'Nothing changes: the proposed files are the ones in force.');
    const proposal = await this.measured(candidate, { kind: input.kind ?? 'change', revision: revisionOf(content), message, by: input.by, tests: input.tests, since: input.since });
    const recorder = this.host.recorder;
    await this.host.database.transaction(
      function* (t) {
        yield* tx.storeRevision(t, proposal.revision, JSON.stringify(content), proposal.proposedAt);
        yield* tx.insertProposal(t, proposal);
        yield* step(
          recorder.recordWithin(
            t,
            configEvent('policy.proposed', input.by, proposal.id, {
              proposal: proposal.id,
              kind: proposal.kind,
              revision: proposal.revision,
              base_revision: proposal.baseRevision,
              message,
              files,
              tests: { passed: proposal.tests.passed, failed: proposal.tests.failed },
              impact: impactDigest(proposal.impact),
            }),
          ),
        );
      },
      { serialise: CHANGE_CONTROL_LOCK },
    );
    return proposal;
  }

  /**
   * A new open proposal of a compiled configuration, measured against the rules in force: its policy tests (given, or
   * those in force) and its impact on the calls recorded since `since` (default: the last seven days).
   */
  private async measured(candidate: PolicyConfig, p: { kind: Proposal['kind']; revision: string; message: string; by: Actor; tests?: PolicyTests; since?: number }): Promise<Proposal> {
    const tests = this.testsOf(candidate, p.tests);
    const since = p.since ?? Date.now() / 1000 - DEFAULT_IMPACT_PERIOD;
    const impact: ImpactSummary = { since, ...(await impactOf(recordedCalls(this.host.database, since), this.host.configInForce(), candidate, this.host.flagValues())) };
    return {
      id: newProposalId(),
      kind: p.kind,
      revision: p.revision,
      // measured against the active revision under change control, else the one in force
      baseRevision: this.lastActivation?.revision ?? this.host.currentRevision(),
      message: p.message,
      proposedBy: p.by.id,
      proposedAt: Date.now() / 1000,
      status: 'open',
      tests,
      impact,
      approvalsRequired: this.settings?.approvers ?? 1,
      approverRoles: [...(this.settings?.roles ?? ['admin'])],
      decidedBy: null,
      decidedAt: null,
      decisionReason: null,
      emergency: false,
    };
  }

  /** The proposal's policy tests (given, or those in force) with the profiles' tests, as a summary. */
  private testsOf(candidate: PolicyConfig, given: PolicyTests | undefined): TestsSummary {
    const inForce = this.host.testsInForce();
    const profileFolders = this.host.profiles.sources.map((s) => s.folder);
    const profileCases = inForce.cases.filter((c) => profileFolders.some((f) => c.position.startsWith(f)));
    const tests: PolicyTests = given ? { files: [...given.files, ...inForce.files.filter((f) => profileFolders.some((p) => f.startsWith(p)))], cases: [...given.cases, ...profileCases] } : inForce;
    const results = runPolicyTests(candidate, tests);
    const failures = results.filter((r) => !r.passed);
    return {
      passed: results.length - failures.length,
      failed: failures.length,
      files: [...tests.files],
      failures: failures.map((r) => ({ name: r.case.name, position: r.case.position, message: describeFailure(r) })),
    };
  }

  /**
   * A proposal with its votes, the files that differ between it and its base (the revision in force when proposed),
   * for the diff, and whether it is stale: under change control, the rules in force changed since, so it can no longer
   * be approved.
   */
  async detail(id: string) {
    const proposal = await this.store.proposal(id);
    if (!proposal) throw new AppError('NOT_FOUND', `There is no proposal ${id}.`);
    const [votes, after, before] = await Promise.all([
      this.store.votes(id),
      this.host.revisions.get(proposal.revision),
      proposal.baseRevision ? this.host.revisions.get(proposal.baseRevision) : Promise.resolve(undefined),
    ]);
    const text = (content: RevisionContent | undefined, key: RuleFile) => (content ? textsOfRevision(content)[key] : null);
    const files: { name: string; key: RuleFile | 'mcp_pins'; before: string | null; after: string | null }[] = RULE_FILES.map((key) => ({
      name: RULE_FILE_NAMES[key],
      key,
      before: text(before, key),
      after: text(after, key),
    })).filter((f) => f.before !== f.after);
    // The MCP tool pins, as lines `server/tool sha256`, when they change (the definitions are on /transparency#mcp).
    const pins = { key: 'mcp_pins' as const, name: MCP_PINS_NAME, before: pinsText(before), after: pinsText(after) };
    if (pins.before !== pins.after) files.push(pins);
    if (this.enforced) await this.sync();
    const stale = proposal.status === 'open' && this.enforced && proposal.baseRevision !== this.lastActivation?.revision;
    return { proposal, votes, files, stale };
  }

  /**
   * A vote. Refused (and recorded as policy.refused): the proposer approving their own, a role that may not approve,
   * a second vote, a proposal no longer open, an approval of a proposal whose tests fail or (under change control)
   * that was made against rules no longer in force. The last approval needed activates it (change control) or
   * approves it (advisory) in the same transaction.
   */
  async vote(id: string, by: Actor, vote: 'approve' | 'reject', reason: string): Promise<{ proposal: Proposal; activation?: number }> {
    const why = reason.trim();
    if (!why) throw new AppError('BAD_REQUEST', 'A vote needs a reason.');
    await this.seeded();
    const enforced = this.enforced;
    const recorder = this.host.recorder;
    const seal = this.host.seal();
    const at = Date.now() / 1000;
    const outcome = await this.onProposal(id, by, `vote ${vote}`, function* (t, p) {
      const votes = yield* tx.votes(t, id);
      const latest = enforced ? yield* tx.latestVerifiedActivation(t, seal) : undefined;
      const refusal =
        p.status !== 'open'
          ? new AppError('CONFLICT', `Proposal ${id} is ${p.status}: it takes no more votes.`)
          : by.id === p.proposedBy
            ? new AppError('FORBIDDEN', vote === 'approve' ? 'You proposed this change: someone else must approve it.' : 'You proposed this change: withdraw it instead of rejecting it.')
            : !p.approverRoles.includes(by.role)
              ? new AppError('FORBIDDEN', `Only ${p.approverRoles.join(' or ')} users may vote on changes to the rules.`)
              : votes.some((v) => v.voter === by.id)
                ? new AppError('CONFLICT', 'You have voted on this proposal already.')
                : vote === 'approve' && p.tests.failed > 0
                  ? new AppError('CONFLICT', `${p.tests.failed} of its policy tests fail: a proposal whose tests fail cannot be approved.`)
                  : vote === 'approve' && enforced && latest?.revision !== p.baseRevision
                    ? new AppError('CONFLICT', 'The rules in force changed since this was proposed: propose it again, so that its impact is measured against them.')
                    : undefined;
      if (refusal) return refusal;
      yield* tx.insertVote(t, seal, { proposalId: id, voter: by.id, voterRole: by.role, vote, reason: why, votedAt: at });
      // Only the approvals the chained trail records count: a row written into policy_votes behind the service's
      // back approves nothing (it is named in a policy.unverified event instead).
      const chained = yield* tx.chainedApprovers(t, id);
      const earlier = votes.filter((v) => v.vote === 'approve');
      // Nor one without its seal (lib/auth/seal.ts): a row and an event appended by whoever holds the database.
      const counts = (v: (typeof earlier)[number]) => chained.has(v.voter) && tx.isSealedVote(seal, v);
      const forged = earlier.filter((v) => !counts(v));
      if (forged.length > 0) {
        yield* step(recorder.recordWithin(t, configEvent('policy.unverified', undefined, id, { proposal: id, problem: 'votes the audit trail does not record, or that carry no seal', voters: forged.map((v) => v.voter) }, 'refused')));
      }
      const counted = earlier.filter(counts);
      const approvals = counted.length + (vote === 'approve' ? 1 : 0);
      const event = (type: ConfigEventType, detail: Record<string, unknown>, target = id) => configEvent(type, by, target, { proposal: id, revision: p.revision, ...detail });
      yield* step(recorder.recordWithin(t, event('policy.voted', { vote, reason: why, approvals_given: approvals, approvals_required: p.approvalsRequired })));
      if (vote === 'reject') {
        yield* tx.decide(t, id, 'rejected', by.id, at, why);
        yield* step(recorder.recordWithin(t, event('policy.rejected', { reason: why })));
        return { proposal: { ...p, status: 'rejected' as const } };
      }
      if (approvals < p.approvalsRequired) return { proposal: p };
      const approvers = [...counted.map((v) => v.voter), by.id];
      if (!enforced) {
        yield* tx.decide(t, id, 'approved', by.id, at, why);
        yield* step(recorder.recordWithin(t, event('policy.approved', { approvers, impact: impactDigest(p.impact) })));
        return { proposal: { ...p, status: 'approved' as const } };
      }
      const seq = yield* tx.insertActivation(t, seal, { revision: p.revision, proposalId: id, kind: 'proposal', activatedBy: by.id, activatedAt: at });
      yield* tx.decide(t, id, 'activated', by.id, at, why);
      yield* step(
        recorder.recordWithin(
          t,
          event('policy.activated', { activation: seq, kind: p.kind === 'rollback' ? 'rollback' : 'proposal', proposed_by: p.proposedBy, approvers, base_revision: p.baseRevision, impact: impactDigest(p.impact) }, p.revision),
        ),
      );
      yield* t.publish(RULES_CHANNEL);
      return { proposal: { ...p, status: 'activated' as const }, activation: seq };
    });
    if (outcome.activation !== undefined) await this.sync();
    const proposal = outcome.proposal;
    return { proposal: { ...proposal, decidedBy: proposal.status === 'open' ? null : by.id }, activation: outcome.activation };
  }

  /** Withdraw an open proposal (its proposer, or an admin). */
  async withdraw(id: string, by: Actor, reason: string): Promise<Proposal> {
    const recorder = this.host.recorder;
    const at = Date.now() / 1000;
    const why = reason.trim() || 'withdrawn';
    return this.onProposal(id, by, 'withdraw', function* (t, p) {
      if (p.status !== 'open') return new AppError('CONFLICT', `Proposal ${id} is ${p.status}: it cannot be withdrawn.`);
      if (p.proposedBy !== by.id && by.role !== 'admin') return new AppError('FORBIDDEN', 'Only its proposer or an admin can withdraw a proposal.');
      yield* tx.decide(t, id, 'withdrawn', by.id, at, why);
      yield* step(recorder.recordWithin(t, configEvent('policy.withdrawn', by, id, { proposal: id, reason: why })));
      return { ...p, status: 'withdrawn' as const, decidedBy: by.id, decidedAt: at, decisionReason: why };
    });
  }

  /**
   * A decision on a proposal, in a transaction under the change-control lock with the proposal's row locked. A refusal
   * the decision returns, or that there is no such proposal, is recorded (policy.refused) and thrown.
   */
  private async onProposal<T>(id: string, by: Actor, act: string, decide: (t: TxRunner, p: Proposal) => TxSteps<T | AppError>): Promise<T> {
    const db = this.host.database;
    const outcome = await db.transaction(
      function* (t) {
        const p = yield* tx.proposalForUpdate(t, db, id);
        return p ? yield* decide(t, p) : new AppError('NOT_FOUND', `There is no proposal ${id}.`);
      },
      { serialise: CHANGE_CONTROL_LOCK },
    );
    if (!isError(outcome, AppError)) return outcome;
    const recorder = this.host.recorder;
    await db.transaction(function* (t) {
      yield* step(recorder.recordWithin(t, configEvent('policy.refused', by, id, { act, reason: outcome.message }, 'refused')));
    });
    throw outcome;
  }

  /** The files of a revision that was once in force (a rollback's target). */
  private async formerTexts(revision: string): Promise<RuleTexts> {
    const activations = await this.store.activations(10_000);
    const content = activations.some((a) => a.revision === revision) ? await this.host.revisions.get(revision) : undefined;
    if (!content) throw new AppError('NOT_FOUND', `Revision ${revision} was never in force here: a rollback goes back to an earlier activation (see swarm policy history).`);
    return textsOfRevision(content);
  }

  /** A proposal to go back to the files of an earlier activation, reviewed like any other. */
  async proposeRollback(revision: string, message: string, by: Actor, since?: number): Promise<Proposal> {
    if (!this.enforced) throw new AppError('CONFLICT', 'Change control is off: the files on disk are the rules. Restore the files to roll back.');
    return this.propose({ texts: await this.formerTexts(revision), message, by, kind: 'rollback', since });
  }

  /**
   * The break-glass path: go back to the files of an earlier activation at once, without votes (from the command line
   * on a host that holds the database). Recorded as policy.rolled_back with `emergency: true`, and kept as an
   * activated proposal so that the review of it can follow.
   */
  async emergencyRollback(revision: string, message: string, by: Actor): Promise<{ proposal: Proposal; activation: number }> {
    if (!this.enforced) throw new AppError('CONFLICT', 'Change control is off: the files on disk are the rules. Restore the files to roll back.');
    const why = message.trim();
    if (!why) throw new AppError('BAD_REQUEST', 'An emergency rollback needs a message that says why.');
    await this.seeded();
    const candidate = configOfTexts(await this.formerTexts(revision), this.host.profiles, revision, { allowedCommands: this.host.allowedMcpCommands() });
    const measured = await this.measured(candidate, { kind: 'rollback', revision, message: why, by });
    const at = measured.proposedAt;
    const proposal: Proposal = { ...measured, status: 'activated', approvalsRequired: 0, decidedBy: by.id, decidedAt: at, decisionReason: why, emergency: true };
    const recorder = this.host.recorder;
    const seal = this.host.seal();
    const seq = await this.host.database.transaction(
      function* (t) {
        yield* tx.insertProposal(t, proposal);
        const seq = yield* tx.insertActivation(t, seal, { revision, proposalId: proposal.id, kind: 'emergency', activatedBy: by.id, activatedAt: at });
        const detail = { activation: seq, proposal: proposal.id, emergency: true, via: 'break-glass (command line)', reason: why, base_revision: proposal.baseRevision, impact: impactDigest(proposal.impact) };
        yield* step(recorder.recordWithin(t, configEvent('policy.rolled_back', by, revision, detail)));
        yield* t.publish(RULES_CHANNEL);
        return seq;
      },
      { serialise: CHANGE_CONTROL_LOCK },
    );
    await this.sync();
    return { proposal, activation: seq };
  }
}
