import type { Metadata } from 'next';
import { Suspense } from 'react';
import { PLATFORM_TOOLS } from '@/lib/agents/platform-tools';
import { FLAG_CATALOG } from '@/lib/flags/catalog';
import { requirePage } from '@/lib/http/page-auth';
import { DenialExplorer } from './_components/explorer';
import { FAMILY_ORDER } from './_components/families';
import type { Suggestions } from './_components/filter-bar';

export const metadata: Metadata = { title: 'Denials' };
export const dynamic = 'force-dynamic';

/**
 * The denial explorer. The server checks the role (a viewer gets the 403 content, and the refusal is recorded) and
 * hands the browser the names it can suggest; everything else is read from the API by the explorer, driven by the URL.
 */
export default async function DenialsPage() {
  const { app } = await requirePage('/denials', 'auditor');
  const suggestions: Suggestions = {
    agents: [...app.agentsFile.current.agents.keys()].sort(),
    tools: [...new Set([...PLATFORM_TOOLS.map((t) => t.name), 'http'])].sort(),
    ruleSources: [
      ...FAMILY_ORDER,
      ...app.policyFile.current.rules.map((r) => r.ruleSource),
      ...FLAG_CATALOG.map((f) => `flag:${f.name}`),
      'rbac:auditor',
      'rbac:operator',
      'rbac:admin',
      'rbac:agent_identity',
      'hitl:deploy',
      'hitl:export',
    ],
  };
  return (
    <Suspense fallback={<p className="muted">Loading the denial explorer…</p>}>
      <DenialExplorer suggestions={suggestions} />
    </Suspense>
  );
}
