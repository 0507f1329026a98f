/**
 * The permission engine's public surface. The module-level functions act on one default engine, which the
 * application configures at start (lib/app.ts); tests and benchmarks may also build their own PermissionEngine.
 */
import { PermissionEngine } from './engine';
import type { CheckInput, CheckResult, RuleSource } from './types';

export * from './types';
export * from './errors';
export { resolve, isStronger, DEFAULT_HTTP_RULE, DEFAULT_TOOL_RULE } from './resolve';
export { PermissionEngine, type EngineHooks } from './engine';

export const defaultEngine = new PermissionEngine();

export const registerSource = (source: RuleSource): void => defaultEngine.registerSource(source);
export const unregisterSource = (name: string): boolean => defaultEngine.unregisterSource(name);
export const resetSources = (): void => defaultEngine.resetSources();
export const markUninitialized = (): void => defaultEngine.markUninitialized();
export const check = (input: CheckInput): CheckResult => defaultEngine.check(input);
export const decide = (input: CheckInput): CheckResult => defaultEngine.decide(input);
export const enforce = (input: CheckInput): CheckResult => defaultEngine.enforce(input);
