import { describeValue } from '@signalyard/core';
import {
  RouteResolver,
  SessionKeyError,
  formatSessionKey,
  type InboundPeerKind,
  type InboundRoute,
  type ResolvedRoute,
} from '@signalyard/sessions';
import type { CommandContext } from './command-context.js';
import { CliUsageError } from './errors/cli-usage-error.js';
import { loadRouting } from './load-config.js';

/** The options of `signalyard resolve`, as parsed from the command line. */
export interface ResolveOptions {
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
 * `signalyard resolve --config routing.toml --channel C [--peer kind:id] [--account A]
 * [--guild G] [--team T] [--thread T] [--json]`: prints the agent, the session key, `matchedBy`
 * and the binding that matched . Problems, unreadable files and inputs that cannot be
 * routed are thrown for `run` to report.
 */
export async function resolveCommand(ctx: CommandContext, options: ResolveOptions): Promise<void> {
  const peer = options.peer === undefined ? undefined : parsePeer(options.peer);
  if (options.thread !== undefined && (peer === undefined || peer.kind === 'dm')) {
    throw new CliUsageError({
      message: '--thread needs a group, channel or thread --peer (a thread lives inside one)',
    });
  }
  const input: InboundRoute = {
    channel: options.channel,
    ...(options.account === undefined ? {} : { accountId: options.account }),
    ...(peer === undefined ? {} : { peer }),
    ...(options.guild === undefined ? {} : { guildId: options.guild }),
    ...(options.team === undefined ? {} : { teamId: options.team }),
    ...(options.thread === undefined ? {} : { threadId: options.thread }),
  };
  const resolver = new RouteResolver(await loadRouting(options.config, ctx.cwd));
  let route: ResolvedRoute;
  try {
    route = resolver.resolve(input);
  } catch (error) {
    if (SessionKeyError.isInstance(error)) {
      const flag = FLAGS[error.problem];
      throw new CliUsageError({
        message: flag === undefined ? error.message : `${flag}: ${error.message}`,
        cause: error,
      });
    }
    /* v8 ignore next -- resolve throws nothing else */
    throw error;
  }
  const index = route.binding === undefined ? -1 : resolver.config.bindings.indexOf(route.binding);
  if (options.json === true) {
    const out = {
      agentId: route.agentId,
      sessionKey: formatSessionKey(route.sessionKey),
      mainSessionKey: formatSessionKey(route.mainSessionKey),
      matchedBy: route.matchedBy,
      channel: route.channel,
      accountId: route.accountId,
      binding:
        route.binding === undefined ? null : { index, agentId: route.binding.agentId, match: route.binding.match },
    };
    ctx.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return;
  }
  const { bold, dim } = ctx.out;
  const binding =
    route.binding === undefined
      ? 'none (no binding matched: the default agent)'
      : `routing.bindings[${index}] (agent ${route.binding.agentId})`;
  ctx.stdout.write(
    [
      `${dim('agent:')} ${bold(route.agentId)}`,
      `${dim('session key:')} ${formatSessionKey(route.sessionKey)}`,
      `${dim('matchedBy:')} ${route.matchedBy}`,
      `${dim('binding:')} ${binding}`,
    ].join('\n') + '\n',
  );
}
