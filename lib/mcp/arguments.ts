/**
 * Arguments kept exactly, or refused, over MCP too (issue 42, as the REST routes refuse them: lib/http/schemas.ts). A
 * tools/call whose arguments hold a key named `__proto__`, `constructor` or `prototype` at any depth (or are nested
 * deeper than the engine takes) is answered with the protocol's invalid-params error (-32602) and never reaches the
 * engine or an upstream: the SDK's request schema copies the arguments into a new object, where a `__proto__` key
 * becomes the copy's prototype and vanishes, so the call would be decided and forwarded without it.
 *
 * Looked at on the message as the transport read it (JSON.parse keeps `__proto__` as an own key, and the transports'
 * JSON-RPC envelope schema keeps the params as they are), before the server's request handlers parse it.
 */
import { ErrorCode, isJSONRPCRequest, type JSONRPCErrorResponse, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { argumentsPath, argumentsProblem } from '@/lib/permissions/arguments';

/** The error answer to a tools/call whose arguments cannot be kept exactly, or undefined for any other message. */
export function refusedToolCall(message: JSONRPCMessage): JSONRPCErrorResponse | undefined {
  if (!isJSONRPCRequest(message) || message.method !== 'tools/call') return undefined;
  const params: unknown = message.params;
  if (typeof params !== 'object' || params === null || !Object.hasOwn(params, 'arguments')) return undefined;
  const args: unknown = (params as { arguments: unknown }).arguments;
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return undefined;
  const problem = argumentsProblem(args);
  if (!problem) return undefined;
  return {
    jsonrpc: '2.0',
    id: message.id,
    error: {
      code: ErrorCode.InvalidParams,
      message: `Invalid params: ${problem.message} (${argumentsPath(problem, 'params.arguments')}). Arguments are kept exactly as sent or refused; this call was not decided or run.`,
    },
  };
}
