/**
 * Where policy change control is kept (issue 28): proposals, their votes and the activations, one implementation for
 * SQLite and PostgreSQL over the dialect port. The writes that matter happen inside transactions of the service
 * (service.ts), so that a vote, an activation and their security events commit together or not at all.
 */
import { sql } from 'drizzle-orm';
import { CredentialSeal } from '@/lib/auth/seal';
import type { policyActivations, policyProposals, policyVotes } from '@/db/schema';
import type { SqlDatabase, TxRunner, TxSteps } from '@/db/dialect';
import type { ImpactReport } from '@/lib/audit/impact';
import { revisionOf, type RevisionContent } from '@/lib/audit/revisions';

export interface TestsSummary {
  passed: number;
  failed: number;
  files: string[];
  failures: { name: string; position: string; message: string }[];
}

export interface ImpactSummary extends ImpactReport {
  /** the start of the replayed period, seconds since the epoch */
  since: number;
}

type ProposalRow = typeof policyProposals.$inferSelect;

/** A proposal as its row holds it, with its tests and impact parsed and its approver roles a list. */
export type Proposal = Omit<ProposalRow, 'testsJson' | 'impactJson' | 'approverRoles'> & { tests: TestsSummary; impact: ImpactSummary; approverRoles: string[] };
export type ProposalStatus = Proposal['status'];
export type Vote = Omit<typeof policyVotes.$inferSelect, 'id'>;
export type Activation = typeof policyActivations.$inferSelect;

/** The channel every server hears an activation on (PostgreSQL NOTIFY; on SQLite, any commit to the file). */
export const RULES_CHANNEL = 'swarm_rules';

/** The key that serialises every change-control write across servers. */
export const CHANGE_CONTROL_LOCK = 'swarm-policy-change-control';

const PROPOSAL_COLUMNS = sql`id, kind, revision, base_revision AS "baseRevision", message, proposed_by AS "proposedBy", proposed_at AS "proposedAt",
  status, tests_json AS "testsJson", impact_json AS "impactJson", approvals_required AS "approvalsRequired", approver_roles AS "approverRoles",
  decided_by AS "decidedBy", decided_at AS "decidedAt", decision_reason AS "decisionReason", emergency`;
const ACTIVATION_COLUMNS = sql`seq, revision, proposal_id AS "proposalId", kind, activated_by AS "activatedBy", activated_at AS "activatedAt", mac`;
const VOTE_COLUMNS = sql`proposal_id AS "proposalId", voter, voter_role AS "voterRole", vote, reason, voted_at AS "votedAt", mac`;

/** SQLite answers a boolean as 0 or 1. */
type RawProposal = Omit<ProposalRow, 'emergency'> & { emergency: unknown };

const proposalOf = (r: RawProposal): Proposal => {
  const { testsJson, impactJson, approverRoles, emergency, ...rest } = r;
  return {
    ...rest,
    approvalsRequired: Number(rest.approvalsRequired),
    tests: JSON.parse(testsJson) as TestsSummary,
    impact: JSON.parse(impactJson) as ImpactSummary,
    approverRoles: approverRoles.split(','),
    emergency: emergency === true || emergency === 1,
  };
};
const activationOf = (r: Activation): Activation => ({ ...r, seq: Number(r.seq) });

export class ChangeControlStore {
  constructor(readonly db: SqlDatabase) {}

  async latestActivation(): Promise<Activation | undefined> {
    return (await this.activations(1))[0];
  }

  async activations(limit = 100): Promise<Activation[]> {
    return (await this.db.all<Activation>(sql`SELECT ${ACTIVATION_COLUMNS} FROM policy_activations ORDER BY seq DESC LIMIT ${limit}`)).map(activationOf);
  }

  async proposal(id: string): Promise<Proposal | undefined> {
    const row = await this.db.one<RawProposal>(sql`SELECT ${PROPOSAL_COLUMNS} FROM policy_proposals WHERE id = ${id}`);
    return row && proposalOf(row);
  }

