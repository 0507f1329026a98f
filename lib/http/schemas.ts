/**
 * zod schemas of the API's inputs, shared with the CLI where they mean the same thing, and (from ./responses, which the
 * browser can import on its own) of the API's answers.
 */
import { z } from 'zod';
import { MAX_WAIT_SECONDS } from '@/lib/approvals/wait';
import { blankToUndefined } from '@/lib/http/blank';
import { decodeCursor, DENIAL_SORT_KEYS, SORT_ORDERS, type DenialMatch } from '@/lib/audit/denials/filter';
import { argumentsProblem, MAX_ARGUMENT_DEPTH, ROLES } from '@/lib/permissions';
import { toolAnnotationsSchema } from '@/lib/permissions/annotations';

export * from './responses';

const name = z.string().min(1).max(200);
const positiveSeconds = z.coerce.number().positive().max(100 * 365 * 24 * 3600);

// ---------------------------------------------------------------------------------------------------------------
// Denial queries: the list, the exports, the summary and the histogram share one filter.
// ---------------------------------------------------------------------------------------------------------------


/** The time window every explorer query takes: the last `since` seconds, or from/to. */
const windowFields = {
  since: positiveSeconds.optional(),
  from: z.coerce.number().nonnegative().optional(),
  to: z.coerce.number().nonnegative().optional(),
};

const denialFilterFields = {
  ...windowFields,
  /** the newest denial id of the view that was loaded: rows recorded after it are left out (exact evidence) */
  until_id: z.coerce.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
  agent: name.optional(),
  tool: name.optional(),
  role: z.enum(ROLES).optional(),
  rule_source: name.optional(),
  /** free text over the reason and the arguments */
  q: z.preprocess(blankToUndefined, z.string().trim().min(1).max(200).optional()),
};

type WindowFields = { from?: number; to?: number };
const windowInOrder = (q: WindowFields, ctx: z.RefinementCtx) => {
  if (q.from !== undefined && q.to !== undefined && q.from > q.to) {
    ctx.addIssue({ code: 'custom', path: ['to'], message: 'to must not be before from' });
  }
};

export const denialMatchSchema = z.strictObject(denialFilterFields).superRefine(windowInOrder);

export const denialQuerySchema = z
  .strictObject({
    ...denialFilterFields,
    sort: z.enum(DENIAL_SORT_KEYS).optional(),
    order: z.enum(SORT_ORDERS).optional(),
    cursor: z.string().regex(/^(\d{1,18}|[A-Za-z0-9_-]{8,1400})$/, 'cursor is the next_cursor of the previous page').optional(),
    limit: z.coerce.number().int().min(1).max(1000).default(100),
    /** json: one page; csv and ndjson: every matching row, streamed */
    format: z.enum(['json', 'csv', 'ndjson']).default('json'),
  })
  .superRefine((q, ctx) => {
    windowInOrder(q, ctx);
    if (q.cursor !== undefined) {
      const position = decodeCursor(q.cursor, q.sort ?? 'id', q.order ?? 'desc');
      if (typeof position === 'string') ctx.addIssue({ code: 'custom', path: ['cursor'], message: position });
    }
  });

/** GET /api/v1/permissions/denials/facets: the values of one field in the filter's window, with counts. */
export const denialFacetQuerySchema = z
  .strictObject({
    ...denialFilterFields,
    field: z.enum(['agent', 'tool', 'rule_source']),
    /** the start of the value, any case; blank: every value */
    prefix: z.preprocess(blankToUndefined, z.string().trim().max(200).optional()),
    limit: z.coerce.number().int().min(1).max(100).default(20),
  })
  .superRefine(windowInOrder);

/** GET /api/v1/permissions/denials/tail: how many denials of the filter came after the id the page shows. */
export const denialTailQuerySchema = z
  .strictObject({
    ...denialFilterFields,
    after: z.coerce.number().int().nonnegative(),
    /** 1: answer only the newest matching id (the tail's baseline when the page loads), count 0 */
    newest: z.enum(['0', '1']).optional(),
  })
  .superRefine(windowInOrder);

export type DenialMatchQuery = z.infer<typeof denialMatchSchema>;

/** The store's filter for a validated query (the API's snake_case names to the store's). */
export function denialFilterOf(q: DenialMatchQuery): DenialMatch {
  return { since: q.since, from: q.from, to: q.to, untilId: q.until_id, agent: q.agent, tool: q.tool, role: q.role, ruleSource: q.rule_source, q: q.q };
}

export const idParamSchema = z.strictObject({ id: z.string().regex(/^\d{1,18}$/, 'id is a number') });
export const approvalIdSchema = z.strictObject({ id: z.string().regex(/^apr_[A-Za-z0-9_-]{8,64}$/, 'not an approval id') });
export const flagNameSchema = z.strictObject({ name: z.string().regex(/^[a-z][a-z0-9_]{0,99}$/, 'not a flag name') });

