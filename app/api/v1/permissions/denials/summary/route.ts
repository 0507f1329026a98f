import { requireRole, route } from '@/lib/http/route';
import { denialFilterOf, denialMatchSchema } from '@/lib/http/schemas';

export const dynamic = 'force-dynamic';

/** The summary of a filter: total denials and the top agents, rule sources and tools (the explorer's cards). */
export const GET = route({ role: requireRole('auditor'), query: denialMatchSchema }, async ({ app, query }) => {
  const s = await app.denials.summary(denialFilterOf(query));
  return {
    total: s.total,
    top_agents: s.topAgents,
    top_rule_sources: s.topRuleSources,
    top_tools: s.topTools,
    families: s.families,
  };
});
