import { describeValue } from '@signalyard/core';
import { McpError, configInvalid } from './errors/mcp-error.js';

/** Tool names providers accept, after prefixing. */
export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** A checked view: its globs compiled. @internal */
export interface CompiledView {
  readonly server: string;
  readonly prefix: string;
  /** Whether the server's tool `name` is in the view (`deny` wins over `allow`). */
  includes(name: string): boolean;
}

const VIEW_KEYS = ['server', 'allow', 'deny', 'prefix'];

/** `*` matches any run of characters; everything else is literal. */
function globRegExp(glob: string): RegExp {
  const body = glob
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`);
}

/**
 * Checks one view against the client's servers.
 * @throws McpError `MCP_SERVER_UNKNOWN` for a server the client was not given;
 * `MCP_CONFIG_INVALID` for a malformed view (unknown key, a glob that is not a non-empty string).
 * @internal
 */
export function compileView(view: unknown, servers: ReadonlySet<string>): CompiledView {
  if (typeof view !== 'object' || view === null || Array.isArray(view)) {
    throw configInvalid(`expected a view { server, allow?, deny?, prefix? }, got ${describeValue(view)}`);
  }
  const v = view as Record<string, unknown>;
  const unknown = Object.keys(v).find((k) => !VIEW_KEYS.includes(k));
  if (unknown !== undefined)
    throw configInvalid(`view: unknown key ${JSON.stringify(unknown)} (expected server, allow, deny, prefix)`);
  const { server, allow, deny, prefix } = v;
  if (typeof server !== 'string')
    throw configInvalid(`view.server: expected a server name, got ${describeValue(server)}`);
  if (!servers.has(server)) {
    throw new McpError({
      code: 'MCP_SERVER_UNKNOWN',
      message: `Unknown MCP server ${JSON.stringify(server)} (servers: ${[...servers].map((s) => JSON.stringify(s)).join(', ')})`,
      server,
    });
  }
  if (prefix !== undefined && typeof prefix !== 'string')
    throw configInvalid(`view.prefix: expected a string, got ${describeValue(prefix)}`, server);
  const globs = (key: string, list: unknown): RegExp[] | undefined => {
    if (list === undefined) return undefined;
    if (!Array.isArray(list) || !list.every((g) => typeof g === 'string' && g !== ''))
      throw configInvalid(`view.${key}: expected a list of non-empty globs, got ${describeValue(list)}`, server);
    return (list as string[]).map(globRegExp);
  };
  const allowed = globs('allow', allow);
  const denied = globs('deny', deny) ?? [];
  return {
    server,
    prefix: prefix ?? '',
    includes: (name) =>
      !denied.some((r) => r.test(name)) && (allowed === undefined || allowed.some((r) => r.test(name))),
  };
}