/** A JSON object as JSON.parse makes it (or one without a prototype, from a caller in this process). */
const isPlainObject = (v: unknown): v is Record<string, unknown> => {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

/**
 * A JSON object kept exactly as it came (never copied: a copy would turn a `__proto__` key into the copy's prototype),
 * or refused with the path of what cannot be kept: a key named `__proto__`, `constructor` or `prototype`, or nesting
 * deeper than MAX_ARGUMENT_DEPTH (lib/permissions/arguments.ts). `depth: 0` for an object that holds arguments.
 */
export function exactObjectSchema(what: string, depth = 1) {
  return z
    .custom<Record<string, unknown>>(isPlainObject, `${what} is a JSON object`)
    .superRefine((value, ctx) => {
      const problem = argumentsProblem(value, { depth });
      if (problem) ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message, params: { reason: problem.code } });
    })
    .meta({
      // (what the API reference shows: a custom schema has no JSON Schema of its own)
      type: 'object',
      description: `A JSON object, kept exactly as sent. Refused (400): a key named __proto__, constructor or prototype at any depth; arguments nested more than ${MAX_ARGUMENT_DEPTH} levels of objects and arrays deep.`,
    });
}

/** An upstream MCP tool as a gateway saw it: its server, its own name there, and the SHA-256 of its definition. */
export const mcpToolRefSchema = z.strictObject({
  server: z.string().regex(/^[a-z][a-z0-9-]{0,39}$/, 'a server id of mcp.yaml'),
  tool: z.string().min(1).max(200),
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 in hex'),
});

/** A tool call's arguments, wherever they enter (check, batch, finished): kept exactly, or refused. */
export const argumentsSchema = exactObjectSchema('arguments');

/** The call a check and a finished report are about. */
const callFields = {
  agent: name,
  tool: name,
  arguments: argumentsSchema.default({}),
  tool_call_id: z.string().min(1).max(200).optional(),
  /** the tool's MCP annotations, as its server declared them (the MCP gateway sends them; rules may match on them) */
  annotations: toolAnnotationsSchema.optional(),
  /** the MCP client that made the call, as it named itself (the gateway sends it; shown on an approval request) */
  client: z.string().trim().min(1).max(200).optional(),
  /**
   * the upstream MCP tool and the SHA-256 of its definition as the gateway sees it (the gateway sends it): a definition
   * that is not the pinned one is denied as mcp_pin (lib/mcp/pins)
   */
  mcp: mcpToolRefSchema.optional(),
};

export const checkBodySchema = z.strictObject({
  ...callFields,
  /** decide without consequences: nothing recorded, no approval requested or consumed */
  dry_run: z.boolean().default(false),
});

/** A tool call that was allowed has run (or failed): the after_tool_call hooks hear of it. */
export const finishedBodySchema = z.strictObject({
  ...callFields,
  /** the decision id the check answered, to join the report to the decision */
  decision_id: z.string().min(1).max(100).optional(),
  outcome: z.enum(['succeeded', 'failed']),
  /** what the tool returned (succeeded) */
  result: z.unknown().optional(),
  /** why it failed (failed) */
  error: z.string().max(2000).optional(),
});

/** The MCP gateway asks which of its tools an agent may ever use (tools/list). */
export const toolVisibilityBodySchema = z.strictObject({
  agent: name,
  tools: z.array(z.strictObject({ tool: name, annotations: callFields.annotations, mcp: callFields.mcp })).max(2000),
});

export type CheckBody = z.output<typeof checkBodySchema>;

const CHECK_KEYS = new Set(['agent', 'tool', 'arguments', 'tool_call_id', 'dry_run']);

/** An object as JSON.parse makes it (anything else is left to zod). */
function isJsonObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;
}

const nameOk = (v: unknown): v is string => typeof v === 'string' && v.length >= 1 && v.length <= 200;

/**
 * The check body's common shape read without zod, for the decision listener's hottest input (zod's parse was about a
 * twentieth of an allowed call). For a body it takes it answers exactly what `checkBodySchema.parse` answers; anything
 * else (a wrong type, an unknown key, arguments that cannot be kept exactly (a refused key, too deep) or not made by
 * JSON.parse, a name over 200 UTF-16 units, which zod measures in code points) gets undefined, and the route parses it
 * with zod, which explains what is wrong. Tested side by side with the schema on generated bodies (schemas.test.ts).
 */
export function checkBodyFast(raw: unknown): CheckBody | undefined {
  if (!isJsonObject(raw)) return undefined;
  // (a key present with an undefined value never comes from JSON; zod keeps such a key, so it answers for it)
  for (const key of Object.keys(raw)) if (!CHECK_KEYS.has(key) || raw[key] === undefined) return undefined;
  const { agent, tool, arguments: args = {}, tool_call_id: id, dry_run: dryRun = false } = raw;
  // (the arguments are the object JSON.parse made, as the schema keeps them; the same walk as its refinement)
  if (!nameOk(agent) || !nameOk(tool) || typeof dryRun !== 'boolean' || !isJsonObject(args) || argumentsProblem(args) !== undefined) return undefined;
  if (id !== undefined && !nameOk(id)) return undefined;
  // The keys in the schema's order, as zod answers them.
  return id === undefined ? { agent, tool, arguments: args, dry_run: dryRun } : { agent, tool, arguments: args, tool_call_id: id, dry_run: dryRun };
}

