/**
 * Policy change control (issue 28): proposals with their impact and tests, votes, withdrawal, rollback proposals and
 * the history of activations. Admins propose; the roles the profile names vote; auditors read.
 */
import { z } from 'zod';
import { parsePolicyTests } from '@/lib/config/policy-tests';
import { MAX_RULE_FILE_BYTES, RULE_FILES, type RuleTexts } from '@/lib/change-control/files';
import type { Activation, Proposal } from '@/lib/change-control/store';
import { PROPOSAL_ID, type ProposalDetail } from '@/lib/change-control/service';
import { AppError, isError } from '@/lib/errors';
import { ConfigFileError } from '@/lib/permissions/yaml-config';
import { requireRole, route } from '../route';

const fileText = z.string().max(MAX_RULE_FILE_BYTES, `at most ${MAX_RULE_FILE_BYTES / 1024} KiB`).nullable();

export const proposeBodySchema = z.strictObject({
  /** why the change is made (shown to the approvers, kept in the trail) */
  message: z.string().trim().min(1, 'say why the change is made').max(2_000),
  /** the files that change: their new text, or null to remove the file; a file not given stays as in force */
  files: z
    .strictObject({ agents: fileText.optional(), policy: fileText.optional(), gates: fileText.optional(), hooks: fileText.optional(), mcp: fileText.optional() })
    .refine((f) => Object.keys(f).length > 0, 'give at least one file'),
  /** policy tests (the text of a policy_tests.yaml) run instead of those in force; the profiles' tests always run */
  tests: z.string().max(MAX_RULE_FILE_BYTES).optional(),
  /** how many days of recorded calls the impact replays (default 7) */
  since_days: z.number().int().min(1).max(400).optional(),
});

export const voteBodySchema = z.strictObject({
  vote: z.enum(['approve', 'reject']),
  reason: z.string().trim().min(1, 'a vote needs a reason').max(2_000),
});

export const withdrawBodySchema = z.strictObject({ reason: z.string().trim().min(1, 'say why').max(2_000) });

export const rollbackBodySchema = z.strictObject({
  /** the revision of an earlier activation */
  revision: z.string().regex(/^rev_[0-9a-f]{32}$/, 'a revision id: rev_ and 32 hex digits'),
  message: z.string().trim().min(1, 'say why').max(2_000),
});

const proposalIdSchema = z.object({ id: z.string().regex(PROPOSAL_ID, 'a proposal id: prp_…') });
const listQuerySchema = z.object({ status: z.enum(['open', 'approved', 'activated', 'rejected', 'withdrawn']).optional() });

function proposalJson(p: Proposal) {
  return {
    id: p.id,
    kind: p.kind,
    revision: p.revision,
    base_revision: p.baseRevision,
    message: p.message,
    proposed_by: p.proposedBy,
    proposed_at: p.proposedAt,
    status: p.status,
    tests: p.tests,
    impact: p.impact,
    approvals_required: p.approvalsRequired,
    approver_roles: p.approverRoles,
    decided_by: p.decidedBy,
    decided_at: p.decidedAt,
    decision_reason: p.decisionReason,
    emergency: p.emergency,
  };
}

function activationJson(a: Activation) {
  return { seq: a.seq, revision: a.revision, proposal_id: a.proposalId, kind: a.kind, activated_by: a.activatedBy, activated_at: a.activatedAt };
}

function detailJson(d: ProposalDetail) {
  return {
    ...proposalJson(d.proposal),
    votes: d.votes.map((v) => ({ voter: v.voter, role: v.voterRole, vote: v.vote, reason: v.reason, voted_at: v.votedAt })),
    files: d.files,
    stale: d.stale,
  };
}

/** The proposals (newest first), whether change control is enforced and by which profiles, and the activation in force. */
export const listProposals = route({ role: requireRole('auditor'), query: listQuerySchema }, async ({ app, query }) => {
  const cc = app.changeControl;
  await cc.sync();
  const settings = cc.settings;
  return {
    change_control: settings ? { enforced: true, approvers: settings.approvers, roles: settings.roles, profiles: settings.profiles, basis: settings.basis } : { enforced: false },
    active: cc.active ? activationJson(cc.active) : null,
    proposals: (await cc.store.proposals({ status: query.status })).map(proposalJson),
  };
});

/** Propose a change: the files compiled (400 with each problem at file:line:column), tested, and its impact replayed. */
export const createProposal = route({ role: requireRole('admin'), body: proposeBodySchema, maxBodyBytes: 6 * MAX_RULE_FILE_BYTES }, async ({ app, body, principal }) => {
  const texts: RuleTexts = { ...app.ruleTexts() };
  for (const key of RULE_FILES) {
    const given = body.files[key];
    if (given !== undefined) texts[key] = given;
  }
  let tests;
  if (body.tests !== undefined) {
    try {
      tests = parsePolicyTests(body.tests, 'proposed/policy_tests.yaml');
    } catch (error) {
      if (!isError(error, ConfigFileError)) throw error;
      throw new AppError('BAD_REQUEST', error.message, { issues: error.issues.map((i) => ({ file: error.file, ...i })) });
    }
  }
  const since = body.since_days === undefined ? undefined : Date.now() / 1000 - body.since_days * 86_400;
  const p = await app.changeControl.propose({ texts, message: body.message, by: { id: principal.id, role: principal.role }, tests, since });
  return proposalJson(p);
});

/** One proposal: its votes, the diff of every file against the rules in force when it was proposed, and whether it is stale. */
export const getProposal = route({ role: requireRole('auditor'), params: proposalIdSchema }, async ({ app, params }) => detailJson(await app.changeControl.detail(params.id)));

/**
 * A vote. 403 for the proposer and for a role the profile does not let approve; 409 for a second vote, a proposal no
 * longer open, failing tests or rules changed since. The last approval needed activates the proposal on every server.
 */
export const voteOnProposal = route({ role: requireRole('viewer'), principals: 'user', params: proposalIdSchema, body: voteBodySchema }, async ({ app, params, body, principal }) => {
  const r = await app.changeControl.vote(params.id, { id: principal.id, role: principal.role }, body.vote, body.reason);
  return { ...detailJson(await app.changeControl.detail(params.id)), activation: r.activation ?? null };
});

/** Withdraw an open proposal (its proposer or an admin). */
export const withdrawProposal = route({ role: requireRole('admin'), params: proposalIdSchema, body: withdrawBodySchema }, async ({ app, params, body, principal }) =>
  proposalJson(await app.changeControl.withdraw(params.id, { id: principal.id, role: principal.role }, body.reason)),
);

/** Propose going back to the files of an earlier activation (reviewed like any change). */
export const proposeRollback = route({ role: requireRole('admin'), body: rollbackBodySchema }, async ({ app, body, principal }) =>
  proposalJson(await app.changeControl.proposeRollback(body.revision, body.message, { id: principal.id, role: principal.role })),
);

/** The activations, newest first: the seed, each approved proposal, each emergency rollback. */
export const listActivations = route({ role: requireRole('auditor') }, async ({ app }) => ({
  activations: (await app.changeControl.store.activations()).map(activationJson),
}));
