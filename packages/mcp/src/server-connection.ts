import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  McpError as SdkMcpError,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Tool as McpToolDefinition,
} from '@modelcontextprotocol/sdk/types.js';
import { abortedError } from '@signalyard/core/internal';
import { errorText } from '@signalyard/core/internal';
import { McpError } from './errors/mcp-error.js';
import type { McpServerConfig, McpStdioServer, ResolvedMcpOptions } from './mcp-options.js';

/** A server's connection state, as `{ type: 'state' }` events report it. */
export type McpServerState = 'connecting' | 'ready' | 'reconnecting' | 'failed';

/** What an MCP client reports through `on(listener)`. */
export type McpEvent =
  | {
      /** A server's connection changed state. */
      readonly type: 'state';
      /** The server's name. */
      readonly server: string;
      /** Its new state. */
      readonly state: McpServerState;
      /** Why it is `reconnecting` or `failed` (absent for `connecting` and `ready`). */
      readonly error?: Error;
    }
  | {
      /** A server's tool list was replaced (`notifications/tools/list_changed`, a reconnect, `refresh()`). */
      readonly type: 'tools_changed';
      /** The server's name. */
      readonly server: string;
    };

/** One call's options: abort, progress, and the `_meta` sent with it. @internal */
export interface CallOptions {
  readonly abortSignal?: AbortSignal;
  readonly onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
  readonly meta?: Record<string, unknown>;
  /** A read-only or idempotent tool: a call in flight when the connection dropped is retried once. */
  readonly retrySafe: boolean;
}

interface Waiter {
  resolve(client: Client): void;
  reject(error: Error): void;
}

/**
 * The one connection to one server, shared by every view and agent: its `Client` and
 * transport, its tool-list cache, and reconnecting after a drop (a new `Client` and transport:
 * the SDK does not reconnect). @internal
 */
export class ServerConnection {
  state: McpServerState | 'closed' = 'connecting';
  /** The server's tools by name, from the last `listTools()`. */
  tools: ReadonlyMap<string, McpToolDefinition> = new Map();
  #client: Client | undefined;
  #generation = 0;
  #waiters: Waiter[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #attempt = 0;
  #lastError: Error | undefined;
  /** Clients still in their initialize handshake: `close()` ends them too (a stdio child being started). */
  readonly #connecting = new Set<Client>();

  constructor(
    readonly name: string,
    readonly config: McpServerConfig,
    private readonly options: ResolvedMcpOptions,
    private readonly emit: (event: McpEvent) => void,
  ) {}

  /** Whether annotations of this server may lift approvals. */
  get trusted(): boolean {
    return this.config.trusted === true;
  }

  /** The first connection: rejects with `MCP_CONNECT_FAILED` when it cannot be made in time. */
  async connect(): Promise<void> {
    this.#setState('connecting');
    try {
      await this.#open();
    } catch (error) {
      if (this.state !== 'closed') this.#setState('failed', asError(error));
      throw new McpError({
        code: 'MCP_CONNECT_FAILED',
        message: `Could not connect to MCP server ${JSON.stringify(this.name)} (${describeServer(this.config)}): ${errorText(error)}`,
        server: this.name,
        cause: error,
      });
    }
  }

  /** Replaces the tool cache from the server's `tools/list` (every page). */
  async refresh(): Promise<void> {
    const client = await this.ready(this.options.callTimeoutMs);
    await this.#loadTools(client);
  }

