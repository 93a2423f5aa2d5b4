import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.McpError');

/** The codes of {@link McpError}. */
export type McpErrorCode =
  /** A server could not be connected within `connectTimeoutMs` when `connectMcp` started (the command failed to start, the URL refused, the initialize handshake failed); every connection opened so far was closed again. Fix: check the server's command, arguments and environment, or its URL and headers; raise `connectTimeoutMs` for a slow server. */
  | 'MCP_CONNECT_FAILED'
  /** A view (`tools({ server })`, crew.yaml `mcp: [{ server }]`) or `refresh(server)` names a server that `connectMcp` was not given. Fix: use one of the names of `connectMcp({ servers })`. */
  | 'MCP_SERVER_UNKNOWN'
  /** A tool the model called is no longer in its server's tool list (the server dropped it, or restarted without it); answered to the model as a tool error, never thrown out of a run. Fix: nothing for the call; the agent's next run offers the current list. */
  | 'MCP_TOOL_GONE'
  /** A call got no answer within `callTimeoutMs` (progress notifications extend the wait), or its server was not `ready` again within that time after a dropped connection; answered to the model as a tool error. Fix: raise `callTimeoutMs`, or find out why the server is slow or down (the client's `state` events). */
  | 'MCP_CALL_TIMEOUT'
  /** The server answered a call with `isError: true`; the message is the server's text. Answered to the model as a tool error (the model may correct itself), never thrown out of a run. Fix: usually nothing; read the message for what the server refused. */
  | 'MCP_TOOL_FAILED'
  /** The connection to the server dropped while a call was in flight, and the tool is neither `readOnlyHint` nor `idempotentHint`, so it was not sent again (it may or may not have run): the model is told `outcome unknown: not retried`. Read-only and idempotent tools are retried once after the reconnect instead. Fix: check on the server whether the action happened before repeating it; a server that deduplicates can use `_meta['signalyard/idempotencyKey']`. */
  | 'MCP_OUTCOME_UNKNOWN'
  /** The server broke the protocol: an answer that is not a valid MCP result, a tool list that does not parse, a JSON-RPC error for a valid request. Fix: check the server (its logs, its MCP SDK version); the error's `cause` holds what the SDK reported. */
  | 'MCP_PROTOCOL'
  /** `connectMcp` or `serveMcp` options are invalid (an unknown key, a server that is neither `{ command }` nor `{ url }`, a bad timeout), or the tools one agent sees break the name rules: a name after prefixing that is not 1 to 64 letters, digits, `_` or `-`, or two tools named alike (the message names both servers). Fix: correct the option, or give a view a `prefix`. */
  | 'MCP_CONFIG_INVALID';

/**
 * An MCP client or server failed (codes in {@link McpErrorCode}): a server could not be connected
 * or is unknown, a tool disappeared, a call timed out, a server broke the protocol, or the options
 * are invalid. Inside a run, call failures reach the model as tool error messages (`MCP_TOOL_GONE`,
 * `MCP_CALL_TIMEOUT`); `connectMcp`, `tools()`, `refresh()` and `serveMcp` reject with it.
 *
 * @example
 * ```ts
 * try {
 *   await mcp.tools({ server: 'crm' });
 * } catch (error) {
 *   if (McpError.isInstance(error) && error.code === 'MCP_SERVER_UNKNOWN') console.error(error.server);
 * }
 * ```
 */
export class McpError extends SignalyardError<McpErrorCode> {
  private readonly [marker] = true;
  /** The server the error is about, when it is about one. */
  declare readonly server?: string;
  /** The tool the error is about, when it is about one (its name on the server). */
  declare readonly tool?: string;

  constructor(options: { code: McpErrorCode; message: string; server?: string; tool?: string; cause?: unknown }) {
    super({ code: options.code, message: options.message, cause: options.cause });
    if (options.server !== undefined) this.server = options.server;
    if (options.tool !== undefined) this.tool = options.tool;
  }

  /** True when `error` is an `McpError`, from any installed copy of this package. */
  static override isInstance(error: unknown): error is McpError {
    return hasErrorMarker(error, marker);
  }
}

/** An `MCP_CONFIG_INVALID` error with `message`. @internal */
export function configInvalid(message: string, server?: string): McpError {
  return new McpError({ code: 'MCP_CONFIG_INVALID', message, ...(server !== undefined && { server }) });
}
