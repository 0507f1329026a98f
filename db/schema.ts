/**
 * The database schema (Drizzle, SQLite). Migrations are generated from this file by drizzle-kit into db/migrations
 * and committed. permission_denials keeps exactly the spec's columns plus `principal` and `trace_json`; the database
 * itself refuses UPDATE and DELETE on it (triggers in the migration).
 */
import { sql } from 'drizzle-orm';
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

export const permissionDenials = sqliteTable(
  'permission_denials',
  {
    id: integer('id').primaryKey(),
    toolCallId: text('tool_call_id'),
    toolName: text('tool_name').notNull(),
    agentName: text('agent_name'),
    argumentsJson: text('arguments_json'),
    ruleSource: text('rule_source').notNull(),
    reason: text('reason'),
    userRole: text('user_role'),
    httpMethod: text('http_method'),
    httpPath: text('http_path'),
    /** seconds since the epoch */
    timestamp: real('timestamp').notNull(),
    /** who asked: user name, agent name of an agent token, or anonymous */
    principal: text('principal'),
    /** the decision's trace (every matched rule), JSON */
    traceJson: text('trace_json'),
    /** the id returned to the caller of the decision (POST /check, PermissionDenied), so logs and rows join */
    decisionId: text('decision_id'),
    /** content hash of the configuration in force (policy_revisions) */
    policyRevision: text('policy_revision'),
    /** argument paths whose values were masked or redacted, JSON array */
    maskedPaths: text('masked_paths'),
    /** tamper evidence: the previous row's row_hash, and SHA-256 over this row's canonical encoding and prev_hash */
    prevHash: text('prev_hash'),
    rowHash: text('row_hash'),
  },
  (t) => [
    // No index on decision_id: it would cost every durable write a page (measured); decision ids are UUIDv7, so
    // `explain` finds a row through the timestamp index around the id's time, and scans only as a fallback.
    // SQLite appends the rowid to every index, so each of these also serves "newest first" for its filter.
    index('permission_denials_timestamp').on(t.timestamp),
    index('permission_denials_agent').on(t.agentName),
    index('permission_denials_rule_source').on(t.ruleSource),
    index('permission_denials_tool').on(t.toolName),
  ],
);

/**
 * Daily counts of permission_denials per (UTC day, rule source, agent, tool, role): what the denial explorer's summary
 * cards and chart read for whole days, so they answer in milliseconds over millions of denials (bench/denial-queries.ts).
 * Derived data, maintained by lib/audit/denials/rollup.ts from the rows after `high_water` (no trigger on the audit
 * table's write path). Exact because permission_denials is append-only: a counted row never changes or disappears.
 * A missing agent or role is stored as '' so that the primary key can merge it.
 */
export const denialDailyCounts = sqliteTable(
  'permission_denial_daily_counts',
  {
    /** floor(timestamp / 86400): the UTC day */
    day: integer('day').notNull(),
    ruleSource: text('rule_source').notNull(),
    agentName: text('agent_name').notNull(),
    toolName: text('tool_name').notNull(),
    userRole: text('user_role').notNull(),
    n: integer('n').notNull(),
  },
  (t) => [primaryKey({ columns: [t.day, t.ruleSource, t.agentName, t.toolName, t.userRole] })],
);

/** How far permission_denial_daily_counts has counted: every denial with id <= high_water, and none after. */
export const denialRollupState = sqliteTable('permission_denial_rollup_state', {
  id: integer('id').primaryKey(),
  highWater: integer('high_water').notNull(),
});