  /** The client once the server is `ready`, waiting up to `timeoutMs` while it reconnects. */
  ready(timeoutMs: number, abortSignal?: AbortSignal): Promise<Client> {
    if (this.state === 'ready' && this.#client !== undefined) return Promise.resolve(this.#client);
    if (this.state === 'failed' || this.state === 'closed') return Promise.reject(this.#unavailable());
    return new Promise<Client>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        abortSignal?.removeEventListener('abort', onAbort);
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
      };
      const waiter: Waiter = {
        resolve: (client) => {
          done();
          resolve(client);
        },
        reject: (error) => {
          done();
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        waiter.reject(
          new McpError({
            code: 'MCP_CALL_TIMEOUT',
            message: `MCP server ${JSON.stringify(this.name)} was not ready again within ${timeoutMs} ms (state ${this.state}${this.#lastError === undefined ? '' : `: ${this.#lastError.message}`})`,
            server: this.name,
          }),
        );
      }, timeoutMs);
      const onAbort = (): void => {
        waiter.reject(abortedError(abortSignal as AbortSignal));
      };
      if (abortSignal?.aborted === true) {
        onAbort();
        return;
      }
      abortSignal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  /**
   * Calls `tool` with `args`: waits for `ready`, sends the SDK's cancel on abort, reports
   * progress, and applies the in-flight rule when the connection drops during the call.
   */
  async call(tool: string, args: Record<string, unknown>, opts: CallOptions): Promise<CallToolResult> {
    const { abortSignal } = opts;
    let retried = false;
    for (;;) {
      const client = await this.ready(this.options.callTimeoutMs, abortSignal);
      const generation = this.#generation;
      try {
        const result = await client.callTool(
          { name: tool, arguments: args, ...(opts.meta !== undefined && { _meta: opts.meta }) },
          undefined,
          {
            timeout: this.options.callTimeoutMs,
            resetTimeoutOnProgress: true,
            ...(abortSignal !== undefined && { signal: abortSignal }),
            ...(opts.onProgress !== undefined && { onprogress: opts.onProgress }),
          },
        );
        return result as CallToolResult;
      } catch (error) {
        if (abortSignal?.aborted === true) throw abortedError(abortSignal);
        if (error instanceof SdkMcpError && error.code === (ErrorCode.RequestTimeout as number)) {
          throw new McpError({
            code: 'MCP_CALL_TIMEOUT',
            message: `MCP tool ${JSON.stringify(tool)} of server ${JSON.stringify(this.name)} gave no answer within ${this.options.callTimeoutMs} ms`,
            server: this.name,
            tool,
            cause: error,
          });
        }
        const refused = isRefused(error);
        if (refused || generation !== this.#generation || isConnectionError(error)) {
          this.#dropped(generation, asError(error));
          // A request that never reached the server (connection refused) is sent again.
          if (refused) continue;
          if (opts.retrySafe && !retried) {
            retried = true;
            continue;
          }
          throw new McpError({
            code: 'MCP_OUTCOME_UNKNOWN',
            message: `outcome unknown: not retried (the connection to MCP server ${JSON.stringify(this.name)} dropped while ${JSON.stringify(tool)} ran${opts.retrySafe ? ', and it dropped again on the retry' : '; the tool is neither read-only nor idempotent'})`,
            server: this.name,
            tool,
            cause: error,
          });
        }
        throw new McpError({
          code: 'MCP_PROTOCOL',
          message: `MCP server ${JSON.stringify(this.name)} failed the call of ${JSON.stringify(tool)}: ${errorText(error)}`,
          server: this.name,
          tool,
          cause: error,
        });
      }
    }
  }

  /** Ends the connection for good (stdio: the child process ends; HTTP: the session is terminated). */
  async close(): Promise<void> {
    this.state = 'closed';
    clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = undefined;
    this.#generation++;
    for (const w of this.#waiters.slice()) w.reject(this.#unavailable());
    // Streamable HTTP: end the server's session (DELETE) before closing; stdio: the child ends.
    const transport = client?.transport;
    if (transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined) {
      await transport.terminateSession().catch(() => undefined);
    }
    await client?.close().catch(() => undefined);
    await Promise.all([...this.#connecting].map((c) => c.close().catch(() => undefined)));
  }

  async #open(): Promise<void> {
    const generation = ++this.#generation;
    const client = await this.#connectClient(generation);
    if (generation !== this.#generation) {
      await client.close().catch(() => undefined);
      return;
    }
    this.#client = client;
    await this.#loadTools(client);
    this.#attempt = 0;
    this.#lastError = undefined;
    this.#setState('ready');
    for (const w of this.#waiters.slice()) w.resolve(client);
  }

  async #connectClient(generation: number): Promise<Client> {
    const first = this.#transport(false);
    try {
      return await this.#handshake(first, generation);
    } catch (error) {
      // Streamable HTTP first; the older HTTP+SSE transport when the first POST got a 4xx.
      if (!(error instanceof StreamableHTTPError) || error.code === undefined || error.code < 400 || error.code >= 500)
        throw error;
      return await this.#handshake(this.#transport(true), generation);
    }
  }

  async #handshake(transport: Transport, generation: number): Promise<Client> {
    const client = new Client(this.options.clientInfo, { capabilities: {} });
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      if (generation !== this.#generation) return;
      await this.#loadTools(client).catch((error: unknown) => {
        this.#dropped(generation, asError(error));
      });
    });
    client.onclose = () => {
      this.#dropped(generation, new Error('the connection closed'));
    };
    client.onerror = (error) => {
      if (isConnectionError(error)) this.#dropped(generation, error);
    };
    const timeout = this.options.connectTimeoutMs;
    this.#connecting.add(client);
    try {
      await client.connect(transport, { timeout });
    } catch (error) {
      client.onclose = undefined;
      await client.close().catch(() => undefined);
      throw error;
    } finally {
      this.#connecting.delete(client);
    }
    return client;
  }

  #transport(sse: boolean): Transport {
    const config = this.config;
    if ('command' in config) {
      const c: McpStdioServer = config;
      return new StdioClientTransport({
        command: c.command,
        args: [...(c.args ?? [])],
        env: { ...getDefaultEnvironment(), ...c.env },
        ...(c.cwd !== undefined && { cwd: c.cwd }),
      });
    }
    const url = new URL(config.url);
    const requestInit = config.headers === undefined ? undefined : { headers: { ...config.headers } };
    // The older HTTP+SSE transport, deprecated by the spec: only the fallback for servers that still speak it.
    // eslint-disable-next-line @typescript-eslint/no-deprecated
    if (sse) return new SSEClientTransport(url, requestInit === undefined ? undefined : { requestInit });
    return new StreamableHTTPClientTransport(url, {
      ...(requestInit !== undefined && { requestInit }),
      reconnectionOptions: {
        maxRetries: 0,
        initialReconnectionDelay: 1000,
        maxReconnectionDelay: 1000,
        reconnectionDelayGrowFactor: 1,
      },
    });
  }

