/**
 * The report routes in process (the real route wrapper on a real SQLite file, the bfsi profile): the PDF and the OSCAL
 * answers, 400 with the validation issues for bad periods, the auditor role, the security event naming the person,
 * and the report's figures against the denial summary API for the same period.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callRoute, useTempServerEnv, type RouteHandler } from '@/tests/support/in-process-api';

const server = useTempServerEnv('reports-api');

const { getSqliteApp } = await import('@/lib/app');
const { seedTrail } = await import('./report.fixture');
// The handlers Next.js serves (app/api/v1/reports/*/route.ts adapts these entries of the route table).
const { nextHandlers } = await import('@/lib/http/next-handlers');
const pdfRoute = nextHandlers('/api/v1/reports/audit.pdf');
const oscalRoute = nextHandlers('/api/v1/reports/audit.oscal.json');
const summaryRoute = nextHandlers('/api/v1/permissions/denials/summary');

let auditor = '';
let viewer = '';
let period = { from: 0, to: 0 };
const out = mkdtempSync(join(tmpdir(), 'swarm-report-api-'));
const day = (s: number) => new Date(s * 1000).toISOString().slice(0, 10);

beforeAll(async () => {
  const app = getSqliteApp();
  period = (await seedTrail(app)).period;
  auditor = await app.auth.createToken({ username: 'alex' }, 't');
  await app.auth.createUser('victor', 'viewer', 'viewer-password');
  viewer = await app.auth.createToken({ username: 'victor' }, 't');
});

afterAll(() => {
  getSqliteApp().close();
  server.remove();
  rmSync(out, { recursive: true, force: true });
});

const get = (handler: RouteHandler, url: string, token = auditor) => callRoute(handler, url, { token });

describe('GET /api/v1/reports/audit.pdf', () => {
  it('answers the PDF as an attachment named for its period, and records the generation by the signed-in person', async () => {
    const r = await get(pdfRoute.GET, `/api/v1/reports/audit.pdf?from=${day(period.from)}&to=${day(period.to)}`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/pdf');
    expect(r.headers.get('content-disposition')).toBe(`attachment; filename="swarm-audit-report_${day(period.from)}_${day(period.to)}.pdf"`);
    const bytes = Buffer.from(await r.arrayBuffer());
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const file = join(out, 'api.pdf');
    writeFileSync(file, bytes);
    const text = execFileSync('pdftotext', ['-l', '1', file, '-'], { encoding: 'utf8' });
    const id = r.headers.get('x-report-id');
    expect(text).toContain(`Report ${id}`);
    expect(text).toContain('by alex (auditor)');
    const e = (await getSqliteApp().securityEvents.ofType('audit.report_generated', 1))[0]!;
    expect(e).toMatchObject({ actor: 'alex', actorRole: 'auditor', target: id });
    expect(JSON.parse(e.detailJson!)).toMatchObject({ format: 'pdf', report_id: id });
  });

  it('has the figures of the denial summary API for the same period (whose `to` includes its end)', async () => {
    const report = await get(oscalRoute.GET, `/api/v1/reports/audit.oscal.json?from=${day(period.from)}&to=${day(period.to)}`);
    const doc = (await report.json()) as { 'assessment-results': { results: { props: { name: string; value: string }[]; observations: { title: string; description: string }[] }[] } };
    const result = doc['assessment-results'].results[0]!;
    const reported = Number(result.props.find((p) => p.name === 'denials')!.value);
    // The summary API over [from, to] counts the denials recorded exactly at `to` as well; the report's period excludes them.
    const inclusive = (await (await get(summaryRoute.GET, `/api/v1/permissions/denials/summary?from=${period.from}&to=${period.to}`)).json()) as { total: number; families: { value: string; count: number }[] };
    const exclusive = (await (await get(summaryRoute.GET, `/api/v1/permissions/denials/summary?from=${period.from}&to=${period.to - 0.001}`)).json()) as {
      total: number;
      families: { value: string; count: number }[];
      top_agents: { value: string; count: number }[];
    };
    expect(reported).toBe(exclusive.total);
    expect(inclusive.total - exclusive.total).toBe(2);
    const observed = result.observations.find((o) => o.title === 'Denials recorded')!.description;
    for (const f of exclusive.families.slice(0, 3)) expect(observed).toContain(`${f.value} ${f.count}`);
    // The same figures in the PDF's summary.
    const pdf = Buffer.from(await (await get(pdfRoute.GET, `/api/v1/reports/audit.pdf?from=${day(period.from)}&to=${day(period.to)}`)).arrayBuffer());
    writeFileSync(join(out, 'figures.pdf'), pdf);
    const text = execFileSync('pdftotext', [join(out, 'figures.pdf'), '-'], { encoding: 'utf8' }).replace(/\s+/g, ' ');
    expect(text).toContain(`All ${exclusive.total} denials of the period`);
    for (const a of exclusive.top_agents) expect(text).toMatch(new RegExp(`${a.value} ${a.count} \\d`));
  });

  it('answers 400 with the validation issues for missing or backwards dates, and for a profile that is not active', async () => {
    const missing = await get(pdfRoute.GET, '/api/v1/reports/audit.pdf');
    expect(missing.status).toBe(400);
    const body = (await missing.json()) as { error: { code: string; issues: { in: string; path: string; message: string }[] } };
    expect(body.error.code).toBe('BAD_REQUEST');
    expect(body.error.issues.map((i) => i.path)).toEqual(['from', 'to']);
    expect(body.error.issues[0]!.message).toContain('from is required');
    const backwards = await get(pdfRoute.GET, '/api/v1/reports/audit.pdf?from=2026-02-01&to=2026-01-01');
    expect(backwards.status).toBe(400);
    expect(((await backwards.json()) as { error: { issues: { path: string }[] } }).error.issues[0]!.path).toBe('to');
    const garbage = await get(oscalRoute.GET, '/api/v1/reports/audit.oscal.json?from=last%20week&to=2026-01-01');
    expect(garbage.status).toBe(400);
    const unknown = await get(pdfRoute.GET, `/api/v1/reports/audit.pdf?from=${day(period.from)}&to=${day(period.to)}&profile=healthcare`);
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toContain('the active profiles are bfsi');
  });

  it('is for auditors and above: a viewer gets 403 (recorded as a denial), no credentials 401', async () => {
    const q = `?from=${day(period.from)}&to=${day(period.to)}`;
    const refused = await get(pdfRoute.GET, `/api/v1/reports/audit.pdf${q}`, viewer);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { rule_source: string } }).error.rule_source).toBe('rbac:auditor');
    expect((await callRoute(oscalRoute.GET, `/api/v1/reports/audit.oscal.json${q}`)).status).toBe(401);
  });
});
