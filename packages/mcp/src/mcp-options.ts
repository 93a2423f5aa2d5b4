import { describeValue } from '@signalyard/core';
import { isAbortSignal } from '@signalyard/core/internal';
import { configInvalid } from './errors/mcp-error.js';

/** A server started as a child process and spoken to over its stdin/stdout (`StdioClientTransport`). */
export interface McpStdioServer {
  /** The program to run, e.g. `'node'` or `'npx'`. */
  readonly command: string;
  /** Its arguments. */
  readonly args?: readonly string[];
  /** Its environment (the SDK adds a safe default set: `PATH`, `HOME`, …). */
  readonly env?: Readonly<Record<string, string>>;
  /** Its working directory; default this process's. */
  readonly cwd?: string;
  /** Annotations of a trusted server may lift approvals (`readOnlyHint: true` → `approvalHint: 'allow'`). Default `false`. */
  readonly trusted?: boolean;
}

/** A server reached over Streamable HTTP (`StreamableHTTPClientTransport`, falling back to SSE when the first POST gets a 4xx). */
export interface McpHttpServer {
  /** The MCP endpoint, e.g. `'http://127.0.0.1:8931/mcp'`. */
  readonly url: string;
  /** Headers sent with every request, e.g. `{ authorization: 'Bearer …' }`. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Annotations of a trusted server may lift approvals (`readOnlyHint: true` → `approvalHint: 'allow'`). Default `false`. */
  readonly trusted?: boolean;
}

/** One server of {@link ConnectMcpOptions.servers}: stdio (`command`) or Streamable HTTP (`url`). */
export type McpServerConfig = McpStdioServer | McpHttpServer;

/** How a dropped connection is retried: delays from `initialMs` doubling up to `maxMs`, at most `maxAttempts` times. */
export interface McpReconnectOptions {
  /** The first delay, in milliseconds. Default 250. */
  readonly initialMs?: number;
  /** The longest delay, in milliseconds. Default 10,000. */
  readonly maxMs?: number;
  /** Attempts before the server is `failed`; default unlimited. */
  readonly maxAttempts?: number;
}

/**
 * Which approval hint an MCP tool's annotations give (annotations are untrusted hints; an
 * explicit rule of the approval policy always wins):
 *
 * - `'annotations'` (default): `'ask'` when `destructiveHint !== false && readOnlyHint !== true`
 *   (the MCP defaults make an unannotated tool destructive); `'allow'` for `readOnlyHint: true`
 *   on a `trusted` server; otherwise no hint.
 * - `'ask-unless-read-only'`: `'ask'` unless `readOnlyHint: true`; `'allow'` for
 *   `readOnlyHint: true` on a `trusted` server.
 */
export type McpDefaultApproval = 'annotations' | 'ask-unless-read-only';

/** Options of {@link connectMcp}. */
export interface ConnectMcpOptions {
  /** The servers by name (the names views and events use): `{ command, args?, env?, cwd? }` or `{ url, headers? }`. */
  readonly servers: Readonly<Record<string, McpServerConfig>>;
  /** How long connecting one server may take, in milliseconds. Default 10,000. */
  readonly connectTimeoutMs?: number;
  /** How long one call may take without an answer or progress (and how long it waits for a reconnecting server), in milliseconds. Default 60,000. */
  readonly callTimeoutMs?: number;
  /** Reconnecting after a dropped connection; default 250 ms doubling to 10 s, forever. */
  readonly reconnect?: McpReconnectOptions;
  /** How annotations become approval hints; default `'annotations'`. */
  readonly defaultApproval?: McpDefaultApproval;
  /** Tool results longer than this many characters are cut, with a marker saying so. Default 100,000. */
  readonly maxResultChars?: number;
  /** The name and version this client gives servers; default `{ name: 'signalyard', version: '0' }`. */
  readonly clientInfo?: {
    /** The client's name. */
    readonly name: string;
    /** The client's version. */
    readonly version: string;
  };
  /**
   * Stops connecting: `connectMcp` then closes every connection it opened (stdio children end,
   * HTTP sessions close) and rejects with an `AbortedError` (code `ABORTED`). It concerns the
   * connect phase only: once `connectMcp` resolved, aborting does nothing (end the client with
   * `close()`).
   */
  readonly abortSignal?: AbortSignal;
}

/** {@link ConnectMcpOptions}, checked, with every default filled in. @internal */
export interface ResolvedMcpOptions {
  readonly servers: ReadonlyMap<string, McpServerConfig>;
  readonly connectTimeoutMs: number;
  readonly callTimeoutMs: number;
  readonly reconnect: { readonly initialMs: number; readonly maxMs: number; readonly maxAttempts: number };
  readonly defaultApproval: McpDefaultApproval;
  readonly maxResultChars: number;
  readonly clientInfo: { readonly name: string; readonly version: string };
}

const TOP_KEYS = [
  'servers',
  'connectTimeoutMs',
  'callTimeoutMs',
  'reconnect',
  'defaultApproval',
  'maxResultChars',
  'clientInfo',
  'abortSignal',
];
const STDIO_KEYS = ['command', 'args', 'env', 'cwd', 'trusted'];
const HTTP_KEYS = ['url', 'headers', 'trusted'];
const MAX_DELAY = 2_147_483_647;

const isObject = (v: unknown): v is Readonly<Record<string, unknown>> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isStringRecord = (v: unknown): boolean => isObject(v) && Object.values(v).every((x) => typeof x === 'string');
const positive = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v) && v > 0 && v <= MAX_DELAY;

