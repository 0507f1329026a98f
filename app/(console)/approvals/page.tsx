import type { Metadata } from 'next';
import Link from 'next/link';
import { approvalToJson } from '@/lib/approvals/store';
import { mcpNamingOf } from '@/app/(console)/_mcp/naming-of';
import { approvalIdSchema, approvalListQuerySchema } from '@/lib/http/schemas';
import { currentPrincipal, requireSignedIn } from '@/lib/http/page-auth';
import { isRoleAtLeast } from '@/lib/permissions';
import { ApprovalHistory, type HistoryFilter } from './approval-history';
import { ApprovalQueue, type DeepLink } from './approval-queue';
import { queueFilterFrom } from './queue-filter';
import { PendingCount, PendingCountProvider } from './pending-count';
import styles from './approvals.module.css';

/** "(3) Approvals": the tab shows how many wait; the queue keeps it current (approval-queue.tsx). */
export async function generateMetadata(): Promise<Metadata> {
  const { app, principal } = await currentPrincipal();
  if (!principal || !isRoleAtLeast(principal.role, 'auditor')) return { title: 'Approvals' };
  const n = (await app.approvals.list({ status: 'pending' })).length;
  return { title: n ? `(${n}) Approvals` : 'Approvals' };
}
export const dynamic = 'force-dynamic';

type Search = Record<string, string | string[] | undefined>;
const one = (v: string | string[] | undefined) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

export default async function ApprovalsPage({ searchParams }: { searchParams: Promise<Search> }) {
  const { app, principal } = await requireSignedIn('/approvals');
  const sp = await searchParams;
  const tab = sp.tab === 'history' ? 'history' : 'pending';
  const canDecide = isRoleAtLeast(principal.role, 'operator');
  const pending = await app.approvals.toJson(await app.approvals.list({ status: 'pending' }));
  // MCP tools are shown as their server and tool (config/mcp.yaml names both).
  const mcpNaming = mcpNamingOf(app);

  // /approvals?request=<id>, the link notifications send: that request, pending (shown and focused) or decided (said)
  let deepLink: DeepLink | null = null;
  const requested = one(sp.request);
  if (tab === 'pending' && requested) {
    const valid = approvalIdSchema.safeParse({ id: requested });
    const row = valid.success ? await app.approvals.get(valid.data.id) : undefined;
    deepLink = { id: requested, found: row ? ((await app.approvals.toJson([row]))[0] ?? null) : null };
  }

  let history: ReturnType<typeof approvalToJson>[] = [];
  let filter: HistoryFilter = {};
  if (tab === 'history') {
    filter = { status: one(sp.status), agent: one(sp.agent), gate: one(sp.gate), decided_by: one(sp.decided_by) };
    const parsed = approvalListQuerySchema.safeParse({ ...filter, status: filter.status ?? 'decided' });
    history = parsed.success ? await app.approvals.toJson(await app.approvals.list(parsed.data)) : [];
  }

  return (
    <>
      <div className="page-head">
        <h1>Approvals</h1>
        <p className="muted">
          Gated tool calls wait here for a person. {canDecide ? 'Approve or reject each exact call; an approved call runs once: at once if the agent is waiting for it, else when it makes the call again.' : 'You can read the queue and its history; deciding needs the operator role.'}
        </p>
      </div>
      <PendingCountProvider key={tab} initial={pending.length}>
        <nav className={styles.tabs} aria-label="Approvals views">
          <Link href="/approvals" aria-current={tab === 'pending' ? 'page' : undefined}>
            Pending (<PendingCount fallback={pending.length} />)
          </Link>
          <Link href="/approvals?tab=history" aria-current={tab === 'history' ? 'page' : undefined}>
            History
          </Link>
        </nav>
        {tab === 'pending' ? (
          <ApprovalQueue
            initial={pending}
            canDecide={canDecide}
            me={principal.id}
            myRole={principal.role}
            serverNow={Date.now() / 1000}
            initialFilter={queueFilterFrom(sp)}
            deepLink={deepLink}
            mcpNaming={mcpNaming}
          />
        ) : (
          <ApprovalHistory rows={history} filter={filter} mcpNaming={mcpNaming} />
        )}
      </PendingCountProvider>
    </>
  );
}
