import type { ToolCall } from '@signalyard/core';
import type { CompiledAgent, CompiledGroup, CompiledRoute, CompiledTransfer } from './compiled-crew.js';
import { readTransferArguments } from './transfer-tools.js';

/**
 * The transfer call a decision was made by (`handoff_mode: tool | both`): the call, its tool, and
 * the `reason` the model gave, if any.
 * @internal
 */
export interface TransferChoice {
  readonly call: ToolCall;
  readonly transfer: CompiledTransfer;
  readonly reason: string | undefined;
}

/**
 * What a reply of an agent's turn decides (steps 2–4), before anything is done about it:
 *
 * - `tool_round`: the reply calls tools and no transfer tool: a tool round, then the same agent
 *   is called again;
 * - `terminate`: a termination signal (target `""`) matched, or its `finish` tool was called —
 *   the run ends;
 * - `handoff`: a routing signal whose target is an agent matched, or its transfer tool was called;
 * - `group`: the same for a parallel group;
 * - `unrouted`: nothing decides, so the agent's behaviours and its fallback do (steps 5–8).
 *   `ignored` is a matched signal whose target names nothing known (possible only when
 *   validation was bypassed): the run warns about it.
 *
 * `transfer` is set when a transfer call made the decision. A reply that ends the turn may still
 * carry tool calls (its ordinary calls run, every transfer call is answered); see
 * {@link transferAnswer}.
 * @internal
 */
export type HandoffDecision =
  | { readonly kind: 'tool_round' }
  | { readonly kind: 'terminate'; readonly signal: string; readonly transfer?: TransferChoice }
  | {
      readonly kind: 'handoff';
      readonly to: CompiledAgent;
      readonly signal: string;
      readonly transfer?: TransferChoice;
    }
  | {
      readonly kind: 'group';
      readonly group: CompiledGroup;
      readonly signal: string;
      readonly transfer?: TransferChoice;
    }
  | { readonly kind: 'unrouted'; readonly ignored: CompiledRoute | undefined };

const UNROUTED: HandoffDecision = Object.freeze({ kind: 'unrouted', ignored: undefined });
const TOOL_ROUND: HandoffDecision = Object.freeze({ kind: 'tool_round' });

/**
 * The decision of `agent`'s reply in the main loop (see {@link HandoffDecision}). Pure: the turn
 * and the run loop act on the result; the same reply always gives the same decision (a turn
 * resumed after approval decides its held reply again).
 *
 * - A reply with tool calls is a tool round unless one of them is a valid call to a transfer
 *   tool (a transfer with bad arguments is no handoff: it is answered as an error).
 * - Markers (`handoff_mode: marker | both`): termination is checked before routing (a reply with
 *   both `[NEXT]` and `[DONE]` ends), and among the routing signals the first in config order
 *   that matches decides.
 * - In `both` mode a marker beats a transfer call: a reply's text comes before its tool calls.
 * - Transfer calls (`tool | both`): the first valid one in call order decides.
 * @internal
 */
export function decideHandoff(
  agent: CompiledAgent,
  reply: { readonly content: string; readonly toolCalls?: readonly ToolCall[] | undefined },
): HandoffDecision {
  const calls = reply.toolCalls;
  let chosen: TransferChoice | undefined;
  if (calls !== undefined && calls.length > 0) {
    const transfers = agent.transfers;
    if (transfers !== undefined) chosen = firstTransfer(transfers, calls);
    if (chosen === undefined) return TOOL_ROUND;
  }
  const byMarker = agent.matchesMarkers ? markerDecision(agent, reply.content) : UNROUTED;
  if (chosen === undefined || byMarker.kind !== 'unrouted') return byMarker;
  const route = chosen.transfer.route;
  if (route === undefined) return { kind: 'terminate', signal: chosen.transfer.signal, transfer: chosen };
  if (route.agent !== undefined) return { kind: 'handoff', to: route.agent, signal: route.signal, transfer: chosen };
  return { kind: 'group', group: route.group as CompiledGroup, signal: route.signal, transfer: chosen };
}

/** The decision of the markers in `content` (steps 3–4). */
function markerDecision(agent: CompiledAgent, content: string): HandoffDecision {
  const t = agent.terminationMatcher?.first(content);
  if (t !== undefined) return { kind: 'terminate', signal: agent.terminations[t] as string };
  const r = agent.routeMatcher?.first(content);
  if (r === undefined) return UNROUTED;
  const route = agent.routes[r] as CompiledRoute;
  if (route.agent !== undefined) return { kind: 'handoff', to: route.agent, signal: route.signal };
  if (route.group !== undefined) return { kind: 'group', group: route.group, signal: route.signal };
  return { kind: 'unrouted', ignored: route };
}

/** The first call to a transfer tool whose arguments are valid, or `undefined`. */
function firstTransfer(
  transfers: ReadonlyMap<string, CompiledTransfer>,
  calls: readonly ToolCall[],
): TransferChoice | undefined {
  for (const call of calls) {
    const transfer = transfers.get(call.name);
    if (transfer === undefined) continue;
    const args = readTransferArguments(call);
    if (args.ok) return { call, transfer, reason: args.reason };
  }
  return undefined;
}

/** The answer to a valid transfer call that another transfer (or a marker) beat. */
const IGNORED = 'ignored: another transfer was chosen';

/**
 * How a call of a reply to one of `transfers` is answered (`undefined` for a call that is not a
 * transfer call: it runs as a tool): the call that made `decision` → `transferred to <target>`
 * (or `finished`); bad arguments → an error, no handoff; any other → `ignored: another transfer
 * was chosen`. `warning` says, for the ones that did nothing, why.
 * @internal
 */
export function transferAnswer(
  transfers: ReadonlyMap<string, CompiledTransfer>,
  call: ToolCall,
  decision: HandoffDecision,
): { readonly content: string; readonly isError: boolean; readonly warning: string | undefined } | undefined {
  const transfer = transfers.get(call.name);
  if (transfer === undefined) return undefined;
  if ('transfer' in decision && decision.transfer?.call === call)
    return { content: transfer.answer, isError: false, warning: undefined };
  const args = readTransferArguments(call);
  if (!args.ok) {
    const why = `invalid arguments for ${call.name}: ${args.problem}`;
    return { content: `Error: ${why}`, isError: true, warning: `${why}; answered as an error, no handoff` };
  }
  return {
    content: IGNORED,
    isError: false,
    warning: `another transfer was chosen, so this one is ignored`,
  };
}
