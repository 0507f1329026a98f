/**
 * The OpenAPI 3.1 document (GET /api/v1/openapi.json): generated from the route table, it must describe every route
 * file that exists, every method each exports, with responses, roles and valid JSON Schemas. The table and the app/
 * route files are held to each other both ways: a route file the table does not list fails, and so does an entry
 * without its adapter (or whose adapter serves other methods, or another entry's routes).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, describe, expect, it } from 'vitest';
import { callRoute, useTempServerEnv } from './support/in-process-api';

const server = useTempServerEnv('openapi');
const { getSqliteApp } = await import('@/lib/app');
const { ROUTES, HTTP_METHODS } = await import('@/lib/http/route-table');
const { ADAPTED_ROUTE } = await import('@/lib/http/next-handlers');
const openapi = await import('@/app/api/v1/openapi.json/route');
afterAll(async () => {
  await getSqliteApp().close();
  server.remove();
});

function routeFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return routeFiles(p);
    return name === 'route.ts' ? [p.replace(/\\/g, '/')] : [];
  });
}

/** The public path of a route file: [id] -> {id}; the AuthZEN and MCP metadata are rewritten to /.well-known (next.config.mjs). */
function publicPath(file: string): string {
  if (file === 'app/api/authzen/configuration/route.ts') return '/.well-known/authzen-configuration';
  if (file === 'app/api/mcp/resource-metadata/route.ts') return '/.well-known/oauth-protected-resource/mcp';
  return file.replace(/^app/, '').replace(/\/route\.ts$/, '').replace(/\[([^\]]+)\]/g, '{$1}');
}

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, { operationId: string; summary: string; 'x-required-role': string; responses: Record<string, { description: string; content?: Record<string, { schema: unknown }> }>; parameters?: { name: string; in: string; schema: unknown }[]; requestBody?: { content: Record<string, { schema: unknown }> } }>>;
};

const res = await callRoute(openapi.GET, '/api/v1/openapi.json');
const doc = (await res.json()) as Doc;

