/**
 * Which proposal introduced the rule that decided a call (`swarm audit explain`): the activations up to the decision
 * are walked back from the one in force then, for as long as the rule's definition was the same; the earliest of them
 * brought it in. A policy rule is found by its id (policy:<id>), a gate by its id (hitl:<id>), an agent's allowlist by
 * the agent (agent_allowlist). Rules that live elsewhere (roles, flags, profiles, hooks) are not from a proposal.
 */
import { parse } from 'yaml';
import { canonicalJson } from '@/lib/approvals/canonical';
import type { RevisionStore } from '@/lib/audit/revisions';
import type { ChangeControlStore } from './store';

type Doc = Record<string, unknown> | null;

const entries = (doc: Doc, key: string): Record<string, unknown>[] => {
  const list = doc?.[key];
  return Array.isArray(list) ? (list.filter((e) => e && typeof e === 'object') as Record<string, unknown>[]) : [];
};

/** The definition of the rule a source names, in the files of one revision (undefined: not there, or not a file's). */
export function definitionOf(ruleSource: string, agent: string | null, files: { agents: string | null; policy: string | null; gates: string | null }): string | undefined {
  const read = (text: string | null): Doc => {
    try {
      return text === null ? null : ((parse(text) as Doc) ?? null);
    } catch {
      return null;
    }
  };
  const policy = /^policy:([^/]+)$/.exec(ruleSource);
  if (policy) {
    const rule = entries(read(files.policy), 'rules').find((r) => r.id === policy[1]);
    return rule && canonicalJson(rule);
  }
  const gate = /^hitl:(.+)$/.exec(ruleSource);
  if (gate) {
    const g = entries(read(files.gates), 'gates').find((e) => e.id === gate[1]);
    return g && canonicalJson(g);
  }
  if (ruleSource === 'agent_allowlist' && agent) {
    const agents = read(files.agents)?.agents as Record<string, unknown> | undefined;
    const a = agents?.[agent];
    return a === undefined ? undefined : canonicalJson(a);
  }
  return undefined;
}

/**
 * The activation that brought in the rule as it was when it decided, and its proposal (proposal_id null: the seed, the
 * files at the first start); null when the rule is not from a proposal's files.
 */
export async function ruleOrigin(store: ChangeControlStore, revisions: RevisionStore, ruleSource: string, agent: string | null, at: number) {
  const activations = (await store.activations(10_000)).filter((a) => a.activatedAt <= at).sort((x, y) => x.seq - y.seq);
  if (activations.length === 0) return null;
  const defs = new Map<string, string | undefined>();
  const definitionAt = async (revision: string) => {
    if (!defs.has(revision)) {
      const content = await revisions.get(revision);
      defs.set(revision, content ? definitionOf(ruleSource, agent, content.files) : undefined);
    }
    return defs.get(revision);
  };
  let i = activations.length - 1;
  const def = await definitionAt(activations[i]!.revision);
  if (def === undefined) return null;
  while (i > 0 && (await definitionAt(activations[i - 1]!.revision)) === def) i--;
  const a = activations[i]!;
  const proposal = a.proposalId ? await store.proposal(a.proposalId) : undefined;
  return {
    proposal_id: a.proposalId,
    activation: a.seq,
    kind: a.kind,
    activated_at: a.activatedAt,
    activated_by: a.activatedBy,
    proposed_by: proposal?.proposedBy ?? null,
    message: proposal?.message ?? null,
  };
}

export type RuleOrigin = NonNullable<Awaited<ReturnType<typeof ruleOrigin>>>;
