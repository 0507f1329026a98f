export { createRbacSource } from './rbac';
export { createAgentAllowlistSource, type AgentDirectory } from './agent-allowlist';
export { createFlagSource, type FlagGuard } from './feature-flags';
export { createPolicySource } from './policy';
export { createHitlSource } from './hitl';
export { createMcpPinSource, NO_PIN_DIRECTORY, type PinDirectory } from './mcp-pin';
