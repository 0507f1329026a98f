/**
 * zod schemas of what the API answers: one definition of each answer, read by the OpenAPI document (the `response` of
 * each route in lib/http/route-table.ts), checked against the real handlers (tests/response-schemas.test.ts), and
 * parsed by the console's API client (app/_lib/api-client.ts), so a page and the server cannot drift apart unseen.
 *
 * Pure zod and nothing else: the browser imports this module, so it must not pull a store, the engine or a Node API
 * into the bundle (lib/http/schemas.ts, the inputs, does; it re-exports these for the server).
 */
import { z } from 'zod';

// ---------------------------------------------------------------------------------------------------------------
// Errors: every refusal and failure of the API has this body (lib/http/route.ts).
// ---------------------------------------------------------------------------------------------------------------

/** One problem of a request that is not valid (400): where it is (path, query, body) and what is wrong. */
export const apiIssueSchema = z.object({
  in: z.string().optional(),
  path: z.string(),
  message: z.string(),
  code: z.string().optional(),
});
export type ApiIssue = z.infer<typeof apiIssueSchema>;

export const apiErrorBodySchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    /** the rule that refused (403) */
    rule_source: z.string().optional(),
    /** the decision that refused, to find its denial */
    decision_id: z.string().nullable().optional(),
    issues: z.array(apiIssueSchema).optional(),
    /** more about the error, where the server has it (an AppError's details) */
    details: z.unknown().optional(),
  }),
});

// ---------------------------------------------------------------------------------------------------------------
// Denials (GET /api/v1/permissions/denials and below)
// ---------------------------------------------------------------------------------------------------------------

export const denialSchema = z.object({
  id: z.number(),
  tool_call_id: z.string().nullable(),
  tool_name: z.string(),
  agent_name: z.string().nullable(),
  arguments_json: z.string().nullable(),
  rule_source: z.string(),
  reason: z.string().nullable(),
  user_role: z.string().nullable(),
  http_method: z.string().nullable(),
  http_path: z.string().nullable(),
  timestamp: z.number(),
  principal: z.string().nullable(),
  /** joins the row to the caller's decision, and the configuration it was made under */
  decision_id: z.string().nullable(),
  policy_revision: z.string().nullable(),
  /** the argument paths the trail masked (card numbers and the like) */
  masked_paths: z.array(z.string()),
});
export type DenialJson = z.infer<typeof denialSchema>;

/** One page of denials; `next_cursor` continues it (null: the last page). */
export const denialPageSchema = z.object({ denials: z.array(denialSchema), next_cursor: z.string().nullable() });
export type DenialPage = z.infer<typeof denialPageSchema>;

/** One rule of a decision's trace; a hook's entry says what the hook did. */
export const traceEntrySchema = z.object({
  decision: z.string(),
  priority: z.number(),
  rule_source: z.string(),
  reason: z.string(),
  hook: z.record(z.string(), z.unknown()).optional(),
});

/** What one before_tool_call hook did to a call (POST /api/v1/permissions/check). */
export const hookOutcomeSchema = z.object({
  hook: z.string(),
  event: z.string(),
  action: z.string(),
  outcome: z.string(),
  /** the hook blocked the call */
  blocks: z.boolean(),
  reason: z.string().nullable(),
  /** the argument paths it rewrote */
  changed: z.array(z.string()),
  ms: z.number().nullable(),
});

/** The decision on one tool call (POST /api/v1/permissions/check, and each result of a batch). */
export const checkAnswerSchema = z.object({
  /** the audit row's id, to join a log line or an outcome report to it (null for a dry run) */
  decision_id: z.string().nullable(),
  decision: z.enum(['ALLOW', 'DENY', 'ASK']),
  /** the rule that decided: `agent_allowlist`, `rbac`, `flag:NAME`, `hitl:GATE`, `policy:ID`, `hook:NAME`… */
  rule_source: z.string(),
  reason: z.string(),
  /** the approval request of an ASK (null otherwise) */
  approval_id: z.string().nullable(),
  /** whether a denial was written to the audit trail before this answer */
  recorded: z.boolean(),
  /** the before_tool_call hooks that rewrote the arguments */
  arguments_changed_by: z.array(z.string()),
  /** the arguments to run the call with when a hook rewrote them (null: run it with the arguments asked about) */
  arguments: z.record(z.string(), z.unknown()).nullable(),
  hooks: z.array(hookOutcomeSchema),
  trace: z.array(traceEntrySchema),
});
export type CheckAnswerJson = z.infer<typeof checkAnswerSchema>;

