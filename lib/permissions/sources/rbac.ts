import { isRoleAtLeast, PRIORITY, scopesAllow, type PermissionRule, type RuleSource } from '@/lib/permissions/types';

const NONE: readonly PermissionRule[] = Object.freeze([]);

/**
 * RBAC: a principal below the role a route (or tool) requires is denied, attributed to `rbac:<required role>`.
 * An agent token may act only as its own agent; naming another agent is denied as `rbac:agent_identity`.
 * A token not scoped for what the route needs (an agent's `decide` token reading denials, a `read` token deciding an
 * approval) is denied as `rbac:scope`, whatever its owner's role. A route that serves one kind of principal (the MCP
 * endpoint serves agents, people vote on the rules) denies the other as `rbac:agents_only` or `rbac:people_only`.
 */
export function createRbacSource(): RuleSource {
  return {
    name: 'rbac',
    attributedTo: 'rbac',
    rules(context) {
      const { principal } = context;
      let out: PermissionRule[] | undefined;
      if (context.requiredRole && !isRoleAtLeast(principal.role, context.requiredRole)) {
        out = [
          {
            decision: 'DENY',
            priority: PRIORITY.rbac,
            attribution: { source: 'rbac', id: context.requiredRole },
            reason:
              principal.kind === 'anonymous'
                ? `Sign-in required: this needs role "${context.requiredRole}".`
                : `Role "${principal.role}" is below the required role "${context.requiredRole}".`,
          },
        ];
      }
      if (context.kind === 'http' && context.requiredScope && principal.scopes && !scopesAllow(principal.scopes, context.requiredScope)) {
        (out ??= []).push({
          decision: 'DENY',
          priority: PRIORITY.rbac,
          attribution: { source: 'rbac', id: 'scope' },
          reason: `The token's scope (${principal.scopes.join(', ') || 'none'}) does not include "${context.requiredScope}", which this needs.`,
        });
      }
      if (context.kind === 'http' && context.requiredPrincipal && principal.kind !== 'anonymous' && principal.kind !== context.requiredPrincipal) {
        const agents = context.requiredPrincipal === 'agent';
        (out ??= []).push({
          decision: 'DENY',
          priority: PRIORITY.rbac,
          attribution: { source: 'rbac', id: agents ? 'agents_only' : 'people_only' },
          reason: agents
            ? 'This serves agents: use an agent token (npx swarm tokens add --agent NAME).'
            : "This is for people (a person's session or token), not for an agent.",
        });
      }
      if (principal.kind === 'agent' && context.agent !== undefined && principal.agent !== context.agent) {
        (out ??= []).push({
          decision: 'DENY',
          priority: PRIORITY.rbac,
          attribution: { source: 'rbac', id: 'agent_identity' },
          reason: `The token of agent "${principal.agent ?? principal.id}" cannot act as agent "${context.agent}".`,
        });
      }
      return out ?? NONE;
    },
  };
}