  async #loadTools(client: Client): Promise<void> {
    const tools = new Map<string, McpToolDefinition>();
    let cursor: string | undefined;
    do {
      let page: Awaited<ReturnType<Client['listTools']>>;
      try {
        page = await client.listTools(cursor === undefined ? undefined : { cursor }, {
          timeout: this.options.callTimeoutMs,
        });
      } catch (error) {
        throw new McpError({
          code: 'MCP_PROTOCOL',
          message: `MCP server ${JSON.stringify(this.name)} failed tools/list: ${errorText(error)}`,
          server: this.name,
          cause: error,
        });
      }
      for (const tool of page.tools) tools.set(tool.name, tool);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    if (client !== this.#client && this.#client !== undefined) return;
    this.tools = tools;
    this.emit({ type: 'tools_changed', server: this.name });
  }

  /** The connection of `generation` dropped: reconnect with backoff (once per generation). */
  #dropped(generation: number, error: Error): void {
    if (generation !== this.#generation || this.state === 'closed' || this.state === 'failed') return;
    if (this.state === 'reconnecting' || this.state === 'connecting') return;
    this.#generation++;
    const old = this.#client;
    this.#client = undefined;
    this.#lastError = error;
    this.#setState('reconnecting', error);
    if (old !== undefined) {
      old.onclose = undefined;
      // Closing rejects the requests still in flight on it (the in-flight rule takes over).
      void old.close().catch(() => undefined);
    }
    this.#schedule();
  }

  #schedule(): void {
    const { initialMs, maxMs, maxAttempts } = this.options.reconnect;
    if (this.#attempt >= maxAttempts) {
      this.#setState('failed', this.#lastError);
      for (const w of this.#waiters.slice()) w.reject(this.#unavailable());
      return;
    }
    const delay = Math.min(initialMs * 2 ** this.#attempt, maxMs);
    this.#attempt++;
    this.#timer = setTimeout(() => {
      if (this.state !== 'reconnecting') return;
      this.#open().catch((error: unknown) => {
        if (this.state !== 'reconnecting') return;
        this.#lastError = asError(error);
        this.#schedule();
      });
    }, delay);
  }

  #setState(state: McpServerState, error?: Error): void {
    this.state = state;
    this.emit(
      error === undefined
        ? { type: 'state', server: this.name, state }
        : { type: 'state', server: this.name, state, error },
    );
  }

  #unavailable(): McpError {
    return new McpError({
      code: 'MCP_CONNECT_FAILED',
      message: `MCP server ${JSON.stringify(this.name)} is ${this.state}${this.#lastError === undefined ? '' : `: ${this.#lastError.message}`}`,
      server: this.name,
      ...(this.#lastError !== undefined && { cause: this.#lastError }),
    });
  }
}

const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(errorText(error)));

/** What a server config says, for messages: its command line or URL (never its headers or env). */
function describeServer(config: McpServerConfig): string {
  return 'command' in config ? [config.command, ...(config.args ?? [])].join(' ') : config.url;
}

/** Whether `error` says the request never reached the server (the connection was refused). */
function isRefused(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if ((e as { code?: unknown }).code === 'ECONNREFUSED') return true;
  }
  return false;
}

/** Whether `error` means the connection is gone (closed, a lost HTTP session, a broken stream, a socket error). */
function isConnectionError(error: unknown): boolean {
  if (error instanceof SdkMcpError) return error.code === (ErrorCode.ConnectionClosed as number);
  if (error instanceof StreamableHTTPError) return error.code === 404;
  if (!(error instanceof Error)) return false;
  return (
    isRefused(error) ||
    /SSE stream disconnected|fetch failed|socket hang up|ECONNRESET|EPIPE|other side closed|terminated/i.test(
      error.message,
    )
  );
}