/** The decisions on a batch of tool calls, in the order asked (POST /api/v1/permissions/check/batch). */
export const checkBatchAnswerSchema = z.object({ results: z.array(checkAnswerSchema) });

/** An outcome report accepted (POST /api/v1/permissions/finished, 202): the after_tool_call hooks hear of it. */
export const finishedAnswerSchema = z.object({ accepted: z.literal(true) });

/** Which tools an agent may ever use, in the order asked (POST /api/v1/permissions/tools). */
export const toolVisibilitySchema = z.object({ revision: z.string(), tools: z.array(z.enum(['hidden', 'open', 'gated'])) });

/** A pin of an MCP tool's definition (lib/mcp/pins). */
export const mcpPinSchema = z.object({
  server: z.string(),
  tool: z.string(),
  sha256: z.string(),
  accepted_by: z.string().nullable(),
  /** first_use, operator, or proposal:<id> */
  accepted_via: z.string().nullable(),
  accepted_at: z.number(),
});
export const mcpPinListingSchema = z.object({
  change_control: z.boolean(),
  hold_new_tools: z.array(z.string()),
  pins: z.array(mcpPinSchema),
  held: z.array(
    z.object({
      server: z.string(),
      tool: z.string(),
      sha256: z.string(),
      seen_at: z.number(),
      pinned_sha256: z.string().nullable(),
      definition: z.string(),
      pinned_definition: z.string().nullable(),
      proposal: z.string().nullable(),
    }),
  ),
});
export const mcpPinAcceptanceSchema = z.object({
  status: z.enum(['accepted', 'proposed']),
  pin: mcpPinSchema.nullable(),
  previous: mcpPinSchema.nullable(),
  proposal: z.object({ id: z.string(), revision: z.string(), approvals_required: z.number() }).nullable(),
});
export const mcpObservationSchema = z.object({ tools: z.array(z.object({ tool: z.string(), sha256: z.string(), state: z.enum(['pinned', 'held']) })) });

/** One denial with the trace of its decision (null: none was stored, as for a rejected approval). */
export const denialDetailSchema = denialSchema.extend({ trace: z.array(traceEntrySchema).nullable() });
export type DenialDetail = z.infer<typeof denialDetailSchema>;

const ranked = <T extends z.ZodType>(value: T) => z.array(z.object({ value, count: z.number() }));

export const denialSummarySchema = z.object({
  total: z.number(),
  top_agents: ranked(z.string().nullable()),
  top_rule_sources: ranked(z.string()),
  top_tools: ranked(z.string()),
  families: ranked(z.string()),
});
export type DenialSummary = z.infer<typeof denialSummarySchema>;

export const denialHistogramSchema = z.object({
  from: z.number(),
  to: z.number(),
  bucket_seconds: z.number(),
  families: z.array(z.string()),
  buckets: z.array(z.object({ start: z.number(), end: z.number(), total: z.number(), counts: z.record(z.string(), z.number()) })),
});
export type DenialHistogram = z.infer<typeof denialHistogramSchema>;

/** The values of one field among the denials of a filter; `family`: a rule-source family standing for its rules. */
export const denialFacetsSchema = z.object({
  field: z.enum(['agent', 'tool', 'rule_source']),
  prefix: z.string().nullable().optional(),
  values: z.array(z.object({ value: z.string(), count: z.number(), family: z.boolean().optional() })),
  total: z.number(),
});
export type DenialFacets = z.infer<typeof denialFacetsSchema>;

/** The live tail: how many denials came after `after`; with newest=1 also the server's time (`now`). */
export const denialTailSchema = z.object({
  after: z.number(),
  count: z.number(),
  newest_id: z.number().nullable(),
  now: z.number().optional(),
});

// ---------------------------------------------------------------------------------------------------------------
// The audit trail (GET /api/v1/audit/events, GET /api/v1/audit/verify)
// ---------------------------------------------------------------------------------------------------------------

export const securityEventSchema = z.object({
  id: z.number(),
  decision_id: z.string().nullable(),
  type: z.string(),
  actor: z.string(),
  actor_role: z.string().nullable(),
  outcome: z.string(),
  target: z.string().nullable(),
  detail: z.unknown(),
  policy_revision: z.string().nullable(),
  ip: z.string().nullable(),
  timestamp: z.number(),
  row_hash: z.string().nullable(),
});
export type SecurityEventJson = z.infer<typeof securityEventSchema>;

export const eventPageSchema = z.object({ events: z.array(securityEventSchema), next_cursor: z.number().nullable() });
export type EventPage = z.infer<typeof eventPageSchema>;