  async proposals(filter: { status?: ProposalStatus } = {}): Promise<Proposal[]> {
    const where = filter.status ? sql`WHERE status = ${filter.status}` : sql``;
    const rows = await this.db.all<RawProposal>(sql`SELECT ${PROPOSAL_COLUMNS} FROM policy_proposals ${where} ORDER BY proposed_at DESC, id DESC LIMIT 100`);
    return rows.map(proposalOf);
  }

  async votes(proposalId: string): Promise<Vote[]> {
    return this.db.all<Vote>(sql`SELECT ${VOTE_COLUMNS} FROM policy_votes WHERE proposal_id = ${proposalId} ORDER BY id`);
  }
}

/** The statements of the service's transactions (generators over the port, see db/dialect.ts). */
/** What tx.assess finds of an activation. */
export interface ActivationAssessment {
  sealed: boolean;
  /** why its revision cannot be used (not stored, or its content no longer hashes to it), if so */
  content: string | undefined;
  recorded: boolean;
}

/** Why an activation must not be loaded, the first thing it lacks (undefined: it is sound). */
export function problemIn(a: ActivationAssessment): string | undefined {
  if (!a.sealed) return "it does not carry its seal (it was written behind the service's back)";
  return a.content ?? (a.recorded ? undefined : 'the audit trail holds no security event recording it');
}

