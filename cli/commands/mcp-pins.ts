/**
 * `swarm mcp pins`: the MCP gateway's pins of upstream tool definitions (issue 42), on SQLite or PostgreSQL.
 *
 *   swarm mcp pins [list] [--json]                      what is pinned, and what is held (changed since, or new)
 *   swarm mcp pins show SERVER TOOL                      a held definition beside the pinned one, line by line
 *   swarm mcp pins accept SERVER TOOL --hash H --as USER --reason TEXT
 *                                                        accept the held definition H (an operator or admin)
 *
 * Accepting is checked by the engine as POST /api/v1/mcp/pins/accept is (actAs); under change control it makes a
 * proposal instead, which the approvers decide like any change to the rules.
 */
import { acceptPinBodySchema } from '@/lib/http/schemas';
import { acceptToolDefinition, pinListing } from '@/lib/mcp/pins/accept';
import { lineDiff } from '@/lib/text/line-diff';
import { expectPositionals, parseCommand, parseOptions, requireOption, runSubcommand, validate } from '@/cli/args';
import { actAs, withAnyApp, type CliContext } from '@/cli/context';
import { cell, clean, isoTime, printJson, printTable } from '@/cli/format';

export function pinsCommand(ctx: CliContext, sub: string | undefined, args: string[]): Promise<number> {
  if (sub === undefined || sub.startsWith('-')) return list(ctx, sub === undefined ? args : [sub, ...args]);
  return runSubcommand(ctx, 'mcp pins', sub, args, { list, show, accept });
}

const short = (sha: string | null) => (sha ? `${sha.slice(0, 12)}…` : '-');

function list(ctx: CliContext, args: string[]): Promise<number> {
  const values = parseOptions(args, { json: { type: 'boolean' } });
  return withAnyApp(ctx, async (app) => {
    const listing = await pinListing(app);
    if (values.json) return printJson(ctx.io, listing);
    if (listing.held.length > 0) {
      ctx.io.out(`Held (not listed, every call refused until accepted${listing.change_control ? ' through a proposal: change control is on' : ''}):\n`);
      printTable(
        ctx.io,
        '',
        ['SERVER', 'TOOL', 'SEEN (UTC)', 'PINNED', 'NEW SHA256'],
        listing.held.map((h) => [cell(h.server), cell(h.tool, 60), isoTime(h.seen_at), h.pinned_sha256 ? short(h.pinned_sha256) : 'new tool', h.sha256]),
      );
      ctx.io.out('See the difference with swarm mcp pins show SERVER TOOL; accept with swarm mcp pins accept SERVER TOOL --hash SHA256 --as USER --reason TEXT.\n\n');
    } else {
      ctx.io.out('Nothing is held: every tool the gateway saw is listed as it was reviewed.\n\n');
    }
    printTable(
      ctx.io,
      'No tool is pinned yet (the gateway pins each tool when it first sees it).\n',
      ['SERVER', 'TOOL', 'SHA256', 'ACCEPTED BY', 'HOW', 'AT (UTC)'],
      listing.pins.map((p) => [cell(p.server), cell(p.tool, 60), short(p.sha256), cell(p.accepted_by), cell(p.accepted_via === 'first_use' ? 'first sight' : p.accepted_via), isoTime(p.accepted_at)]),
    );
    return 0;
  });
}

function show(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, { hash: { type: 'string' } });
  const [server, tool] = expectPositionals(positionals, ['SERVER', 'TOOL']);
  return withAnyApp(ctx, async (app) => {
    const held = (await pinListing(app)).held.filter((h) => h.server === server && h.tool === tool && (values.hash === undefined || h.sha256 === values.hash));
    if (held.length === 0) {
      ctx.io.out(`Nothing of "${clean(tool!)}" on server "${clean(server!)}" is held.\n`);
      return 0;
    }
    for (const h of held) {
      ctx.io.out(`${clean(server!)} ${clean(tool!)}: ${h.pinned_sha256 ? `pinned ${h.pinned_sha256}` : 'new tool, never pinned'}; held ${h.sha256} (seen ${isoTime(h.seen_at)})\n`);
      for (const l of lineDiff(h.pinned_definition, h.definition)) ctx.io.out(`${l.kind === 'added' ? '+' : l.kind === 'removed' ? '-' : ' '} ${clean(l.text)}\n`);
      ctx.io.out('\n');
    }
    return 0;
  });
}

function accept(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, { hash: { type: 'string' }, as: { type: 'string' }, reason: { type: 'string' } });
  const [server, tool] = expectPositionals(positionals, ['SERVER', 'TOOL']);
  const body = validate(acceptPinBodySchema, {
    server,
    tool,
    sha256: requireOption(values.hash, '--hash', 'the SHA-256 of the definition you reviewed (swarm mcp pins)'),
    reason: requireOption(values.reason, '--reason', 'it is kept in the trail'),
  });
  const as = requireOption(values.as, '--as', 'the operator or admin who accepts');
  return withAnyApp(ctx, async (app) => {
    // The same check as POST /api/v1/mcp/pins/accept, for the acting user.
    const principal = await actAs(app, as, { method: 'POST', path: '/api/v1/mcp/pins/accept', role: 'operator' });
    const r = await acceptToolDefinition(app, body, { id: principal.id, role: principal.role });
    if (r.status === 'proposed') {
      ctx.io.out(
        `Proposed ${r.proposal.id}: change control is on, so the new definition of "${clean(body.tool)}" (server "${clean(body.server)}") is pinned once ${r.proposal.approvalsRequired} approver${r.proposal.approvalsRequired === 1 ? '' : 's'} approve it (swarm policy vote ${r.proposal.id} approve -m WHY --as USER).\n`,
      );
      return 0;
    }
    ctx.io.out(`Accepted: "${clean(body.tool)}" of server "${clean(body.server)}" is pinned to ${body.sha256} by ${principal.id}; the gateway lists it and runs its calls again. Recorded as mcp.tool.accepted.\n`);
    return 0;
  });
}
