import { describeValue } from '@signalyard/core';
import type { ConsideredBinding } from '@signalyard/sessions';
import { count, type CommandContext } from './command-context.js';
import { routeJson, routeLines } from './resolve-command.js';
import { routeMessage, type RouteOptions } from './route-input.js';

/** One considered binding for people: `routing.bindings[2] (agent vip, peer tier): no match: …`. */
function consideredLine(ctx: CommandContext, c: ConsideredBinding): string {
  const label = `routing.bindings[${c.index}] (agent ${c.binding.agentId}, ${c.tier} tier)`;
  return `  ${c.reason.startsWith('won:') ? ctx.out.bold(label) : label}: ${c.reason}`;
}

/**
 * `signalyard route explain --config routing.toml --channel C [--peer kind:id] [--account A]
 * [--guild G] [--team T] [--thread T] [--json]`: what `resolve` prints, then every binding on
 * the message's channel in config order with why it won or lost (`RouteResolver.explain`).
 * Problems, unreadable files and inputs that cannot be routed are thrown for `run` to report.
 */
export async function routeExplainCommand(ctx: CommandContext, options: RouteOptions): Promise<void> {
  const { resolver, result: why } = await routeMessage(ctx, options, (r, input) => r.explain(input));
  const index = why.binding === undefined ? -1 : resolver.config.bindings.indexOf(why.binding);
  if (options.json === true) {
    const out = {
      ...routeJson(why, index),
      considered: why.considered.map((c) => ({
        index: c.index,
        binding: { agentId: c.binding.agentId, match: c.binding.match },
        tier: c.tier,
        matched: c.matched,
        reason: c.reason,
      })),
    };
    ctx.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return;
  }
  const { dim } = ctx.out;
  const on = `on channel ${describeValue(why.channel)}`;
  const considered =
    why.considered.length === 0
      ? [`${dim('considered:')} none (no binding ${on})`]
      : [
          `${dim('considered:')} ${count(why.considered.length, 'binding')} ${on}, in config order`,
          ...why.considered.map((c) => consideredLine(ctx, c)),
        ];
  ctx.stdout.write(`${[...routeLines(ctx, why, index), ...considered].join('\n')}\n`);
}