export const approvals = sqliteTable(
  'approvals',
  {
    id: text('id').primaryKey(),
    gate: text('gate').notNull(),
    agentName: text('agent_name').notNull(),
    toolName: text('tool_name').notNull(),
    /** the exact canonical arguments, kept for matching and re-running */
    argumentsCanonical: text('arguments_canonical').notNull(),
    /** the same arguments with secrets redacted, for display */
    argumentsRedacted: text('arguments_redacted').notNull(),
    argumentsHash: text('arguments_hash').notNull(),
    toolCallId: text('tool_call_id'),
    requestedBy: text('requested_by').notNull(),
    requestedAt: real('requested_at').notNull(),
    expiresAt: real('expires_at').notNull(),
    ruleSource: text('rule_source').notNull(),
    reason: text('reason'),
    status: text('status', { enum: ['pending', 'approved', 'rejected', 'expired', 'consumed'] }).notNull(),
    decidedBy: text('decided_by'),
    decidedAt: real('decided_at'),
    decisionReason: text('decision_reason'),
    consumedAt: real('consumed_at'),
    /** who ran the approved call (the requester, or an administrator acting for the agent) */
    consumedBy: text('consumed_by'),
    /** how many distinct people must approve (the two-person rule is 2) */
    approvalsRequired: integer('approvals_required').notNull().default(1),
    /** the roles that may approve, comma-separated, as the gate said when the call was asked */
    approverRoles: text('approver_roles').notNull().default('operator,admin'),
    /** the gate's risk and description when the call was asked, shown to the operator */
    risk: text('risk', { enum: ['low', 'medium', 'high'] }).notNull().default('medium'),
    gateDescription: text('gate_description'),
    /** when the agent runtime that asked picked up a rejection or expiry (it reports each once) */
    reportedAt: real('reported_at'),
    /** the decision that asked (its id joins the request, its approvals and its denial to the agent's logs) */
    decisionId: text('decision_id'),
    /** the MCP client that made the call, as it named itself at initialize (`Claude Desktop 1.2`); null for other calls */
    client: text('client'),
  },
  (t) => [
    // Identical pending calls of one requester share one approval (an approval belongs to who asked for it).
    uniqueIndex('approvals_one_pending_per_call')
      .on(t.agentName, t.toolName, t.argumentsHash, t.requestedBy)
      .where(sql`status = 'pending'`),
    // The newest approval of a call, read for every gated decision: found in the index, without sorting.
    index('approvals_call_newest').on(t.agentName, t.toolName, t.argumentsHash, t.requestedBy, t.requestedAt, t.id),
    index('approvals_call').on(t.agentName, t.toolName, t.argumentsHash, t.status),
    index('approvals_status_requested').on(t.status, t.requestedAt),
  ],
);

/**
 * The approvals given to a request, one row per person: a gate with `count: 2` is approved when two distinct people
 * have approved it. The primary key makes a second approval by the same person impossible, whatever the race.
 */