export const MAX_BATCH_CHECKS = 1_000;

/** Up to 1,000 checks, answered in order; the denials of a batch are committed together before the answer. */
export const batchCheckBodySchema = z.strictObject({
  checks: z.array(checkBodySchema).min(1, 'a batch holds at least one check').max(MAX_BATCH_CHECKS, `a batch holds at most ${MAX_BATCH_CHECKS} checks`),
});

/** The batch body read without zod when every check of it takes the fast path (checkBodyFast), else undefined. */
export function batchCheckBodyFast(raw: unknown): z.output<typeof batchCheckBodySchema> | undefined {
  if (!isJsonObject(raw) || Object.keys(raw).length !== 1 || !Array.isArray(raw.checks)) return undefined;
  const list: unknown[] = raw.checks;
  if (list.length < 1 || list.length > MAX_BATCH_CHECKS) return undefined;
  const checks: CheckBody[] = new Array(list.length);
  for (let i = 0; i < list.length; i++) {
    const c = checkBodyFast(list[i]);
    if (c === undefined) return undefined;
    checks[i] = c;
  }
  return { checks };
}

export const loginBodySchema = z.strictObject({
  username: z.string().min(1).max(64),
  password: z.string().min(1).max(1024),
});

/** One approval request: `wait` holds the answer until it is decided (seconds, at most MAX_WAIT_SECONDS). */
export const approvalReadQuerySchema = z.strictObject({
  wait: z.coerce.number().min(0).max(MAX_WAIT_SECONDS, `wait is at most ${MAX_WAIT_SECONDS} seconds: ask again to wait longer`).optional(),
});

export const approvalListQuerySchema = z.strictObject({
  /** `decided` is every state but pending: the history */
  status: z.enum(['pending', 'approved', 'rejected', 'expired', 'consumed', 'decided']).optional(),
  decided_by: name.optional(),
  gate: name.optional(),
  agent: name.optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(200),
});

export const approveBodySchema = z.strictObject({ reason: z.string().max(2000).optional() });
export const rejectBodySchema = z.strictObject({ reason: z.string().trim().min(1, 'a rejection needs a reason').max(2000) });

const flagReason = z.string().trim().min(1, 'a flag change needs a reason').max(2000);
export const flagOverrideBodySchema = z.strictObject({ value: z.boolean(), reason: flagReason });
export const flagUnsetBodySchema = z.strictObject({ reason: flagReason });

/** GET /api/v1/audit/events: the explorer's conventions (since or from/to, blank means not given, a numeric cursor). */
export const eventQuerySchema = z
  .strictObject({
    ...windowFields,
    type: z.preprocess(blankToUndefined, z.string().regex(/^[a-z_]+(\.[a-z_]+)*$/, 'type is an event type such as auth.login.failed, or a family such as auth').optional()),
    /** a type or family left out: the audit page's default view sends `decision` (logged decisions have their own view) */
    exclude_type: z.preprocess(blankToUndefined, z.string().regex(/^[a-z_]+(\.[a-z_]+)*$/, 'exclude_type is an event type or a family such as decision').optional()),
    actor: z.preprocess(blankToUndefined, name.optional()),
    outcome: z.preprocess(blankToUndefined, z.enum(['succeeded', 'failed', 'refused']).optional()),
    decision_id: z.preprocess(blankToUndefined, z.string().regex(/^[0-9a-f-]{36}$/, 'decision_id is a UUID').optional()),
    cursor: z.coerce.number().int().positive().optional(),
    limit: z.coerce.number().int().min(1).max(1000).default(100),
  })
  .superRefine(windowInOrder);

// The MCP gateway's pins (issue 42: lib/http/routes/mcp-pins.ts).
const mcpServerId = z.string().regex(/^[a-z][a-z0-9-]{0,39}$/, 'a server id of mcp.yaml');
const mcpToolName = z.string().min(1).max(500);

export const acceptPinBodySchema = z.strictObject({
  server: mcpServerId,
  tool: mcpToolName,
  /** the SHA-256 of the definition reviewed (the held one shown): that one is accepted, whatever is listed meanwhile */
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'the SHA-256 of the definition, in hex'),
  reason: z.string().trim().min(1, 'say why the new definition is accepted').max(2_000),
});

/** A tool as an upstream listed it: a JSON object kept exactly as sent (its canonical JSON is hashed here again). */
const listedTool = z.custom<Record<string, unknown>>((v) => {
  if (v === null || typeof v !== 'object' || Array.isArray(v) || Object.getPrototypeOf(v) !== Object.prototype) return false;
  const name = (v as { name?: unknown }).name;
  return typeof name === 'string' && name.length > 0 && name.length <= 500;
}, 'a tool: a JSON object with its name');

export const observationBodySchema = z.strictObject({
  server: mcpServerId,
  tools: z.array(listedTool).max(2_000),
  refused: z
    .array(z.strictObject({ tool: mcpToolName, reason: z.enum(['separator', 'collision', 'reserved']), message: z.string().min(1).max(1_000) }))
    .max(2_000)
    .default([]),
});
