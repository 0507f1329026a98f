/**
 * The database schema on PostgreSQL (Drizzle, pg-core): the same tables and columns as db/schema.ts (SQLite), so that
 * one store contract has two implementations and `swarm db copy` moves a trail across unchanged (tests/pg-schema
 * compares the two column by column). Migrations are generated from this file by drizzle-kit into db/pg/migrations
 * (drizzle.pg.config.ts) and committed; the append-only triggers are written by hand beside them.
 *
 * Types: times are seconds since the epoch as double precision (SQLite's REAL), ids bigint read as JS numbers, JSON
 * kept as text (the hash chain covers the exact text written). The audit chains' ids are given by the chain writer
 * (dense, in chain order), never by a sequence.
 */
import { sql } from 'drizzle-orm';
import { bigint, boolean, doublePrecision, index, integer, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';

const id = () => bigint('id', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity();
const time = (name: string) => doublePrecision(name);

export const permissionDenials = pgTable(
  'permission_denials',
  {
    id: bigint('id', { mode: 'number' }).primaryKey(),
    toolCallId: text('tool_call_id'),
    toolName: text('tool_name').notNull(),
    agentName: text('agent_name'),
    argumentsJson: text('arguments_json'),
    ruleSource: text('rule_source').notNull(),
    reason: text('reason'),
    userRole: text('user_role'),
    httpMethod: text('http_method'),
    httpPath: text('http_path'),
    timestamp: time('timestamp').notNull(),
    principal: text('principal'),
    traceJson: text('trace_json'),
    decisionId: text('decision_id'),
    policyRevision: text('policy_revision'),
    maskedPaths: text('masked_paths'),
    prevHash: text('prev_hash'),
    rowHash: text('row_hash'),
  },
  (t) => [
    index('permission_denials_timestamp').on(t.timestamp, t.id),
    index('permission_denials_agent').on(t.agentName, t.id),
    index('permission_denials_rule_source').on(t.ruleSource, t.id),
    index('permission_denials_tool').on(t.toolName, t.id),
  ],
);

export const denialDailyCounts = pgTable(
  'permission_denial_daily_counts',
  {
    day: integer('day').notNull(),
    ruleSource: text('rule_source').notNull(),
    agentName: text('agent_name').notNull(),
    toolName: text('tool_name').notNull(),
    userRole: text('user_role').notNull(),
    n: integer('n').notNull(),
  },
  (t) => [primaryKey({ columns: [t.day, t.ruleSource, t.agentName, t.toolName, t.userRole] })],
);

export const denialRollupState = pgTable('permission_denial_rollup_state', {
  id: integer('id').primaryKey(),
  highWater: bigint('high_water', { mode: 'number' }).notNull(),
});

export const approvals = pgTable(
  'approvals',
  {
    id: text('id').primaryKey(),
    gate: text('gate').notNull(),
    agentName: text('agent_name').notNull(),
    toolName: text('tool_name').notNull(),
    argumentsCanonical: text('arguments_canonical').notNull(),
    argumentsRedacted: text('arguments_redacted').notNull(),
    argumentsHash: text('arguments_hash').notNull(),
    toolCallId: text('tool_call_id'),
    requestedBy: text('requested_by').notNull(),
    requestedAt: time('requested_at').notNull(),
    expiresAt: time('expires_at').notNull(),
    ruleSource: text('rule_source').notNull(),
    reason: text('reason'),
    status: text('status', { enum: ['pending', 'approved', 'rejected', 'expired', 'consumed'] }).notNull(),
    decidedBy: text('decided_by'),
    decidedAt: time('decided_at'),
    decisionReason: text('decision_reason'),
    consumedAt: time('consumed_at'),
    /** who ran the approved call (the requester, or an administrator acting for the agent) */
    consumedBy: text('consumed_by'),
    approvalsRequired: integer('approvals_required').notNull().default(1),
    approverRoles: text('approver_roles').notNull().default('operator,admin'),
    risk: text('risk', { enum: ['low', 'medium', 'high'] }).notNull().default('medium'),
    gateDescription: text('gate_description'),
    reportedAt: time('reported_at'),
    decisionId: text('decision_id'),
    /** the MCP client that made the call, as it named itself at initialize; null for other calls */
    client: text('client'),
  },
  (t) => [
    // Identical pending calls of one requester share one approval (an approval belongs to who asked for it).
    uniqueIndex('approvals_one_pending_per_call')
      .on(t.agentName, t.toolName, t.argumentsHash, t.requestedBy)
      .where(sql`status = 'pending'`),
    // The newest approval of a call by one requester, read for every gated decision: found in the index, without sorting.
    index('approvals_call_newest').on(t.agentName, t.toolName, t.argumentsHash, t.requestedBy, t.requestedAt, t.id),
    index('approvals_call').on(t.agentName, t.toolName, t.argumentsHash, t.status),
    index('approvals_status_requested').on(t.status, t.requestedAt),
  ],
);

export const approvalVotes = pgTable(
  'approval_votes',
  {
    approvalId: text('approval_id')
      .notNull()
      .references(() => approvals.id),
    approver: text('approver').notNull(),
    approverRole: text('approver_role').notNull(),
    reason: text('reason'),
    at: time('at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.approvalId, t.approver] })],
);

export const securityEvents = pgTable(
  'security_events',
  {
    id: bigint('id', { mode: 'number' }).primaryKey(),
    decisionId: text('decision_id'),
    type: text('type').notNull(),
    actor: text('actor').notNull(),
    actorRole: text('actor_role'),
    outcome: text('outcome').notNull(),
    target: text('target'),
    detailJson: text('detail_json'),
    policyRevision: text('policy_revision'),
    ip: text('ip'),
    timestamp: time('timestamp').notNull(),
    prevHash: text('prev_hash'),
    rowHash: text('row_hash'),
  },
  (t) => [
    index('security_events_type_time').on(t.type, t.timestamp),
    index('security_events_time').on(t.timestamp),
    index('security_events_actor').on(t.actor),
    index('security_events_decision').on(t.decisionId),
    // The events of one approval (its id is their target), read before an approved, unused approval may be used.
    index('security_events_target').on(t.target),
  ],
);

export const policyRevisions = pgTable('policy_revisions', {
  revision: text('revision').primaryKey(),
  contentJson: text('content_json').notNull(),
  firstSeenAt: time('first_seen_at').notNull(),
});

export const policyProposals = pgTable(
  'policy_proposals',
  {
    id: text('id').primaryKey(),
    kind: text('kind', { enum: ['change', 'rollback'] }).notNull(),
    revision: text('revision').notNull(),
    baseRevision: text('base_revision'),
    message: text('message').notNull(),
    proposedBy: text('proposed_by').notNull(),
    proposedAt: time('proposed_at').notNull(),
    status: text('status', { enum: ['open', 'approved', 'activated', 'rejected', 'withdrawn'] }).notNull(),
    testsJson: text('tests_json').notNull(),
    impactJson: text('impact_json').notNull(),
    approvalsRequired: integer('approvals_required').notNull(),
    approverRoles: text('approver_roles').notNull(),
    decidedBy: text('decided_by'),
    decidedAt: time('decided_at'),
    decisionReason: text('decision_reason'),
    emergency: boolean('emergency').notNull().default(false),
  },
  (t) => [index('policy_proposals_status').on(t.status, t.proposedAt)],
);

export const policyVotes = pgTable(
  'policy_votes',
  {
    id: id(),
    proposalId: text('proposal_id').notNull(),
    voter: text('voter').notNull(),
    voterRole: text('voter_role').notNull(),
    vote: text('vote', { enum: ['approve', 'reject'] }).notNull(),
    reason: text('reason').notNull(),
    votedAt: time('voted_at').notNull(),
    /** the row's seal (lib/auth/seal.ts): a vote without it counts for nothing */
    mac: text('mac'),
  },
  (t) => [uniqueIndex('policy_votes_one_each').on(t.proposalId, t.voter)],
);

export const policyActivations = pgTable('policy_activations', {
  seq: bigint('seq', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
  revision: text('revision').notNull(),
  proposalId: text('proposal_id'),
  kind: text('kind', { enum: ['seed', 'proposal', 'emergency'] }).notNull(),
  activatedBy: text('activated_by').notNull(),
  activatedAt: time('activated_at').notNull(),
  /** the row's seal (lib/auth/seal.ts): an activation without it is not loaded */
  mac: text('mac'),
});


export const auditCheckpoints = pgTable(
  'audit_checkpoints',
  {
    id: id(),
    chain: text('chain').notNull(),
    size: bigint('size', { mode: 'number' }).notNull(),
    headHash: text('head_hash').notNull(),
    createdAt: time('created_at').notNull(),
    note: text('note').notNull(),
  },
  (t) => [index('audit_checkpoints_chain').on(t.chain, t.size)],
);

export const auditArchives = pgTable('audit_archives', {
  id: id(),
  chain: text('chain').notNull(),
  upToId: bigint('up_to_id', { mode: 'number' }).notNull(),
  headHash: text('head_hash').notNull(),
  rows: bigint('rows', { mode: 'number' }).notNull(),
  file: text('file').notNull(),
  fileSha256: text('file_sha256').notNull(),
  archivedAt: time('archived_at').notNull(),
  /** the signed checkpoint of the archived prefix's last row, with its `archive` extension line (migration 0005) */
  note: text('note'),
});

export const flagOverrides = pgTable('flag_overrides', {
  name: text('name').primaryKey(),
  value: boolean('value').notNull(),
  setBy: text('set_by').notNull(),
  setAt: time('set_at').notNull(),
  reason: text('reason').notNull(),
  /** the row's seal (lib/auth/seal.ts): an override without it is not in force */
  mac: text('mac'),
});

export const flagChanges = pgTable(
  'flag_changes',
  {
    id: id(),
    name: text('name').notNull(),
    oldValue: boolean('old_value'),
    newValue: boolean('new_value'),
    action: text('action', { enum: ['set', 'unset', 'refused'] }).notNull(),
    changedBy: text('changed_by').notNull(),
    changedAt: time('changed_at').notNull(),
    reason: text('reason').notNull(),
  },
  (t) => [index('flag_changes_name').on(t.name, t.changedAt)],
);

export const users = pgTable('users', {
  id: id(),
  username: text('username').notNull().unique(),
  role: text('role', { enum: ['viewer', 'auditor', 'operator', 'admin'] }).notNull(),
  passwordHash: text('password_hash'),
  createdAt: time('created_at').notNull(),
  disabled: boolean('disabled').notNull().default(false),
  /** single sign-on: the provider's issuer and the person's subject there (a user first seen through SSO; never a password) */
  issuer: text('issuer'),
  subject: text('subject'),
  /** the row's seal: a MAC with the installation's credentials key (lib/auth/seal.ts) */
  mac: text('mac'),
}, (t) => [
  uniqueIndex('users_identity').on(t.issuer, t.subject),
  // One name whatever the case of its letters, folded in ASCII whatever the database's locale (db/schema.ts).
  uniqueIndex('users_username_folded').on(sql`lower(${t.username} COLLATE "C")`),
]);

export const sessions = pgTable(
  'sessions',
  {
    idHash: text('id_hash').primaryKey(),
    userId: bigint('user_id', { mode: 'number' })
      .notNull()
      .references(() => users.id),
    createdAt: time('created_at').notNull(),
    expiresAt: time('expires_at').notNull(),
    /** single sign-on: the provider (config id) and its issuer, the person's subject and the provider session (sid) */
    ssoProvider: text('sso_provider'),
    ssoIssuer: text('sso_issuer'),
    ssoSubject: text('sso_subject'),
    ssoSid: text('sso_sid'),
    /** the refresh token and ID token, sealed (lib/sso/seal.ts): never stored or shown in the clear */
    ssoRefreshToken: text('sso_refresh_token'),
    ssoIdToken: text('sso_id_token'),
    /** when the session next asks the provider whether it still stands (refresh); null: not an SSO session */
    ssoRefreshAt: time('sso_refresh_at'),
    /** the row's seal (lib/auth/seal.ts) */
    mac: text('mac'),
  },
  (t) => [index('sessions_user').on(t.userId), index('sessions_sso').on(t.ssoIssuer, t.ssoSubject)],
);

export const apiTokens = pgTable('api_tokens', {
  id: id(),
  tokenHash: text('token_hash').notNull().unique(),
  name: text('name').notNull(),
  userId: bigint('user_id', { mode: 'number' }).references(() => users.id),
  agentName: text('agent_name'),
  createdAt: time('created_at').notNull(),
  revokedAt: time('revoked_at'),
  expiresAt: time('expires_at'),
  lastUsedAt: time('last_used_at'),
  scopes: text('scopes').notNull().default(''),
  rotatedFrom: bigint('rotated_from', { mode: 'number' }),
  disabledAt: time('disabled_at'),
  disabledReason: text('disabled_reason'),
  /** the row's seal (lib/auth/seal.ts) */
  mac: text('mac'),
});

export const notificationDeliveries = pgTable(
  'notification_deliveries',
  {
    id: id(),
    dedupeKey: text('dedupe_key').notNull().unique(),
    channel: text('channel').notNull(),
    channelKind: text('channel_kind', { enum: ['webhook', 'slack'] }).notNull(),
    event: text('event', { enum: ['approval_requested', 'approval_expiring', 'denial_burst'] }).notNull(),
    subject: text('subject').notNull(),
    body: text('body').notNull(),
    status: text('status', { enum: ['pending', 'sending', 'delivered', 'failed'] }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    maxAttempts: integer('max_attempts').notNull(),
    nextAttemptAt: time('next_attempt_at').notNull(),
    claimToken: text('claim_token'),
    leaseUntil: time('lease_until'),
    lastStatus: integer('last_status'),
    lastError: text('last_error'),
    origin: text('origin').notNull(),
    createdAt: time('created_at').notNull(),
    updatedAt: time('updated_at').notNull(),
    deliveredAt: time('delivered_at'),
  },
  (t) => [
    index('notification_deliveries_due').on(t.status, t.nextAttemptAt),
    index('notification_deliveries_created').on(t.createdAt),
    index('notification_deliveries_subject').on(t.event, t.subject, t.createdAt),
  ],
);

export const hookRateCalls = pgTable(
  'hook_rate_calls',
  {
    id: id(),
    hook: text('hook').notNull(),
    agent: text('agent').notNull(),
    tool: text('tool').notNull(),
    at: time('at').notNull(),
  },
  (t) => [index('hook_rate_calls_window').on(t.hook, t.agent, t.tool, t.at)],
);

/** Sign-in attempts per user name and per client address, shared by the servers (db/schema.ts, lib/auth/attempts.ts). */
export const loginAttempts = pgTable(
  'login_attempts',
  {
    key: text('key').primaryKey(),
    failures: integer('failures').notNull().default(0),
    lastFailureAt: time('last_failure_at'),
    lockedUntil: time('locked_until'),
    busyUntil: time('busy_until'),
  },
  (t) => [index('login_attempts_last_failure').on(t.lastFailureAt)],
);

/** The back-channel logout tokens taken, until they could no longer be taken again (db/schema.ts). */
export const ssoLogoutTokens = pgTable(
  'sso_logout_tokens',
  {
    issuer: text('issuer').notNull(),
    jti: text('jti').notNull(),
    expiresAt: time('expires_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.issuer, t.jti] }), index('sso_logout_tokens_expiry').on(t.expiresAt)],
);

/** The MCP gateway's pins of upstream tool definitions (db/schema.ts, lib/mcp/pins): ids given by the store. */
export const mcpToolPins = pgTable(
  'mcp_tool_pins',
  {
    id: bigint('id', { mode: 'number' }).primaryKey(),
    serverId: text('server_id').notNull(),
    toolName: text('tool_name').notNull(),
    sha256: text('sha256').notNull(),
    definitionJson: text('definition_json').notNull(),
    state: text('state', { enum: ['accepted', 'held'] }).notNull(),
    acceptedBy: text('accepted_by'),
    acceptedVia: text('accepted_via'),
    at: time('at').notNull(),
    mac: text('mac'),
  },
  (t) => [index('mcp_tool_pins_tool').on(t.serverId, t.toolName, t.id)],
);