export const approvalVotes = sqliteTable(
  'approval_votes',
  {
    approvalId: text('approval_id')
      .notNull()
      .references(() => approvals.id),
    approver: text('approver').notNull(),
    approverRole: text('approver_role').notNull(),
    reason: text('reason'),
    at: real('at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.approvalId, t.approver] })],
);

/**
 * Every security event that is not a denial: sign-ins, users and tokens, approvals, flag and configuration changes,
 * audit reads and exports, verification, server start and stop, retention; and allowed decisions when the flag
 * decision_log_all is on. Append-only (triggers) and hash-chained like permission_denials.
 */
export const securityEvents = sqliteTable(
  'security_events',
  {
    id: integer('id').primaryKey(),
    decisionId: text('decision_id'),
    type: text('type').notNull(),
    actor: text('actor').notNull(),
    actorRole: text('actor_role'),
    outcome: text('outcome').notNull(),
    target: text('target'),
    detailJson: text('detail_json'),
    policyRevision: text('policy_revision'),
    ip: text('ip'),
    /** seconds since the epoch */
    timestamp: real('timestamp').notNull(),
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

/** Each configuration that was in force, once, by its content hash: what `swarm audit explain` re-runs a decision on. */
export const policyRevisions = sqliteTable('policy_revisions', {
  revision: text('revision').primaryKey(),
  /** JSON: the files' texts (agents, policy, gates) and the flag values */
  contentJson: text('content_json').notNull(),
  firstSeenAt: real('first_seen_at').notNull(),
});

/**
 * Policy change control (issue 28): proposed configurations, each stored as a revision (policy_revisions) with the
 * impact of the change on the recorded calls and its policy tests' result; the votes of the people who may approve;
 * and the activations, in order: the configuration in force is the newest activation's revision, on every server.
 * Votes and activations are never changed once written (append-only triggers); each is backed by a security event.
 */
export const policyProposals = sqliteTable(
  'policy_proposals',
  {
    id: text('id').primaryKey(),
    /** change: new files; rollback: the files of an earlier revision */
    kind: text('kind', { enum: ['change', 'rollback'] }).notNull(),
    /** the proposed configuration (policy_revisions) */
    revision: text('revision').notNull(),
    /** the revision in force when it was proposed (its impact and diff are against it) */
    baseRevision: text('base_revision'),
    message: text('message').notNull(),
    proposedBy: text('proposed_by').notNull(),
    proposedAt: real('proposed_at').notNull(),
    status: text('status', { enum: ['open', 'approved', 'activated', 'rejected', 'withdrawn'] }).notNull(),
    /** the policy tests' result, JSON: { passed, failed, files, failures: [{ name, position, message }] } */
    testsJson: text('tests_json').notNull(),
    /** the impact on the recorded calls, JSON (lib/audit/impact.ts ImpactReport with its period) */
    impactJson: text('impact_json').notNull(),
    approvalsRequired: integer('approvals_required').notNull(),
    /** the roles that may approve, comma-separated */
    approverRoles: text('approver_roles').notNull(),
    decidedBy: text('decided_by'),
    decidedAt: real('decided_at'),
    decisionReason: text('decision_reason'),
    /** a rollback activated at once through the break-glass path, without votes */
    emergency: integer('emergency', { mode: 'boolean' }).notNull().default(false),
  },
  (t) => [index('policy_proposals_status').on(t.status, t.proposedAt)],
);

export const policyVotes = sqliteTable(
  'policy_votes',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    proposalId: text('proposal_id').notNull(),
    voter: text('voter').notNull(),
    voterRole: text('voter_role').notNull(),
    vote: text('vote', { enum: ['approve', 'reject'] }).notNull(),
    reason: text('reason').notNull(),
    votedAt: real('voted_at').notNull(),
    /** the row's seal (lib/auth/seal.ts): a vote without it counts for nothing */
    mac: text('mac'),
  },
  (t) => [uniqueIndex('policy_votes_one_each').on(t.proposalId, t.voter)],
);

export const policyActivations = sqliteTable('policy_activations', {
  seq: integer('seq').primaryKey({ autoIncrement: true }),
  revision: text('revision').notNull(),
  /** the proposal activated (null: the files on disk, seeded at the first start under change control) */
  proposalId: text('proposal_id'),
  kind: text('kind', { enum: ['seed', 'proposal', 'emergency'] }).notNull(),
  activatedBy: text('activated_by').notNull(),
  activatedAt: real('activated_at').notNull(),
  /** the row's seal (lib/auth/seal.ts): an activation without it is not loaded */
  mac: text('mac'),
});


/**
 * Signed checkpoints of the audit chains (C2SP signed-note checkpoint format): the chain head, its row count and the
 * time, signed with the installation's Ed25519 key. Verification checks the chains against every checkpoint.
 */
export const auditCheckpoints = sqliteTable(
  'audit_checkpoints',
  {
    id: integer('id').primaryKey(),
    /** permission_denials or security_events */
    chain: text('chain').notNull(),
    /** the id of the newest row covered (ids are consecutive within a chain) */
    size: integer('size').notNull(),
    headHash: text('head_hash').notNull(),
    createdAt: real('created_at').notNull(),
    /** the signed note, exactly as signed */
    note: text('note').notNull(),
  },
  (t) => [index('audit_checkpoints_chain').on(t.chain, t.size)],
);

/** Rows moved out by `swarm audit archive`: verification of what remains starts after `upToId`, at `headHash`. */
export const auditArchives = sqliteTable('audit_archives', {
  id: integer('id').primaryKey(),
  chain: text('chain').notNull(),
  upToId: integer('up_to_id').notNull(),
  headHash: text('head_hash').notNull(),
  rows: integer('rows').notNull(),
  file: text('file').notNull(),
  fileSha256: text('file_sha256').notNull(),
  archivedAt: real('archived_at').notNull(),
  /** the signed checkpoint of the archived prefix's last row, with its `archive` extension line (migration 0010) */
  note: text('note'),
});

export const flagOverrides = sqliteTable('flag_overrides', {
  name: text('name').primaryKey(),
  value: integer('value', { mode: 'boolean' }).notNull(),
  setBy: text('set_by').notNull(),
  setAt: real('set_at').notNull(),
  reason: text('reason').notNull(),
  /** the row's seal (lib/auth/seal.ts): an override without it is not in force */
  mac: text('mac'),
});

export const flagChanges = sqliteTable(
  'flag_changes',
  {
    id: integer('id').primaryKey(),
    name: text('name').notNull(),
    oldValue: integer('old_value', { mode: 'boolean' }),
    newValue: integer('new_value', { mode: 'boolean' }),
    /** override set, override removed, or a change that was refused (an invariant, a flag a profile locks) */
    action: text('action', { enum: ['set', 'unset', 'refused'] }).notNull(),
    changedBy: text('changed_by').notNull(),
    changedAt: real('changed_at').notNull(),
    reason: text('reason').notNull(),
  },
  (t) => [index('flag_changes_name').on(t.name, t.changedAt)],
);

export const users = sqliteTable('users', {
  id: integer('id').primaryKey(),
  username: text('username').notNull().unique(),
  role: text('role', { enum: ['viewer', 'auditor', 'operator', 'admin'] }).notNull(),
  passwordHash: text('password_hash'),
  createdAt: real('created_at').notNull(),
  disabled: integer('disabled', { mode: 'boolean' }).notNull().default(false),
  /** single sign-on: the provider's issuer and the person's subject there (a user first seen through SSO; never a password) */
  issuer: text('issuer'),
  subject: text('subject'),
  /** the row's seal: a MAC with the installation's credentials key (lib/auth/seal.ts) */
  mac: text('mac'),
}, (t) => [
  uniqueIndex('users_identity').on(t.issuer, t.subject),
  // One name whatever the case of its letters (lib/auth/user-name.ts): "ADMIN" is taken once "admin" is.
  uniqueIndex('users_username_folded').on(sql`lower(${t.username})`),
]);

export const sessions = sqliteTable(
  'sessions',
  {
    /** sha-256 of the cookie value: a stolen database does not yield live sessions */
    idHash: text('id_hash').primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id),
    createdAt: real('created_at').notNull(),
    expiresAt: real('expires_at').notNull(),
    /** single sign-on: the provider (config id) and its issuer, the person's subject and the provider session (sid) */
    ssoProvider: text('sso_provider'),
    ssoIssuer: text('sso_issuer'),
    ssoSubject: text('sso_subject'),
    ssoSid: text('sso_sid'),
    /** the refresh token and ID token, sealed (lib/sso/seal.ts): never stored or shown in the clear */
    ssoRefreshToken: text('sso_refresh_token'),
    ssoIdToken: text('sso_id_token'),
    /** when the session next asks the provider whether it still stands (refresh); null: not an SSO session */
    ssoRefreshAt: real('sso_refresh_at'),
    /** the row's seal (lib/auth/seal.ts) */
    mac: text('mac'),
  },
  (t) => [index('sessions_user').on(t.userId), index('sessions_sso').on(t.ssoIssuer, t.ssoSubject)],
);

export const apiTokens = sqliteTable('api_tokens', {
  id: integer('id').primaryKey(),
  /** sha-256 of the token; the token itself is shown once and never stored */
  tokenHash: text('token_hash').notNull().unique(),
  name: text('name').notNull(),
  /** a user's token acts with the user's role */
  userId: integer('user_id').references(() => users.id),
  /** an agent's token acts only as this agent */
  agentName: text('agent_name'),
  createdAt: real('created_at').notNull(),
  revokedAt: real('revoked_at'),
  /** (migration 0014, issue 27) when the token stops authenticating, seconds; null: never (no profile sets a limit) */
  expiresAt: real('expires_at'),
  /** the last time it authenticated, written in the background at most once a minute per token (lib/auth/last-use.ts) */
  lastUsedAt: real('last_used_at'),
  /** what it may do, comma-separated: `decide` (agents), `read`, `operate`, `admin` (people, never above their role) */
  scopes: text('scopes').notNull().default(''),
  /** the token this one replaced (`swarm tokens rotate`): the old one expires after the overlap */
  rotatedFrom: integer('rotated_from'),
  /** set by the sweeper: the token expired (`expired`) or went unused too long (`inactive`); it no longer authenticates */
  disabledAt: real('disabled_at'),
  disabledReason: text('disabled_reason'),
  /** the row's seal (lib/auth/seal.ts) */
  mac: text('mac'),
});

export type DenialRow = typeof permissionDenials.$inferSelect;
export type NewDenialRow = typeof permissionDenials.$inferInsert;
export type ApprovalRow = typeof approvals.$inferSelect;
export type ApprovalVoteRow = typeof approvalVotes.$inferSelect;
export type SecurityEventRow = typeof securityEvents.$inferSelect;
export type AuditCheckpointRow = typeof auditCheckpoints.$inferSelect;
export type AuditArchiveRow = typeof auditArchives.$inferSelect;
export type UserRow = typeof users.$inferSelect;
export type ApiTokenRow = typeof apiTokens.$inferSelect;
export type FlagOverrideRow = typeof flagOverrides.$inferSelect;
export type FlagChangeRow = typeof flagChanges.$inferSelect;

/**
 * Notifications to people (config/notifications.yaml): one row per message to one channel, written by the process that
 * saw the event (inside the transaction of the event when there is one) and sent by whichever process claims it first.
 * `dedupe_key` makes an event notify each channel once, whichever process saw it; `claim_token` and `lease_until` make
 * two deliverers never send the same row at once (an atomic UPDATE claims it; a lease that runs out is claimed again).
 */
export const notificationDeliveries = sqliteTable(
  'notification_deliveries',
  {
    id: integer('id').primaryKey(),
    /** `<event>:<subject>:<channel>` (a burst adds its window start): one row per event and channel */
    dedupeKey: text('dedupe_key').notNull().unique(),
    channel: text('channel').notNull(),
    channelKind: text('channel_kind', { enum: ['webhook', 'slack'] }).notNull(),
    event: text('event', { enum: ['approval_requested', 'approval_expiring', 'denial_burst'] }).notNull(),
    /** the approval id, or the burst rule id */
    subject: text('subject').notNull(),
    /** the exact JSON body sent (arguments masked as the audit trail masks them); never a secret */
    body: text('body').notNull(),
    status: text('status', { enum: ['pending', 'sending', 'delivered', 'failed'] }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    maxAttempts: integer('max_attempts').notNull(),
    nextAttemptAt: real('next_attempt_at').notNull(),
    claimToken: text('claim_token'),
    leaseUntil: real('lease_until'),
    /** the HTTP status of the last attempt (null when no answer came) and what went wrong */
    lastStatus: integer('last_status'),
    lastError: text('last_error'),
    /** which process recorded it (`listener`, `next`, or `app`) */
    origin: text('origin').notNull(),
    createdAt: real('created_at').notNull(),
    updatedAt: real('updated_at').notNull(),
    deliveredAt: real('delivered_at'),
  },
  (t) => [
    index('notification_deliveries_due').on(t.status, t.nextAttemptAt),
    index('notification_deliveries_created').on(t.createdAt),
    index('notification_deliveries_subject').on(t.event, t.subject, t.createdAt),
  ],
);

export type NotificationDeliveryRow = typeof notificationDeliveries.$inferSelect;

/**
 * The calls a `rate_limit` hook let through, one row each, so that every process on the database counts the same window
 * (the server's two processes, a CLI hook adapter, several servers). Pruned after a day (the longest window).
 */
export const hookRateCalls = sqliteTable(
  'hook_rate_calls',
  {
    id: integer('id').primaryKey(),
    hook: text('hook').notNull(),
    agent: text('agent').notNull(),
    tool: text('tool').notNull(),
    /** seconds since the epoch */
    at: real('at').notNull(),
  },
  (t) => [index('hook_rate_calls_window').on(t.hook, t.agent, t.tool, t.at)],
);

/**
 * One row whose `n` moves with every change to the tables a token's principal is read from (api_tokens, users),
 * by the triggers of migration 0009, whatever connection or process makes it. The token cache of the SQLite server
 * (lib/auth/tokens-sqlite.ts) is valid while `n` stays the same: reading it is one indexed row, where asking SQLite whether
 * anything at all changed (data_version, total_changes) cost twice as much and was moved by every denial written.
 */
export const authGeneration = sqliteTable('auth_generation', {
  id: integer('id').primaryKey(),
  n: integer('n').notNull(),
});

/**
 * Sign-in attempts, per user name (`user:<name in lower case>`) and per client address (`ip:<address>`), shared by every
 * process on the database (the Next.js server that signs people in, several servers on one database): the failures
 * that slow the next attempt down, the lock a compliance profile puts on a user name after too many of them, and the
 * attempt in progress (`busy_until`), so that attempts for one user name are taken one at a time (lib/auth/attempts.ts).
 * Rows are forgotten when quiet (pruned).
 */
export const loginAttempts = sqliteTable(
  'login_attempts',
  {
    key: text('key').primaryKey(),
    failures: integer('failures').notNull().default(0),
    /** seconds since the epoch */
    lastFailureAt: real('last_failure_at'),
    lockedUntil: real('locked_until'),
    busyUntil: real('busy_until'),
  },
  (t) => [index('login_attempts_last_failure').on(t.lastFailureAt)],
);

/**
 * The back-channel logout tokens taken (lib/sso/logout-token.ts), by issuer and jti, until no copy of one could be
 * taken again (its iat plus the age a logout token may have): a replayed token is refused. The sweeper deletes the rows
 * past that time.
 */
export const ssoLogoutTokens = sqliteTable(
  'sso_logout_tokens',
  {
    issuer: text('issuer').notNull(),
    jti: text('jti').notNull(),
    /** seconds since the epoch */
    expiresAt: real('expires_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.issuer, t.jti] }), index('sso_logout_tokens_expiry').on(t.expiresAt)],
);


/**
 * The MCP gateway's pins (issue 42): each upstream tool's definition as it was reviewed, by the SHA-256 of its
 * canonical JSON (lib/mcp/pins). A row is a definition `accepted` (the pin: the newest accepted row of a server's tool
 * is the one in force; first sight pins a tool as it is, unless a compliance profile holds new tools) or `held` (seen
 * differing from the pin, waiting for an operator). Append-only: an acceptance is a new row. Each row carries a MAC
 * with the installation's key (lib/auth/seal.ts) over its id and what it decides: a row written with the database file
 * alone counts for nothing. The canonical definition is kept to show the difference, and must hash to `sha256`.
 */
export const mcpToolPins = sqliteTable(
  'mcp_tool_pins',
  {
    /** given by the store (the newest id plus one, under the trail's lock): the MAC covers it */
    id: integer('id').primaryKey(),
    serverId: text('server_id').notNull(),
    toolName: text('tool_name').notNull(),
    sha256: text('sha256').notNull(),
    /** the canonical JSON of {name, title, description, inputSchema, outputSchema, annotations} */
    definitionJson: text('definition_json').notNull(),
    state: text('state', { enum: ['accepted', 'held'] }).notNull(),
    /** who accepted it (`system` for a first sight); null for a held row */
    acceptedBy: text('accepted_by'),
    /** first_use, operator, or proposal:<id> (change control); null for a held row */
    acceptedVia: text('accepted_via'),
    /** when it was written (seconds since the epoch): accepted, or first seen held */
    at: real('at').notNull(),
    /** the row's seal (lib/auth/seal.ts): a row without it counts for nothing */
    mac: text('mac'),
  },
  (t) => [index('mcp_tool_pins_tool').on(t.serverId, t.toolName, t.id)],
);
export type McpToolPinRow = typeof mcpToolPins.$inferSelect;
