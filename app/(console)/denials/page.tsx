import type { Metadata } from 'next';
import { Suspense } from 'react';
import { requireSignedIn } from '@/lib/http/page-auth';
import { McpNamingProvider } from '@/app/(console)/_mcp/mcp-naming';
import { mcpNamingOf } from '@/app/(console)/_mcp/naming-of';
import { DenialExplorer } from './_components/explorer';

export const metadata: Metadata = { title: 'Denials' };
export const dynamic = 'force-dynamic';

/**
 * The denial explorer. The server checks the role (a viewer gets the 403 content, and the refusal is recorded);
 * everything else is read from the API by the explorer, driven by the URL (the filter fields suggest the values of the
 * denials themselves, facet-combobox.tsx).
 */
export default async function DenialsPage() {
  const { app } = await requireSignedIn('/denials');
  // An MCP tool's detail names its server (config/mcp.yaml's naming).
  return (
    <McpNamingProvider naming={mcpNamingOf(app)}>
      <Suspense fallback={<p className="muted">Loading the denial explorer…</p>}>
        <DenialExplorer />
      </Suspense>
    </McpNamingProvider>
  );
}
