/**
 * The permission engine's public surface. There is no module-level engine: each application builds its own
 * (`lib/server/app.ts`: `app.engine`), wired to its own files and stores, so two applications in one process never share
 * sources, gates or hooks. Tests and benchmarks build a PermissionEngine of their own the same way.
 */
export * from './types';
export * from './errors';
export { argumentsPath, argumentsProblem, assertArguments, FORBIDDEN_ARGUMENT_KEYS, InvalidArguments, MAX_ARGUMENT_DEPTH, type ArgumentsProblem } from './arguments';
export { resolve, isStronger, DEFAULT_HTTP_RULE, DEFAULT_TOOL_RULE } from './resolve';
export { authorize, gateOfCall, type CallFacts } from './authorize';
export { EngineIsAsync, PermissionEngine, type ConfigSnapshot, type DecisionSnapshot, type EnginePorts, type EngineOptions, type PreparedCall } from './engine';
export { drive, isPromise, type Step } from './steps';
export * from './recorder';
export * from './call-hooks';
export { newDecisionId } from './decision-id';
