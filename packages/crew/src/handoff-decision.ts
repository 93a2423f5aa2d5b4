import type { CompiledAgent, CompiledGroup, CompiledRoute } from './compiled-crew.js';

/**
 * What the final reply of an agent's turn decides (steps 3–4), before anything is done about it:
 *
 * - `terminate`: a termination signal (target `""`) matched — the run ends;
 * - `handoff`: a routing signal whose target is an agent matched;
 * - `group`: a routing signal whose target is a parallel group matched;
 * - `unrouted`: no signal decides, so the agent's behaviours and its fallback do (steps 5–8).
 *   `ignored` is a matched signal whose target names nothing known (possible only when
 *   validation was bypassed): the run warns about it.
 * @internal
 */
export type HandoffDecision =
  | { readonly kind: 'terminate'; readonly signal: string }
  | { readonly kind: 'handoff'; readonly to: CompiledAgent; readonly signal: string }
  | { readonly kind: 'group'; readonly group: CompiledGroup }
  | { readonly kind: 'unrouted'; readonly ignored: CompiledRoute | undefined };

const UNROUTED: HandoffDecision = Object.freeze({ kind: 'unrouted', ignored: undefined });

/**
 * The decision of `agent`'s final `reply` (see {@link HandoffDecision}): termination is checked
 * before routing (a reply with both `[NEXT]` and `[DONE]` ends), and among the routing signals
 * the first in config order that matches decides. Pure: the run loop acts on the result.
 * @internal
 */
export function decideHandoff(agent: CompiledAgent, reply: string): HandoffDecision {
  const t = agent.terminationMatcher?.first(reply);
  if (t !== undefined) return { kind: 'terminate', signal: agent.terminations[t] as string };
  const r = agent.routeMatcher?.first(reply);
  if (r === undefined) return UNROUTED;
  const route = agent.routes[r] as CompiledRoute;
  if (route.agent !== undefined) return { kind: 'handoff', to: route.agent, signal: route.signal };
  if (route.group !== undefined) return { kind: 'group', group: route.group };
  return { kind: 'unrouted', ignored: route };
}