/**
 * Checks `connectMcp`'s options, reporting every problem at once.
 * @throws McpError `MCP_CONFIG_INVALID` naming each bad value and what was expected.
 * @internal
 */
export function resolveMcpOptions(options: unknown): ResolvedMcpOptions {
  if (!isObject(options)) throw configInvalid(`connectMcp needs options { servers, … }, got ${describeValue(options)}`);
  const problems: string[] = [];
  for (const k of Object.keys(options)) {
    if (!TOP_KEYS.includes(k)) problems.push(`unknown option ${JSON.stringify(k)} (expected ${TOP_KEYS.join(', ')})`);
  }
  const servers = new Map<string, McpServerConfig>();
  if (!isObject(options.servers) || Object.keys(options.servers).length === 0) {
    problems.push(`servers: expected a non-empty record of servers by name, got ${describeValue(options.servers)}`);
  } else {
    for (const [name, config] of Object.entries(options.servers)) {
      const problem = serverProblem(name, config);
      if (problem !== undefined) problems.push(problem);
      else servers.set(name, config as McpServerConfig);
    }
  }
  if (options.abortSignal !== undefined && !isAbortSignal(options.abortSignal))
    problems.push(`abortSignal: expected an AbortSignal, got ${describeValue(options.abortSignal)}`);
  for (const key of ['connectTimeoutMs', 'callTimeoutMs', 'maxResultChars'] as const) {
    const v = options[key];
    if (v !== undefined && !positive(v)) problems.push(`${key}: expected a positive number, got ${describeValue(v)}`);
  }
  const reconnect = options.reconnect;
  if (reconnect !== undefined) {
    if (!isObject(reconnect))
      problems.push(`reconnect: expected { initialMs?, maxMs?, maxAttempts? }, got ${describeValue(reconnect)}`);
    else
      for (const [k, v] of Object.entries(reconnect)) {
        if (!['initialMs', 'maxMs', 'maxAttempts'].includes(k))
          problems.push(`reconnect: unknown option ${JSON.stringify(k)}`);
        else if (!positive(v)) problems.push(`reconnect.${k}: expected a positive number, got ${describeValue(v)}`);
      }
  }
  const approval = options.defaultApproval;
  if (approval !== undefined && approval !== 'annotations' && approval !== 'ask-unless-read-only') {
    problems.push(`defaultApproval: expected 'annotations' or 'ask-unless-read-only', got ${describeValue(approval)}`);
  }
  const info = options.clientInfo;
  if (info !== undefined && !(isObject(info) && typeof info.name === 'string' && typeof info.version === 'string')) {
    problems.push(`clientInfo: expected { name: string, version: string }, got ${describeValue(info)}`);
  }
  if (problems.length > 0) throw configInvalid(`Invalid connectMcp options:\n- ${problems.join('\n- ')}`);
  const r = (reconnect ?? {}) as McpReconnectOptions;
  return {
    servers,
    connectTimeoutMs: (options.connectTimeoutMs as number | undefined) ?? 10_000,
    callTimeoutMs: (options.callTimeoutMs as number | undefined) ?? 60_000,
    reconnect: { initialMs: r.initialMs ?? 250, maxMs: r.maxMs ?? 10_000, maxAttempts: r.maxAttempts ?? Infinity },
    defaultApproval: (approval as McpDefaultApproval | undefined) ?? 'annotations',
    maxResultChars: (options.maxResultChars as number | undefined) ?? 100_000,
    clientInfo: (info as ResolvedMcpOptions['clientInfo'] | undefined) ?? { name: 'signalyard', version: '0' },
  };
}

function serverProblem(name: string, config: unknown): string | undefined {
  const at = `servers.${name}`;
  if (name === '') return 'servers: a server name must not be empty';
  if (!isObject(config))
    return `${at}: expected { command, args?, env?, cwd? } or { url, headers? }, got ${describeValue(config)}`;
  const stdio = 'command' in config;
  if (stdio === 'url' in config) return `${at}: expected exactly one of command (stdio) or url (Streamable HTTP)`;
  const allowed = stdio ? STDIO_KEYS : HTTP_KEYS;
  const unknown = Object.keys(config).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) return `${at}: unknown key ${JSON.stringify(unknown[0])} (expected ${allowed.join(', ')})`;
  if (config.trusted !== undefined && typeof config.trusted !== 'boolean')
    return `${at}.trusted: expected true or false, got ${describeValue(config.trusted)}`;
  if (stdio) {
    if (typeof config.command !== 'string' || config.command === '')
      return `${at}.command: expected a non-empty string, got ${describeValue(config.command)}`;
    if (config.args !== undefined && !(Array.isArray(config.args) && config.args.every((a) => typeof a === 'string')))
      return `${at}.args: expected a list of strings, got ${describeValue(config.args)}`;
    if (config.env !== undefined && !isStringRecord(config.env))
      return `${at}.env: expected a record of strings, got ${describeValue(config.env)}`;
    if (config.cwd !== undefined && typeof config.cwd !== 'string')
      return `${at}.cwd: expected a string, got ${describeValue(config.cwd)}`;
    return undefined;
  }
  if (typeof config.url !== 'string' || !URL.canParse(config.url) || !/^https?:/.test(config.url))
    return `${at}.url: expected an http(s) URL, got ${describeValue(config.url)}`;
  if (config.headers !== undefined && !isStringRecord(config.headers))
    return `${at}.headers: expected a record of strings, got ${describeValue(config.headers)}`;
  return undefined;
}
