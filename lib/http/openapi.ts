/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the route table (lib/http/route-table.ts): each route's
 * role (requireRole), its zod schemas for path, query and body (z.toJSONSchema, JSON Schema 2020-12 as OpenAPI 3.1
 * uses), and the table's summaries. Served at GET /api/v1/openapi.json and rendered at /api-docs.
 */
import { z } from 'zod';
import { apiErrorBodySchema } from './responses';
import type { RouteDefinition, RouteDoc } from './route';
import { HTTP_METHODS, type RouteTableEntry } from './route-entry';

type JsonSchema = Record<string, unknown>;
type AnySpec = RouteDefinition['spec'];

export interface Parameter {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  description?: string;
  schema: JsonSchema;
}

export interface Operation {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  'x-required-role': string;
  security: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { required: boolean; content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: JsonSchema }> }>;
}

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  jsonSchemaDialect: string;
  tags: { name: string }[];
  paths: Record<string, Partial<Record<Lowercase<(typeof HTTP_METHODS)[number]>, Operation>>>;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, JsonSchema> };
}

/**
 * A zod schema as JSON Schema, of what a client sends (the input side of transforms and defaults). An answer's schema
 * (lib/http/responses.ts) has neither, so it reads the same; its objects stay open, as a client should read an answer
 * that may gain fields.
 */
export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  const out = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  delete out.$schema;
  return out;
}

/** The properties of an object schema (or of every branch of a union of objects), with which are required. */
function objectProperties(s: JsonSchema): { properties: Record<string, JsonSchema>; required: Set<string> } {
  const branches = (s.anyOf ?? s.oneOf ?? s.allOf) as JsonSchema[] | undefined;
  if (branches && !s.properties) {
    const properties: Record<string, JsonSchema> = {};
    const parts = branches.map(objectProperties);
    for (const p of parts) Object.assign(properties, p.properties);
    // Required only when every branch requires it (a union), or any does (allOf).
    const required = new Set(Object.keys(properties).filter((k) => (s.allOf ? parts.some((p) => p.required.has(k)) : parts.every((p) => p.required.has(k)))));
    return { properties, required };
  }
  return { properties: (s.properties as Record<string, JsonSchema> | undefined) ?? {}, required: new Set((s.required as string[] | undefined) ?? []) };
}

function parametersOf(where: 'path' | 'query', schema: z.ZodType | undefined, path: string): Parameter[] {
  const names = where === 'path' ? [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!) : [];
  if (!schema) return names.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
  const { properties, required } = objectProperties(jsonSchemaOf(schema));
  const keys = where === 'path' ? [...new Set([...names, ...Object.keys(properties).filter((k) => names.includes(k))])] : Object.keys(properties);
  return keys.map((name) => {
    const s = { ...(properties[name] ?? { type: 'string' }) };
    const description = typeof s.description === 'string' ? s.description : undefined;
    return { name, in: where, required: where === 'path' || required.has(name), ...(description ? { description } : {}), schema: s };
  });
}

const ERROR_REF = { $ref: '#/components/schemas/Error' };
const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: ERROR_REF } } });

function operationOf(method: string, path: string, spec: AnySpec, doc: RouteDoc): Operation {
  const role = spec.role.role;
  const parameters = [...parametersOf('path', spec.params, path), ...parametersOf('query', spec.query, path)];
  const contentType = doc.contentType ?? 'application/json';
  const responses: Operation['responses'] = {
    '200': { description: 'Success.', content: { [contentType]: { schema: doc.response ? jsonSchemaOf(doc.response) : contentType === 'application/json' ? {} : { type: 'string', contentMediaType: contentType } } } },
  };
  if (spec.params || spec.query || spec.body) responses['400'] = errorResponse('The request is not valid: error.issues lists each problem with where it is (path, query, body).');
  if (role !== 'anonymous') {
    responses['401'] = errorResponse('No valid token or session.');
    responses['403'] = errorResponse(`Refused by the engine (a role below ${role}, a flag, a policy rule); recorded as a denial with its decision_id.`);
  }
  for (const [status, description] of Object.entries(doc.responses ?? {})) responses[status] = errorResponse(description);
  responses['503'] ??= errorResponse('The request could not be recorded in the audit trail, so it was refused.');
  return {
    operationId: `${method.toLowerCase()}${path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    tags: [doc.tag ?? 'API'],
    'x-required-role': role,
    security: role === 'anonymous' ? [] : [{ bearer: [] }, { session: [] }],
    ...(parameters.length ? { parameters } : {}),
    ...(spec.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchemaOf(spec.body) } } } }
      : {}),
    responses,
  };
}

/** GET /metrics: served by the decision listener (lib/server/front.ts), not a route file. */
function metricsOperation(): Operation {
  return {
    operationId: 'getMetrics',
    summary: 'Prometheus metrics of both server processes: decisions, latencies, approvals, audit chain heads, WAL size.',
    description: 'Authorized by the metrics token (SWARM_METRICS_TOKEN, as a bearer token) or an admin token or session.',
    tags: ['Operations'],
    'x-required-role': 'admin',
    security: [{ metricsToken: [] }, { bearer: [] }, { session: [] }],
    responses: {
      '200': { description: 'Prometheus text exposition format 0.0.4.', content: { 'text/plain': { schema: { type: 'string' } } } },
      '401': errorResponse('No valid metrics token, admin token or session.'),
      '403': errorResponse('Refused by the engine (a role below admin); recorded as a denial.'),
    },
  };
}

const built = new WeakMap<readonly RouteTableEntry[], OpenApiDocument>();

/** The document of a route table (built once per table: the routes do not change while the process runs). */
export async function openApiDocument(routes: readonly RouteTableEntry[]): Promise<OpenApiDocument> {
  let document = built.get(routes);
  if (!document) built.set(routes, (document = buildDocument(routes)));
  return document;
}

function buildDocument(routes: readonly RouteTableEntry[]): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  const tags = new Set<string>();
  for (const entry of routes) {
    for (const method of HTTP_METHODS) {
      const served = entry.methods[method];
      if (!served) continue;
      const op = operationOf(method, entry.path, served.route.spec, served.doc);
      op.tags.forEach((t) => tags.add(t));
      (paths[entry.path] ??= {})[method.toLowerCase() as Lowercase<(typeof HTTP_METHODS)[number]>] = op;
    }
  }
  paths['/metrics'] = { get: metricsOperation() };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Swarm Permissions API',
      version: '1',
      description:
        'One permission engine for every agent tool call and HTTP endpoint, with an append-only audit trail. Every request is decided by the engine (RBAC on the role each operation requires, feature flags, YAML policy); every refusal is recorded as a denial before it is answered.',
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    tags: [...tags].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An API token: `npx swarm users add NAME --role ROLE` or `npx swarm tokens add --agent NAME` prints one. Or, for an agent, an access token (a JWT, RFC 9068) of an issuer in config/sso.yaml agent_tokens, for this server\'s /mcp resource.' },
        session: { type: 'apiKey', in: 'cookie', name: 'swarm_session', description: 'The console session (POST /api/v1/auth/login).' },
        metricsToken: { type: 'http', scheme: 'bearer', description: 'SWARM_METRICS_TOKEN, for GET /metrics only.' },
      },
      schemas: {
        // the body of every refusal and failure, as lib/http/responses.ts defines it for the console too
        Error: jsonSchemaOf(apiErrorBodySchema),
      },
    },
  };
}
