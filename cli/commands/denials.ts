/** swarm denials: the audit table, filtered like GET /api/v1/permissions/denials, as a table, JSON or CSV (SQLite or PostgreSQL). */
import type { DenialRow } from '@/db/schema';
import { denialCsvHeader, denialCsvLine, denialToJson } from '@/lib/audit/denials/export';
import type { DenialFilter } from '@/lib/audit/denials/store';
import { recordAuditRead } from '@/lib/audit/reads';
import { denialFilterOf, denialQuerySchema } from '@/lib/http/schemas';
import { givenValues, parseOptions, validate, valueOptions } from '@/cli/args';
import { cliActor, withAnyApp, type CliContext } from '@/cli/context';
import { UsageError } from '@/cli/errors';
import { cell, isoTime, printJson, printTable } from '@/cli/format';

const REASON_WIDTH = 60;
const CSV_BATCH = 500;

export function denialsCommand(ctx: CliContext, args: string[]): Promise<number> {
  const values = parseOptions(args, { ...valueOptions('since', 'agent', 'tool', 'role', 'rule-source', 'limit', 'cursor'), json: { type: 'boolean' }, csv: { type: 'boolean' } });
  if (values.json && values.csv) throw new UsageError('--json and --csv cannot be combined.');
  if (values.csv && values.limit !== undefined) throw new UsageError('--limit does not apply to --csv, which exports every matching row.');
  const query = validate(denialQuerySchema, givenValues(values, ['since', 'agent', 'tool', 'role', 'rule-source', 'limit', 'cursor']));
  const filter: Omit<DenialFilter, 'limit'> = { ...denialFilterOf(query), cursor: query.cursor };

  return withAnyApp(ctx, async (app) => {
    // Reading the trail is recorded: who read which filter (an export always).
    await recordAuditRead(app, { principal: { kind: 'cli', id: cliActor(ctx.env), role: null }, what: 'permission_denials', filter, export: values.csv ? 'csv' : undefined });
    if (values.csv) {
      let chunk = denialCsvHeader();
      let n = 0;
      for await (const row of app.denials.iterate(filter)) {
        chunk += denialCsvLine(row);
        if (++n % CSV_BATCH === 0) {
          ctx.io.out(chunk);
          chunk = '';
        }
      }
      if (chunk) ctx.io.out(chunk);
      return 0;
    }
    const page = await app.denials.query({ ...filter, limit: query.limit });
    if (values.json) return printJson(ctx.io, { denials: page.rows.map(denialToJson), next_cursor: page.nextCursor });
    printTable(
      ctx.io,
      'No denials match.\n',
      ['ID', 'TIME (UTC)', 'AGENT', 'TOOL', 'RULE_SOURCE', 'ROLE', 'REASON'],
      page.rows.map((r) => [String(r.id), isoTime(r.timestamp), cell(r.agentName, 40), toolCell(r), cell(r.ruleSource, 50), cell(r.userRole), cell(r.reason, REASON_WIDTH)]),
    );
    if (page.rows.length > 0 && page.nextCursor) ctx.io.out(`\nMore rows: add --cursor ${page.nextCursor}\n`);
    return 0;
  });
}

/** The tool, or for an HTTP denial the request it refused. */
function toolCell(r: DenialRow): string {
  if (r.toolName === 'http' && r.httpPath) return cell(`${r.httpMethod ?? ''} ${r.httpPath}`.trim(), 50);
  return cell(r.toolName, 50);
}