export const verifyFailureSchema = z.object({ table: z.string(), id: z.number(), problem: z.string(), message: z.string() });
export type VerifyFailure = z.infer<typeof verifyFailureSchema>;

export const verifyReportSchema = z.object({
  ok: z.boolean(),
  checked_at: z.number(),
  /** the public key the checkpoints were checked with (null: none configured) */
  key: z.string().nullable(),
  chains: z.array(
    z.object({
      chain: z.string(),
      rows_checked: z.number(),
      legacy_rows: z.number(),
      archived_up_to: z.number().nullable(),
      first_id: z.number().nullable(),
      last_id: z.number().nullable(),
      first_timestamp: z.number().nullable(),
      last_timestamp: z.number().nullable(),
      checkpoints: z.number(),
      checkpoints_valid: z.number(),
      covered_up_to: z.number().nullable(),
      uncovered: z.object({ first_id: z.number(), rows: z.number(), oldest_timestamp: z.number().nullable(), age_seconds: z.number().nullable() }).nullable(),
      /** witnessed checkpoints checked, the newest of them, and how many the trail is not shown to extend */
      witnessed: z.object({ checked: z.number(), newest: z.number().nullable(), not_extended: z.number() }),
      head_hash: z.string().nullable(),
    }),
  ),
  failures: z.array(verifyFailureSchema),
});
export type VerifyReportJson = z.infer<typeof verifyReportSchema>;

// ---------------------------------------------------------------------------------------------------------------
// Approvals (GET /api/v1/approvals, GET and POST /api/v1/approvals/{id}…)
// ---------------------------------------------------------------------------------------------------------------

export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'expired', 'consumed'] as const;
export const RISKS = ['low', 'medium', 'high'] as const;

/** One approval given so far on a request (a two-person gate collects two). */
export const givenApprovalSchema = z.object({ by: z.string(), role: z.string(), at: z.number(), reason: z.string().nullable() });

export const approvalSchema = z.object({
  id: z.string(),
  gate: z.string(),
  status: z.enum(APPROVAL_STATUSES),
  /** the status in words ("approved and run") */
  outcome: z.string(),
  agent: z.string(),
  tool: z.string(),
  /** the call's arguments, redacted as the trail stores them */
  arguments: z.unknown(),
  arguments_hash: z.string(),
  tool_call_id: z.string().nullable(),
  requested_by: z.string(),
  requested_at: z.number(),
  expires_at: z.number(),
  rule_source: z.string(),
  reason: z.string().nullable(),
  decided_by: z.string().nullable(),
  decided_at: z.number().nullable(),
  decision_reason: z.string().nullable(),
  consumed_at: z.number().nullable(),
  consumed_by: z.string().nullable(),
  gate_description: z.string().nullable(),
  /** the MCP client that asked, as it named itself ("Claude Desktop 1.2"); null for a call that did not come through the gateway */
  client: z.string().nullable(),
  risk: z.enum(RISKS),
  approvals_required: z.number(),
  approver_roles: z.array(z.string()),
  approvals: z.array(givenApprovalSchema),
  /** everyone who decided it, in order: each approval given (both people of a two-person decision), then a rejection's author */
  deciders: z.array(z.string()),
});
export type ApprovalJson = z.infer<typeof approvalSchema>;

export const approvalListSchema = z.object({ approvals: z.array(approvalSchema) });

// ---------------------------------------------------------------------------------------------------------------
// Flags (GET, PUT and DELETE /api/v1/flags/{name})
// ---------------------------------------------------------------------------------------------------------------

export const flagSchema = z.object({
  name: z.string(),
  tier: z.enum(['invariant', 'flag', 'experiment']),
  value: z.boolean(),
  /** where the value comes from: default, env, alias, override, profile */
  layer: z.string(),
  variable: z.string().nullable(),
  default: z.boolean().nullable(),
  env_var: z.string().nullable(),
  aliases: z.array(z.string()),
  owner: z.string().nullable(),
  description: z.string(),
  guards: z.object({ tools: z.array(z.string()), paths: z.array(z.string()) }),
  override: z.object({ value: z.boolean(), set_by: z.string(), set_at: z.number(), reason: z.string() }).nullable(),
  locked_by: z.array(z.string()).nullable(),
  changeable: z.boolean(),
});

// ---------------------------------------------------------------------------------------------------------------
// Sessions
// ---------------------------------------------------------------------------------------------------------------

/** GET /api/v1/auth/me: who this token or session is. */
export const meSchema = z.object({ kind: z.string(), id: z.string(), role: z.string(), agent: z.string().nullable() });