describe('GET /api/v1/openapi.json', () => {
  it('is an OpenAPI 3.1 document, public', () => {
    expect(res.status).toBe(200);
    expect(doc.openapi).toBe('3.1.0');
  });

  const files = [...routeFiles('app/api'), ...routeFiles('app/access'), ...routeFiles('app/mcp')];

  it.each(files)('describes %s (a route file missing from lib/http/route-table.ts fails here)', (file) => {
    const entry = ROUTES.find((r) => r.adapter === file);
    expect(entry, `${file} is not the adapter of any entry of lib/http/route-table.ts`).toBeDefined();
    expect(entry!.path).toBe(publicPath(file));
    expect(Object.keys(doc.paths[entry!.path] ?? {}).sort()).toEqual(Object.keys(entry!.methods).map((m) => m.toLowerCase()).sort());
  });

  it.each(ROUTES.map((r) => [r.path, r] as const))('adapts %s in its own route file, every method of its entry and no other', async (_, entry) => {
    expect(existsSync(entry.adapter), `${entry.path}: its adapter ${entry.adapter} does not exist`).toBe(true);
    const mod = (await import(/* @vite-ignore */ `../${entry.adapter}`)) as Record<string, unknown>;
    const exported = HTTP_METHODS.filter((m) => typeof mod[m] === 'function');
    expect(exported, `${entry.adapter} exports other methods than its entry`).toEqual(HTTP_METHODS.filter((m) => entry.methods[m]));
    for (const m of exported) expect((mod[m] as { [ADAPTED_ROUTE]?: unknown })[ADAPTED_ROUTE], `${entry.adapter} ${m} is not its entry's route`).toBe(entry.methods[m]!.route);
  });

  it('lists no route that does not exist, and the listener-served /metrics', () => {
    const known = new Set(files.map(publicPath));
    expect(Object.keys(doc.paths).filter((p) => !known.has(p))).toEqual(['/metrics']);
  });

  it('gives every operation a summary, a role, unique operation ids and responses with a success', () => {
    const ids = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        expect(op.summary, `${method} ${path}`).toBeTruthy();
        expect(['anonymous', 'viewer', 'auditor', 'operator', 'admin']).toContain(op['x-required-role']);
        expect(Object.keys(op.responses).length).toBeGreaterThan(0);
        expect(Object.keys(op.responses).some((s) => s.startsWith('2'))).toBe(true);
        for (const r of Object.values(op.responses)) expect(r.description).toBeTruthy();
        expect(ids.has(op.operationId)).toBe(false);
        ids.add(op.operationId);
      }
    }
    expect(doc.paths['/api/v1/flags/{name}']!.put!['x-required-role']).toBe('admin');
    expect(doc.paths['/api/v1/approvals/{id}/approve']!.post!.parameters).toContainEqual(expect.objectContaining({ name: 'id', in: 'path' }));
    expect(doc.paths['/api/v1/approvals']!.get!.parameters!.map((p) => p.name)).toEqual(expect.arrayContaining(['status', 'gate', 'agent']));
    expect(doc.paths['/api/v1/permissions/check']!.post!.requestBody).toBeDefined();
  });

  it("shows the answers the console reads with their schemas (lib/http/responses.ts), and the errors' one shape", () => {
    type Schema = { type?: string; properties?: Record<string, Schema>; items?: Schema; required?: string[] };
    const answer = (path: string, method: string) => doc.paths[path]![method]!.responses['200']!.content!['application/json']!.schema as Schema;
    for (const [path, method] of [
      ['/api/v1/permissions/denials', 'get'],
      ['/api/v1/permissions/denials/{id}', 'get'],
      ['/api/v1/permissions/denials/summary', 'get'],
      ['/api/v1/permissions/denials/histogram', 'get'],
      ['/api/v1/permissions/denials/facets', 'get'],
      ['/api/v1/permissions/denials/tail', 'get'],
      ['/api/v1/audit/events', 'get'],
      ['/api/v1/audit/verify', 'get'],
      ['/api/v1/approvals', 'get'],
      ['/api/v1/approvals/{id}/approve', 'post'],
      ['/api/v1/flags/{name}', 'put'],
      ['/api/v1/auth/me', 'get'],
    ] as const) {
      expect(answer(path, method).type, `${method} ${path}`).toBe('object');
    }
    expect(answer('/api/v1/permissions/denials', 'get').properties!.denials!.items!.required).toEqual(expect.arrayContaining(['id', 'rule_source', 'decision_id', 'masked_paths']));
    expect(answer('/api/v1/approvals', 'get').properties!.approvals!.items!.properties!.status).toMatchObject({ enum: ['pending', 'approved', 'rejected', 'expired', 'consumed'] });
    const error = (doc as unknown as { components: { schemas: { Error: Schema } } }).components.schemas.Error;
    expect(error.properties!.error!.required).toEqual(['code', 'message']);
    expect(Object.keys(error.properties!.error!.properties!)).toEqual(expect.arrayContaining(['rule_source', 'decision_id', 'issues']));
  });

  it('has only valid JSON Schema (2020-12) objects in it', () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    const schemas: unknown[] = [];
    for (const ops of Object.values(doc.paths)) {
      for (const op of Object.values(ops)) {
        for (const p of op.parameters ?? []) schemas.push(p.schema);
        for (const c of Object.values(op.requestBody?.content ?? {})) schemas.push(c.schema);
        for (const r of Object.values(op.responses)) for (const c of Object.values(r.content ?? {})) if (!(c.schema as { $ref?: string }).$ref) schemas.push(c.schema);
      }
    }
    expect(schemas.length).toBeGreaterThan(20);
    for (const s of schemas) {
      expect(typeof s === 'object' && s !== null && !Array.isArray(s)).toBe(true);
      expect(ajv.validateSchema(s as object), JSON.stringify(ajv.errors)).toBe(true);
      expect(() => ajv.compile(s as object)).not.toThrow();
    }
  });
});
