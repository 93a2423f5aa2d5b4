import type { McpToolSource, McpToolView } from '@signalyard/core';
import { EventChannel, abortedError, throwIfAborted } from '@signalyard/core/internal';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { configInvalid } from './errors/mcp-error.js';
import { resolveMcpOptions, type ConnectMcpOptions } from './mcp-options.js';
import { mcpTool, type McpTool, type ToolFactoryContext } from './mcp-tool.js';
import { ServerConnection, type McpEvent, type McpServerState } from './server-connection.js';
import { TOOL_NAME, compileView } from './tool-view.js';

/**
 * A connection to a set of MCP servers (what {@link connectMcp} returns): one connection per
 * server, shared by every view and agent. It is an `McpToolSource`, so `crewEngine(crew, { model,
 * mcp })` and `new CrewExecutor({ …, mcp })` resolve crew.yaml `mcp:` views through it.
 */
export interface McpClient extends McpToolSource {
  /**
   * The tools of one view (or several, for one agent), as Signalyard tools, from the servers'
   * cached tool lists: `server`'s tools whose names match an `allow` glob (default all) and no
   * `deny` glob (`*` only; `deny` wins), each named `prefix + name`.
   *
   * @throws McpError (as a rejection) `MCP_SERVER_UNKNOWN` for a server not given to
   * `connectMcp`; `MCP_CONFIG_INVALID` for a malformed view, a name after prefixing that is not
   * 1 to 64 letters, digits, `_` or `-`, or two tools named alike (naming both servers).
   */
  tools(views: McpToolView | readonly McpToolView[]): Promise<McpTool[]>;
  /** Reloads the tool list of `server` (every server when absent) from `tools/list`. */
  refresh(server?: string): Promise<void>;
  /** The connection state of `server`. */
  state(server: string): McpServerState | 'closed';
  /** Listens to state changes and tool-list changes; returns the unsubscribe function. */
  on(listener: (event: McpEvent) => void): () => void;
  /** Ends every connection (stdio children end, HTTP sessions close); calls waiting reject. */
  close(): Promise<void>;
}

/**
 * Connects to MCP servers over stdio (`{ command, args?, env?, cwd? }`) or Streamable HTTP
 * (`{ url, headers? }`, with the SSE fallback), all at once, and keeps each connection alive:
 * a dropped connection (a stdio child that exits, an HTTP 404 "session not found", a socket
 * error) is reconnected with backoff (a new SDK `Client` and transport), and the tool list is
 * replaced after every reconnect, on `notifications/tools/list_changed` and on `refresh()`.
 *
 * MCP tools become ordinary Signalyard `Tool`s (see {@link McpClient.tools}): arguments are
 * validated against the tool's `inputSchema`, results become text (or the structured JSON), an
 * abort sends `notifications/cancelled`, progress goes to `ToolContext.progress`, annotations
 * become approval hints ({@link ConnectMcpOptions.defaultApproval}), and a call in flight when
 * the connection dropped is retried once only for read-only or idempotent tools — others are
 * answered `outcome unknown: not retried`.
 *
 * @throws McpError (as a rejection) `MCP_CONFIG_INVALID` for bad options; `MCP_CONNECT_FAILED`
 * when a server cannot be connected within `connectTimeoutMs` (the others are closed again).
 * @throws AbortedError (as a rejection, code `ABORTED`) when `abortSignal` fires before every
 * server is connected: what was opened is closed again.
 * @example
 * ```ts
 * const mcp = await connectMcp({
 *   servers: {
 *     files: { command: 'node', args: ['files-server.js'] },
 *     crm: { url: 'http://127.0.0.1:8931/mcp', headers: { authorization: `Bearer ${token}` } },
 *   },
 * });
 * const tools = await mcp.tools({ server: 'crm', allow: ['get_*'], deny: ['*_delete'], prefix: 'crm_' });
 * const engine = crewEngine(crew, { model, tools, mcp });   // crew.yaml `mcp:` views resolve through it
 * ```
 */
export async function connectMcp(options: ConnectMcpOptions): Promise<McpClient> {
  const resolved = resolveMcpOptions(options);
  throwIfAborted(options.abortSignal);
  const events = new EventChannel<McpEvent>();
  const connections = new Map<string, ServerConnection>();
  for (const [name, config] of resolved.servers) {
    connections.set(
      name,
      new ServerConnection(name, config, resolved, (e) => {
        events.emit(e);
      }),
    );
  }
  await connectAll([...connections.values()], options.abortSignal);
  const shared: ToolFactoryContext = {
    defaultApproval: resolved.defaultApproval,
    maxResultChars: resolved.maxResultChars,
    validator: new AjvJsonSchemaValidator(),
    validators: new WeakMap(),
  };
  const names = new Set(connections.keys());
  const connection = (server: string): ServerConnection => {
    const found = connections.get(server);
    if (found === undefined) compileView({ server }, names); // throws MCP_SERVER_UNKNOWN
    return found as ServerConnection;
  };
  let closed = false;
  return {
    async tools(views) {
      const list = (Array.isArray(views) ? views : [views]) as readonly unknown[];
      const compiled = list.map((v) => compileView(v, names));
      const out: McpTool[] = [];
      const seen = new Map<string, string>();
      for (const view of compiled) {
        const conn = connection(view.server);
        for (const definition of conn.tools.values()) {
          if (!view.includes(definition.name)) continue;
          const name = view.prefix + definition.name;
          if (!TOOL_NAME.test(name)) {
            throw configInvalid(
              `The MCP tool ${JSON.stringify(definition.name)} of server ${JSON.stringify(view.server)} would be named ${JSON.stringify(name)}, which is not a valid tool name (1 to 64 letters, digits, "_" or "-"): filter it out or change the prefix`,
              view.server,
            );
          }
          const other = seen.get(name);
          if (other !== undefined) {
            throw configInvalid(
              `Two MCP tools would be named ${JSON.stringify(name)} for one agent: one of server ${JSON.stringify(other)} and one of server ${JSON.stringify(view.server)}: give a view a prefix`,
              view.server,
            );
          }
          seen.set(name, view.server);
          out.push(mcpTool(conn, definition, name, shared));
        }
      }
      return out;
    },
    async refresh(server) {
      const targets = server === undefined ? [...connections.values()] : [connection(server)];
      await Promise.all(targets.map((c) => c.refresh()));
    },
    state: (server) => connection(server).state,
    on: (listener) => events.on(listener),
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...connections.values()].map((c) => c.close()));
      events.end();
    },
  };
}

/**
 * Connects every server at once. When one fails, or `abortSignal` fires first, every connection
 * is closed (those still connecting too) and the failure, or the `AbortedError`, is thrown.
 */
async function connectAll(
  connections: readonly ServerConnection[],
  abortSignal: AbortSignal | undefined,
): Promise<void> {
  const settled = Promise.allSettled(connections.map((c) => c.connect()));
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<'aborted'>((resolve) => {
    onAbort = () => {
      resolve('aborted');
    };
    abortSignal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const results = await Promise.race([settled, aborted]);
    if (results === 'aborted') {
      await Promise.all(connections.map((c) => c.close()));
      throw abortedError(abortSignal as AbortSignal);
    }
    const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failure !== undefined) {
      await Promise.all(connections.map((c) => c.close()));
      throw failure.reason;
    }
  } finally {
    if (onAbort !== undefined) abortSignal?.removeEventListener('abort', onAbort);
  }
}