/** POST /api/v1/auth/logout: the session is gone. */
export const signedOutSchema = z.object({
  signed_out: z.literal(true),
  /** a single sign-on session: the provider's sign-out address, where the browser goes next to end that session too */
  end_session_url: z.string().optional(),
});

/** A token as listed to admins (GET /api/v1/tokens): never its secret (only a hash is stored). */
export const tokenSchema = z.object({
  id: z.number(),
  name: z.string(),
  owner: z.string(),
  owner_kind: z.enum(['user', 'agent']),
  scopes: z.array(z.string()),
  created_at: z.number(),
  expires_at: z.number().nullable(),
  last_used_at: z.number().nullable(),
  revoked_at: z.number().nullable(),
  disabled_at: z.number().nullable(),
  disabled_reason: z.string().nullable(),
  rotated_from: z.number().nullable(),
  state: z.enum(['active', 'revoked', 'expired', 'disabled']),
});
export const tokenListSchema = z.object({ tokens: z.array(tokenSchema), now: z.number() });
/** POST /api/v1/tokens/{id}/rotate: the new token, its secret shown this once. */
export const rotatedTokenSchema = z.object({ token: z.string(), id: z.number(), rotated_from: z.number(), scopes: z.array(z.string()), expires_at: z.number().nullable(), old_expires_at: z.number() });

// ---------------------------------------------------------------------------------------------------------------
// Policy change control (issue 28): proposals, votes, activations.
// ---------------------------------------------------------------------------------------------------------------

const decisionName = z.enum(['ALLOW', 'DENY', 'ASK']);
export const impactSchema = z.object({
  since: z.number(),
  replayed: z.number(),
  changed: z.number(),
  uncertain: z.number(),
  by_direction: z.object({ newly_denied: z.number(), newly_allowed: z.number(), newly_asking: z.number(), other_rule: z.number() }),
  by_agent: z.array(z.object({ agent: z.string(), count: z.number() })),
  by_tool: z.array(z.object({ tool: z.string(), count: z.number() })),
  examples: z.array(
    z.object({
      decision_id: z.string().nullable(),
      agent: z.string(),
      tool: z.string(),
      direction: z.enum(['newly_denied', 'newly_allowed', 'newly_asking', 'other_rule']),
      before: z.object({ decision: decisionName, rule_source: z.string() }),
      after: z.object({ decision: decisionName, rule_source: z.string(), reason: z.string() }),
      uncertain: z.boolean(),
    }),
  ),
});
export const proposalSchema = z.object({
  id: z.string(),
  kind: z.enum(['change', 'rollback']),
  revision: z.string(),
  base_revision: z.string().nullable(),
  message: z.string(),
  proposed_by: z.string(),
  proposed_at: z.number(),
  status: z.enum(['open', 'approved', 'activated', 'rejected', 'withdrawn']),
  tests: z.object({ passed: z.number(), failed: z.number(), files: z.array(z.string()), failures: z.array(z.object({ name: z.string(), position: z.string(), message: z.string() })) }),
  impact: impactSchema,
  approvals_required: z.number(),
  approver_roles: z.array(z.string()),
  decided_by: z.string().nullable(),
  decided_at: z.number().nullable(),
  decision_reason: z.string().nullable(),
  emergency: z.boolean(),
});
export type ProposalJson = z.infer<typeof proposalSchema>;
export const activationSchema = z.object({
  seq: z.number(),
  revision: z.string(),
  proposal_id: z.string().nullable(),
  kind: z.enum(['seed', 'proposal', 'emergency']),
  activated_by: z.string(),
  activated_at: z.number(),
});
export const proposalListSchema = z.object({
  change_control: z.union([
    z.object({ enforced: z.literal(true), approvers: z.number(), roles: z.array(z.string()), profiles: z.array(z.string()), basis: z.string() }),
    z.object({ enforced: z.literal(false) }),
  ]),
  active: activationSchema.nullable(),
  proposals: z.array(proposalSchema),
});
export const proposalDetailSchema = proposalSchema.extend({
  votes: z.array(z.object({ voter: z.string(), role: z.string(), vote: z.enum(['approve', 'reject']), reason: z.string(), voted_at: z.number() })),
  files: z.array(z.object({ name: z.string(), key: z.enum(['agents', 'policy', 'gates', 'hooks', 'mcp', 'mcp_pins']), before: z.string().nullable(), after: z.string().nullable() })),
  stale: z.boolean(),
});
export const voteResultSchema = proposalDetailSchema.extend({ activation: z.number().nullable() });
export const activationListSchema = z.object({ activations: z.array(activationSchema) });
