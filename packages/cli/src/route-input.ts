import { describeValue } from '@signalyard/core';
import { RouteResolver, SessionKeyError, type InboundPeerKind, type InboundRoute } from '@signalyard/sessions';
import type { CommandContext } from './command-context.js';
import { CliUsageError } from './errors/cli-usage-error.js';
import { loadRouting } from './load-config.js';

/** The options `resolve` and `route explain` share, as parsed from the command line. */
export interface RouteOptions {
  readonly config: string;
  readonly channel: string;
  readonly peer?: string;
  readonly account?: string;
  readonly guild?: string;
  readonly team?: string;
  readonly thread?: string;
  readonly json?: boolean;
}

/** `SessionKeyError.problem` of `RouteResolver.resolve` → the option that supplied the value. */
const FLAGS: Readonly<Record<string, string>> = {
  channel: '--channel',
  'account id': '--account',
  'guild id': '--guild',
  'team id': '--team',
  'peer id': '--peer',
  'thread id': '--thread',
};

const PEER_KINDS: ReadonlySet<string> = new Set(['dm', 'group', 'channel', 'thread']);

/** `dm:123` → `{ kind: 'dm', id: '123' }`, split at the first `:` (so `dm:@alice:example.org` works). */
function parsePeer(text: string): { kind: InboundPeerKind; id: string } {
  const colon = text.indexOf(':');
  const kind = colon < 0 ? '' : text.slice(0, colon).trim().toLowerCase();
  const id = colon < 0 ? '' : text.slice(colon + 1);
  if (!PEER_KINDS.has(kind) || id.trim() === '') {
    throw new CliUsageError({
      message: `--peer ${describeValue(text)}: expected kind:id, such as dm:123 or group:grp1 (kind: dm, group, channel or thread)`,
    });
  }
  return { kind: kind as InboundPeerKind, id };
}

/**
 * The inbound message the options describe.
 *
 * @throws CliUsageError for a `--peer` that is not `kind:id`, or a `--thread` without a
 *   group-like peer.
 */
function inboundRoute(options: RouteOptions): InboundRoute {
  const peer = options.peer === undefined ? undefined : parsePeer(options.peer);
  if (options.thread !== undefined && (peer === undefined || peer.kind === 'dm')) {
    throw new CliUsageError({
      message: '--thread needs a group, channel or thread --peer (a thread lives inside one)',
    });
  }
  return {
    channel: options.channel,
    ...(options.account === undefined ? {} : { accountId: options.account }),
    ...(peer === undefined ? {} : { peer }),
    ...(options.guild === undefined ? {} : { guildId: options.guild }),
    ...(options.team === undefined ? {} : { teamId: options.team }),
    ...(options.thread === undefined ? {} : { threadId: options.thread }),
  };
}

/**
 * Checks the message options, loads the routing config and applies `route` (the resolver's
 * `resolve` or `explain`) to the message.
 *
 * @throws CliUsageError for bad options and for values the resolver cannot key (naming the
 *   option that supplied them); CliInputError / ConfigError for an unreadable or invalid config.
 */
export async function routeMessage<T>(
  ctx: CommandContext,
  options: RouteOptions,
  route: (resolver: RouteResolver, input: InboundRoute) => T,
): Promise<{ resolver: RouteResolver; result: T }> {
  const input = inboundRoute(options);
  const resolver = new RouteResolver(await loadRouting(options.config, ctx.cwd));
  try {
    return { resolver, result: route(resolver, input) };
  } catch (error) {
    if (SessionKeyError.isInstance(error)) {
      const flag = FLAGS[error.problem];
      throw new CliUsageError({
        message: flag === undefined ? error.message : `${flag}: ${error.message}`,
        cause: error,
      });
    }
    /* v8 ignore next -- the resolver throws nothing else */
    throw error;
  }
}

/** `routing.bindings[i] (agent x)`, or the default agent's line when no binding decided. */
export function bindingLabel(index: number, agentId: string | undefined): string {
  return agentId === undefined
    ? 'none (no binding matched: the default agent)'
    : `routing.bindings[${index}] (agent ${agentId})`;
}
