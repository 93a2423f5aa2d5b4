import { formatSessionKey, type ResolvedRoute } from '@signalyard/sessions';
import type { CommandContext } from './command-context.js';
import { bindingLabel, routeMessage, type RouteOptions } from './route-input.js';

/** The options of `signalyard resolve`, as parsed from the command line. */
export type ResolveOptions = RouteOptions;

/**
 * `signalyard resolve --config routing.toml --channel C [--peer kind:id] [--account A]
 * [--guild G] [--team T] [--thread T] [--json]`: prints the agent, the session key, `matchedBy`
 * and the binding that matched. Problems, unreadable files and inputs that cannot be routed are
 * thrown for `run` to report.
 */
export async function resolveCommand(ctx: CommandContext, options: ResolveOptions): Promise<void> {
  const { resolver, result: route } = await routeMessage(ctx, options, (r, input) => r.resolve(input));
  const index = route.binding === undefined ? -1 : resolver.config.bindings.indexOf(route.binding);
  if (options.json === true) {
    ctx.stdout.write(`${JSON.stringify(routeJson(route, index), null, 2)}\n`);
    return;
  }
  ctx.stdout.write(`${routeLines(ctx, route, index).join('\n')}\n`);
}

/** A resolution as `--json` prints it: the session keys formatted, the binding with its index (or `null`). */
export function routeJson(route: ResolvedRoute, index: number): Record<string, unknown> {
  return {
    agentId: route.agentId,
    sessionKey: formatSessionKey(route.sessionKey),
    mainSessionKey: formatSessionKey(route.mainSessionKey),
    matchedBy: route.matchedBy,
    channel: route.channel,
    accountId: route.accountId,
    binding: route.binding === undefined ? null : { index, agentId: route.binding.agentId, match: route.binding.match },
  };
}

/** A resolution for people: agent, session key, `matchedBy` and the binding, one per line. */
export function routeLines(ctx: CommandContext, route: ResolvedRoute, index: number): string[] {
  const { bold, dim } = ctx.out;
  return [
    `${dim('agent:')} ${bold(route.agentId)}`,
    `${dim('session key:')} ${formatSessionKey(route.sessionKey)}`,
    `${dim('matchedBy:')} ${route.matchedBy}`,
    `${dim('binding:')} ${bindingLabel(index, route.binding?.agentId)}`,
  ];
}