export const tx = {
  *proposalForUpdate(t: TxRunner, db: SqlDatabase, id: string): TxSteps<Proposal | undefined> {
    const row = yield* t.one<RawProposal>(sql`SELECT ${PROPOSAL_COLUMNS} FROM policy_proposals WHERE id = ${id}${db.forUpdate}`);
    return row && proposalOf(row);
  },
  /**
   * Why an activation must not be loaded: its revision is not stored, its content does not hash to it, or the chained
   * trail holds no security event that recorded it (undefined: it is sound). A row written behind the service's back
   * fails here.
   */
  /** (`seal` null: as a release before seals judged it, for the one-time carrying over of its newest activation) */
  *problemOf(t: TxRunner, a: Activation, seal: CredentialSeal | null): TxSteps<string | undefined> {
    return problemIn(yield* tx.assess(t, a, seal));
  },
  /** Each thing an activation must be: sealed (`seal` null: not asked), its revision stored whole, recorded by the trail. */
  *assess(t: TxRunner, a: Activation, seal: CredentialSeal | null): TxSteps<ActivationAssessment> {
    return {
      sealed: seal === null || CredentialSeal.matches(a.mac, seal.activation(a)),
      content: yield* tx.contentProblemOf(t, a),
      recorded: yield* tx.isRecorded(t, a),
    };
  },
  /** Why an activation's revision cannot be used: it is not stored, or its stored content does not hash to it. */
  *contentProblemOf(t: TxRunner, a: Activation): TxSteps<string | undefined> {
    const stored = yield* t.one<{ contentJson: string }>(sql`SELECT content_json AS "contentJson" FROM policy_revisions WHERE revision = ${a.revision}`);
    if (!stored) return 'its revision is not stored';
    let content: RevisionContent;
    try {
      content = JSON.parse(stored.contentJson) as RevisionContent;
    } catch {
      return 'its stored content is not JSON';
    }
    return revisionOf(content) === a.revision ? undefined : 'its stored content does not hash to its revision';
  },
  /** Does the chained trail hold the event that activated it (policy.activated or policy.rolled_back naming it)? */
  *isRecorded(t: TxRunner, a: Activation): TxSteps<boolean> {
    const events = yield* t.all<{ detailJson: string | null }>(
      sql`SELECT detail_json AS "detailJson" FROM security_events WHERE target = ${a.revision} AND type IN ('policy.activated', 'policy.rolled_back')`,
    );
    return events.some((e) => (JSON.parse(e.detailJson ?? '{}') as { activation?: number }).activation === a.seq);
  },
  /**
   * The newest sound activation (problemOf): what every server has in force. A row written behind the service's back is
   * passed over, never taken as the base of a new change.
   */
  *latestVerifiedActivation(t: TxRunner, seal: CredentialSeal | null): TxSteps<Activation | undefined> {
    const rows = yield* t.all<Activation>(sql`SELECT ${ACTIVATION_COLUMNS} FROM policy_activations ORDER BY seq DESC LIMIT 50`);
    for (const raw of rows) {
      const a = activationOf(raw);
      if ((yield* tx.problemOf(t, a, seal)) === undefined) return a;
    }
    return undefined;
  },
  *votes(t: TxRunner, proposalId: string): TxSteps<Vote[]> {
    return yield* t.all<Vote>(sql`SELECT ${VOTE_COLUMNS} FROM policy_votes WHERE proposal_id = ${proposalId} ORDER BY id`);
  },
  /** the voters whose approval of a proposal the chained trail records (policy.voted events) */
  *chainedApprovers(t: TxRunner, proposalId: string): TxSteps<Set<string>> {
    const rows = yield* t.all<{ actor: string; detailJson: string | null }>(
      sql`SELECT actor, detail_json AS "detailJson" FROM security_events WHERE type = 'policy.voted' AND target = ${proposalId}`,
    );
    return new Set(rows.filter((r) => (JSON.parse(r.detailJson ?? '{}') as { vote?: string }).vote === 'approve').map((r) => r.actor));
  },
  *storeRevision(t: TxRunner, revision: string, contentJson: string, at: number): TxSteps<void> {
    yield* t.run(sql`INSERT INTO policy_revisions (revision, content_json, first_seen_at) VALUES (${revision}, ${contentJson}, ${at}) ON CONFLICT (revision) DO NOTHING`);
  },
  *insertProposal(t: TxRunner, p: Proposal): TxSteps<void> {
    yield* t.run(sql`INSERT INTO policy_proposals (id, kind, revision, base_revision, message, proposed_by, proposed_at, status, tests_json, impact_json,
        approvals_required, approver_roles, decided_by, decided_at, decision_reason, emergency)
      VALUES (${p.id}, ${p.kind}, ${p.revision}, ${p.baseRevision}, ${p.message}, ${p.proposedBy}, ${p.proposedAt}, ${p.status}, ${JSON.stringify(p.tests)},
        ${JSON.stringify(p.impact)}, ${p.approvalsRequired}, ${p.approverRoles.join(',')}, ${p.decidedBy}, ${p.decidedAt}, ${p.decisionReason}, ${p.emergency})`);
  },
  /** A vote, with its seal. */
  *insertVote(t: TxRunner, seal: CredentialSeal, v: Omit<Vote, 'mac'>): TxSteps<void> {
    yield* t.run(sql`INSERT INTO policy_votes (proposal_id, voter, voter_role, vote, reason, voted_at, mac)
      VALUES (${v.proposalId}, ${v.voter}, ${v.voterRole}, ${v.vote}, ${v.reason}, ${v.votedAt}, ${seal.vote(v)})`);
  },
  *decide(t: TxRunner, id: string, status: ProposalStatus, by: string, at: number, reason: string): TxSteps<void> {
    yield* t.run(sql`UPDATE policy_proposals SET status = ${status}, decided_by = ${by}, decided_at = ${at}, decision_reason = ${reason} WHERE id = ${id} AND status = 'open'`);
  },
  /**
   * An activation, with its seal over its place in the sequence too (so that a copy of an older one cannot be put after
   * the newest): the next seq is taken in the transaction that writes it (every writer holds CHANGE_CONTROL_LOCK or the
   * trail's lock; two at once would collide on the key and one would fail, never share a place).
   */
  *insertActivation(t: TxRunner, seal: CredentialSeal, a: Omit<Activation, 'seq' | 'mac'>): TxSteps<number> {
    const next = yield* t.one<{ next: number | string }>(sql`SELECT coalesce(max(seq), 0) + 1 AS "next" FROM policy_activations`);
    const seq = Number(next!.next);
    yield* t.run(sql`INSERT INTO policy_activations (seq, revision, proposal_id, kind, activated_by, activated_at, mac)
      VALUES (${seq}, ${a.revision}, ${a.proposalId}, ${a.kind}, ${a.activatedBy}, ${a.activatedAt}, ${seal.activation({ ...a, seq })})`);
    return seq;
  },
  /** Is this vote sealed (else it counts for nothing)? */
  isSealedVote(seal: CredentialSeal, v: Vote): boolean {
    return CredentialSeal.matches(v.mac, seal.vote(v));
  },
};
