import { describeValue } from '@signalyard/core';
import { configInvalid } from './errors/mcp-error.js';

/** Options of `serveMcp`. */
export interface ServeMcpOptions {
  /** The agent ids served, each as a tool `ask_<agent>` (and `approve_<agent>` with `approvals`). */
  readonly agents: readonly string[];
  /** Serve over Streamable HTTP (stateless): `port` (0 for any free one), `host` (default `127.0.0.1`), optional bearer `token`, `path` (default `/mcp`). */
  readonly http?: {
    /** The port to listen on; 0 for any free one (`ServedMcp.port` says which). */
    readonly port: number;
    /** The interface to listen on. Default `127.0.0.1`. */
    readonly host?: string;
    /** When given, every request must carry `authorization: Bearer <token>` (else 401). */
    readonly token?: string;
    /** The endpoint's path. Default `/mcp`. */
    readonly path?: string;
  };
  /** Serve over this process's stdin/stdout instead. */
  readonly stdio?: boolean;
  /** Also serve `approve_<agent>` `{ session, decisions }`. Default `false`. */
  readonly approvals?: boolean;
  /** The server name clients see. Default `signalyard`. */
  readonly name?: string;
}

/** {@link ServeMcpOptions}, checked. @internal */
export interface CheckedServeOptions {
  readonly agents: readonly string[];
  readonly stdio: boolean;
  readonly http: {
    readonly port: number;
    readonly host: string;
    readonly token: string | undefined;
    readonly path: string;
  };
  readonly approvals: boolean;
  readonly name: string;
}

const AGENT_ID = /^[a-z0-9][a-z0-9_-]{0,58}$/;
const KEYS = ['agents', 'http', 'stdio', 'approvals', 'name'];

/**
 * Checks `serveMcp`'s arguments, all problems at once.
 * @throws McpError `MCP_CONFIG_INVALID`.
 * @internal
 */
export function checkServeOptions(runner: unknown, options: unknown): CheckedServeOptions {
  const problems: string[] = [];
  const r = runner as { streamDispatch?: unknown; streamApprove?: unknown } | null;
  if (
    typeof r !== 'object' ||
    r === null ||
    typeof r.streamDispatch !== 'function' ||
    typeof r.streamApprove !== 'function'
  )
    problems.push(`expected a Runner (streamDispatch, streamApprove), got ${describeValue(runner)}`);
  if (typeof options !== 'object' || options === null)
    throw configInvalid(`serveMcp needs options { agents, http | stdio }, got ${describeValue(options)}`);
  const o = options as Record<string, unknown>;
  for (const k of Object.keys(o))
    if (!KEYS.includes(k)) problems.push(`unknown option ${JSON.stringify(k)} (expected ${KEYS.join(', ')})`);
  const agents = o.agents;
  if (!Array.isArray(agents) || agents.length === 0)
    problems.push(`agents: expected a non-empty list of agent ids, got ${describeValue(agents)}`);
  else {
    for (const a of agents as unknown[])
      if (typeof a !== 'string' || !AGENT_ID.test(a))
        problems.push(
          `agents: ${describeValue(a)} is not a canonical agent id (lowercase letters, digits, "_" or "-", at most 59)`,
        );
    if (new Set(agents).size !== agents.length) problems.push('agents: an agent id is listed twice');
  }
  const stdio = o.stdio === true;
  if (o.stdio !== undefined && typeof o.stdio !== 'boolean')
    problems.push(`stdio: expected true or false, got ${describeValue(o.stdio)}`);
  const http = o.http as Record<string, unknown> | null | undefined;
  if (stdio === (http !== undefined)) problems.push('expected exactly one of http: { port, … } or stdio: true');
  if (http !== undefined) {
    if (typeof http !== 'object' || http === null)
      problems.push(`http: expected { port, host?, token?, path? }, got ${describeValue(http)}`);
    else {
      const { port, host, token, path } = http;
      if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65535)
        problems.push(`http.port: expected a port number 0 to 65535, got ${describeValue(port)}`);
      if (host !== undefined && (typeof host !== 'string' || host === ''))
        problems.push(`http.host: expected a host name, got ${describeValue(host)}`);
      if (token !== undefined && (typeof token !== 'string' || token === ''))
        problems.push(`http.token: expected a non-empty string, got ${describeValue(token)}`);
      if (path !== undefined && (typeof path !== 'string' || !path.startsWith('/')))
        problems.push(`http.path: expected a path starting with "/", got ${describeValue(path)}`);
      for (const k of Object.keys(http))
        if (!['port', 'host', 'token', 'path'].includes(k)) problems.push(`http: unknown option ${JSON.stringify(k)}`);
    }
  }
  if (o.approvals !== undefined && typeof o.approvals !== 'boolean')
    problems.push(`approvals: expected true or false, got ${describeValue(o.approvals)}`);
  if (o.name !== undefined && (typeof o.name !== 'string' || o.name === ''))
    problems.push(`name: expected a non-empty string, got ${describeValue(o.name)}`);
  if (problems.length > 0) throw configInvalid(`Invalid serveMcp options:\n- ${problems.join('\n- ')}`);
  return {
    agents: agents as string[],
    stdio,
    http: {
      port: (http?.port as number | undefined) ?? 0,
      host: (http?.host as string | undefined) ?? '127.0.0.1',
      token: http?.token as string | undefined,
      path: (http?.path as string | undefined) ?? '/mcp',
    },
    approvals: o.approvals === true,
    name: (o.name as string | undefined) ?? 'signalyard',
  };
}
