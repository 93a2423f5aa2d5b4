import { abortedError } from '@signalyard/core/internal';
import type { CompiledAgent, CompiledGroup } from './compiled-crew.js';
import type { CrewEndReason, CrewEvent } from './crew-events.js';
import { runTurn } from './agent-turn.js';
import type { HandoffDecision, TransferChoice } from './handoff-decision.js';
import { runGroup } from './parallel-run.js';
import { AWAITING, OUT_OF_ROUNDS, extend, mainLane, type Run } from './run-context.js';

/**
 * How a run ended successfully, as the run loop hands it to `finish`: the reason, the agent, the
 * signal (and the transfer tool that stood for it).
 * @internal
 */
export interface RunEnd {
  readonly reason: CrewEndReason;
  readonly agentId: string;
  readonly signal?: string;
  readonly tool?: string;
}

/** A decision that ends a turn (a reply's decision, never `tool_round`). @internal */
export type TurnDecision = Exclude<HandoffDecision, { kind: 'tool_round' }>;

/**
 * The loop of agent turns (steps 1–9) from `start`, whose turn has made `toolRounds` tool rounds
 * already (a turn resumed after approval), until the run ends. Each iteration: one agent's turn
 * (model calls and tool rounds, `runTurn`), the decision its final reply makes
 * (`decideHandoff`, in the turn), and that decision carried out ({@link afterTurn},
 * {@link afterGroup}). `decided`: the decision of `start`'s reply when the turn is already over (a
 * reply that transferred, held for approval of its other calls): it is carried out first.
 *
 * @throws AbortedError `ABORTED`; CrewRunError for a run failure.
 * @internal
 */
export async function runLoop(
  run: Run,
  start: CompiledAgent,
  toolRounds: number,
  decided?: TurnDecision,
): Promise<RunEnd> {
  let agent = start;
  let rounds = toolRounds;
  let pending = decided;
  for (;;) {
    run.agentId = agent.id;
    let decision: TurnDecision;
    if (pending === undefined) {
      if (run.abortSignal.aborted) throw abortedError(run.abortSignal);
      const reply = await runTurn(run, mainLane(run, agent), rounds);
      rounds = 0;
      if (reply === OUT_OF_ROUNDS) return { reason: 'max_rounds', agentId: run.lastAgentId };
      if (reply === AWAITING) return { reason: 'awaiting_approval', agentId: agent.id };
      decision = reply.decision as TurnDecision; // the main loop's turns always decide
    } else {
      decision = pending;
      pending = undefined;
    }
    const next =
      decision.kind === 'group' ? await afterGroup(run, agent, decision.group) : afterTurn(run, agent, decision);
    if ('reason' in next) return next;
    agent = next;
  }
}

/** Carries out a decision other than a group's (steps 3–6, 8–9): the next agent, or how the run ends. */
function afterTurn(
  run: Run,
  agent: CompiledAgent,
  decision: Exclude<TurnDecision, { kind: 'group' }>,
): CompiledAgent | RunEnd {
  switch (decision.kind) {
    case 'terminate': {
      const tool = decision.transfer?.transfer.name;
      return tool === undefined
        ? { reason: 'terminated_by_signal', agentId: agent.id, signal: decision.signal }
        : { reason: 'terminated_by_signal', agentId: agent.id, signal: decision.signal, tool };
    }
    case 'handoff':
      return handoff(run, agent, decision.to, 'signal', decision.signal, decision.transfer);
    case 'unrouted': {
      const route = decision.ignored;
      if (route !== undefined) {
        run.emit?.({
          type: 'warning',
          agentId: agent.id,
          message: `Signal ${JSON.stringify(route.signal)} of agent ${JSON.stringify(agent.id)} targets ${JSON.stringify(route.target)}, which is neither an agent nor a parallel group: ignored`,
        });
      }
      // 5–6. Behaviours.
      if (agent.waitForSignal) return { reason: 'paused', agentId: agent.id };
      if (agent.isTerminal) return { reason: 'terminal_agent', agentId: agent.id };
      // 8. Fallback.
      if (agent.fallback === undefined) return { reason: 'no_next_agent', agentId: agent.id };
      return handoff(run, agent, agent.fallback, 'fallback', undefined, undefined);
    }
  }
}

/**
 * Step 7: runs the parallel group `agent`'s reply routed to — if every member can make its first
 * call — and hands off to its `next_agent` (else the fallback): the next agent, or how the run ends.
 */
async function afterGroup(run: Run, agent: CompiledAgent, group: CompiledGroup): Promise<CompiledAgent | RunEnd> {
  if (run.crew.settings.maxRounds - run.modelCalls < group.members.length)
    return { reason: 'max_rounds', agentId: agent.id };
  if ((await runGroup(run, agent, group)) === OUT_OF_ROUNDS) return { reason: 'max_rounds', agentId: agent.id };
  const target = group.next ?? agent.fallback;
  if (target === undefined) return { reason: 'no_next_agent', agentId: agent.id };
  return handoff(run, agent, target, group.next === undefined ? 'fallback' : 'parallel', undefined, undefined);
}

/**
 * Step 9: a handoff that would bring the count to `max_handoffs` is not made (the run ends);
 * otherwise the count goes up, a `handoff` event is emitted (with the transfer tool and its
 * reason when a tool call made it), and `to` is returned.
 */
function handoff(
  run: Run,
  from: CompiledAgent,
  to: CompiledAgent,
  via: 'signal' | 'parallel' | 'fallback',
  signal: string | undefined,
  transfer: TransferChoice | undefined,
): CompiledAgent | RunEnd {
  if (run.handoffs + 1 >= run.crew.settings.maxHandoffs) return { reason: 'max_handoffs', agentId: from.id };
  run.handoffs++;
  run.path = extend(run.path, to.id);
  run.chain.push(to.id);
  const emit = run.emit;
  if (emit !== undefined) {
    const event: CrewEvent = { type: 'handoff', from: from.id, to: to.id, via, handoffs: run.handoffs };
    if (signal !== undefined) event.signal = signal;
    if (transfer !== undefined) {
      event.tool = transfer.transfer.name;
      if (transfer.reason !== undefined) event.reason = transfer.reason;
    }
    emit(event);
  }
  return to;
}
