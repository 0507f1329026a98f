/**
 * Security event types in words, for every place that shows them to people (the /audit page, the audit report): a
 * readable label for each type the recorder writes (lib/permissions/recorder.ts); an unknown type (a newer server)
 * still reads sensibly.
 */
export const EVENT_TYPE_LABELS: Record<string, string> = {
  'auth.login.succeeded': 'Signed in',
  'auth.login.failed': 'Sign-in failed',
  'auth.locked': 'User name locked',
  'auth.unlocked': 'User name unlocked',
  'auth.logout': 'Signed out',
  'auth.sso.succeeded': 'Signed in through single sign-on',
  'auth.sso.refused': 'Single sign-on refused',
  'auth.token.refused': 'Access token refused',
  'auth.break_glass': 'Break-glass sign-in',
  'auth.unverified': 'Credential without its seal (not used)',
  'auth.sealed': 'Credentials sealed',
  'user.created': 'User created',
  'user.role_changed': 'Role changed',
  'token.created': 'Token created',
  'token.revoked': 'Token revoked',
  'token.rotated': 'Token rotated',
  'token.expired': 'Token expired',
  'token.disabled': 'Token disabled (unused)',
  'approval.requested': 'Approval requested',
  'approval.approved': 'Call approved',
  'approval.rejected': 'Call rejected',
  'approval.expired': 'Approval expired',
  'approval.consumed': 'Approved call ran',
  'approval.refused': 'Approval decision refused',
  'approval.unverified': 'Approval not in the audit trail (not used)',
  'flag.changed': 'Flag changed',
  'flag.refused': 'Flag change refused',
  'config.loaded': 'Configuration loaded',
  'config.refused': 'Configuration refused',
  'profile.switched': 'Profile switched',
  'policy.proposed': 'Rule change proposed',
  'policy.voted': 'Vote on a rule change',
  'policy.rejected': 'Rule change rejected',
  'policy.withdrawn': 'Rule change withdrawn',
  'policy.approved': 'Rule change approved (advisory)',
  'policy.activated': 'Rules activated',
  'policy.rolled_back': 'Emergency rollback of the rules',
  'policy.refused': 'Rule change refused',
  'policy.unverified': 'Activation not in the audit trail (not loaded)',
  'config.drift': 'File differs from the rules in force',
  'mcp.tool.pinned': 'MCP tool pinned at first sight',
  'mcp.tool.held': 'New MCP tool held for review',
  'mcp.tool.changed': 'MCP tool definition changed (held)',
  'mcp.tool.accepted': 'MCP tool definition accepted',
  'mcp.tool.refused': 'MCP tool name refused',
  'audit.queried': 'Audit trail read',
  'audit.exported': 'Audit trail exported',
  'audit.verified': 'Integrity verified',
  'audit.explained': 'Decision explained',
  'audit.checkpointed': 'Checkpoint signed',
  'audit.checkpoint_refused': 'Checkpoint refused',
  'audit.report_generated': 'Audit report generated',
  'retention.archived': 'Rows archived',
  'server.started': 'Server started',
  'server.stopped': 'Server stopped',
  'hook.failed': 'Hook failed',
  'decision.allowed': 'Call allowed',
  'decision.asked': 'Approval asked',
};

/** "Sign-in failed" for auth.login.failed; an unknown type in words ("widget.spun" → "Widget spun"). */
export function typeLabel(type: string): string {
  const known = EVENT_TYPE_LABELS[type];
  if (known) return known;
  const words = type.replace(/[._]/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
