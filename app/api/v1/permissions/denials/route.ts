import { denialCsvHeader, denialCsvLine, denialToJson } from '../../../../../lib/audit/denials';
import { requireRole, route } from '../../../../../lib/http/route';
import { denialQuerySchema, type DenialQuery } from '../../../../../lib/http/schemas';

export const dynamic = 'force-dynamic';

function filterOf(q: DenialQuery) {
  return { since: q.since, from: q.from, to: q.to, agent: q.agent, tool: q.tool, role: q.role, ruleSource: q.rule_source, cursor: q.cursor };
}

/**
 * Query the audit table, newest first. `since` is seconds back from now; `rule_source` matches the exact value or,
 * without a colon, the whole family (`policy` matches every `policy:*`). `format=csv` streams every matching row.
 */
export const GET = route({ role: requireRole('auditor'), query: denialQuerySchema }, ({ app, query }) => {
  if (query.format === 'csv') {
    const rows = app.denials.iterate(filterOf(query));
    const encoder = new TextEncoder();
    let headerSent = false;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        // One page of rows per pull: a large export neither blocks the server nor holds the table in memory.
        let chunk = headerSent ? '' : denialCsvHeader();
        headerSent = true;
        for (let i = 0; i < 500; i++) {
          const next = rows.next();
          if (next.done) {
            controller.enqueue(encoder.encode(chunk));
            controller.close();
            return;
          }
          chunk += denialCsvLine(next.value);
        }
        controller.enqueue(encoder.encode(chunk));
      },
    });
    return new Response(stream, {
      headers: {
        'content-type': 'text/csv; charset=utf-8',
        'content-disposition': 'attachment; filename="permission_denials.csv"',
        'cache-control': 'no-store',
      },
    });
  }
  const page = app.denials.query({ ...filterOf(query), limit: query.limit });
  return { denials: page.rows.map(denialToJson), next_cursor: page.nextCursor };
});
