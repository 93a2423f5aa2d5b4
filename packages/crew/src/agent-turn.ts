import { describeValue, type ChatMessage, type ChatRequest, type ChatResponse } from '@signalyard/core';
import { agentTools } from './mcp-tools.js';
import { abortedError, errorText, untilAborted } from '@signalyard/core/internal';
import type { CrewEvent } from './crew-events.js';
import { requestMessages, toolCallsProblem } from './crew-history.js';
import { CrewAgentError } from './errors/crew-agent-error.js';
import { CrewRunError } from './errors/crew-run-error.js';
import { decideHandoff, type HandoffDecision } from './handoff-decision.js';
import { AWAITING, OUT_OF_ROUNDS, checkInterrupt, laneTransfers, stateOf, type Lane, type Run } from './run-context.js';
import { SignalHider } from './signal-hider.js';
import { streamedReply } from './streamed-reply.js';
import { answerTransferCalls, closeCalls, toolRound } from './tool-round.js';

/**
 * How an agent turn ended: its final reply's content and — in the main loop — what that reply
 * decides (never `tool_round`); `undefined` for a parallel member, whose reply decides nothing.
 * @internal
 */
export interface TurnEnd {
  readonly content: string;
  readonly decision: Exclude<HandoffDecision, { kind: 'tool_round' }> | undefined;
}

/**
 * One agent turn (steps 1–2): model calls and tool rounds until a final reply — one without tool
 * calls, or (main loop) one that calls a transfer tool or whose marker decides over its transfer
 * calls — or `OUT_OF_ROUNDS` when `max_rounds` forbids the next call, or `AWAITING` when calls of
 * a reply are held for approval (main loop only: the reply and its results are then in
 * `run.approvals.batch`, not in the history). Appends every reply and tool result to
 * `lane.history`; a final reply's ordinary calls run (their approvals apply) and its transfer
 * calls are answered, then the turn ends. `toolRounds`: the rounds this turn already made (a
 * resumed turn).
 *
 * What a reply decides is `decideHandoff`'s business; carrying it out is the run loop's.
 *
 * @throws AbortedError `ABORTED`. In the main loop: CrewRunError `CREW_AGENT_FAILED`,
 * `CREW_TOOL_LOOP`, `CREW_COMMIT_FAILED`; in a parallel member: CrewAgentError
 * `CREW_MEMBER_FAILED`, `CREW_MEMBER_TOOL_LOOP`.
 * @internal
 */
export async function runTurn(
  run: Run,
  lane: Lane,
  toolRounds = 0,
): Promise<TurnEnd | typeof OUT_OF_ROUNDS | typeof AWAITING> {
  const settings = run.crew.settings;
  const { agent, history, group } = lane;
  let rounds = toolRounds;
  for (;;) {
    if (run.modelCalls >= settings.maxRounds) return OUT_OF_ROUNDS;
    if (rounds === 0)
      run.emit?.(
        group === undefined
          ? { type: 'agent_start', agentId: agent.id }
          : { type: 'agent_start', agentId: agent.id, group },
      );
    if (group === undefined) checkInterrupt(run); // a safe point: before a model call
    const request = modelRequest(run, lane);
    const message = replyMessage(run, lane, await askModel(run, lane, request), request);
    const calls = message.toolCalls;
    const decision = group === undefined ? decideHandoff(agent, message) : undefined;
    if (calls === undefined) {
      history.push(message);
      return { content: message.content, decision: decision as TurnEnd['decision'] };
    }
    const final = decision !== undefined && decision.kind !== 'tool_round';
    if (final && answerTransferCalls(run, lane, message, decision)) return { content: message.content, decision };
    if (!final) {
      if (rounds >= settings.maxToolRounds) {
        const why = `agent ${JSON.stringify(agent.id)} reached max_tool_rounds (${settings.maxToolRounds})`;
        history.push(message);
        closeCalls(history, calls, 0, `not run: ${why}`);
        throw turnFailure(
          run,
          lane,
          'tool_loop',
          `Agent ${JSON.stringify(agent.id)} asked for tool round ${rounds + 1}, but max_tool_rounds is ${settings.maxToolRounds}`,
        );
      }
      rounds++; // a round counts once, however many approval pauses it spans
    }
    if ((await toolRound(run, lane, message, rounds, decision)) === AWAITING) return AWAITING;
    if (final) return { content: message.content, decision };
  }
}

/**
 * A model's reply as the turn's `assistant` message (named after the agent), recorded as the
 * run's last reply (main loop) and emitted as `agent_response`.
 */
function replyMessage(run: Run, lane: Lane, response: ChatResponse, request: ChatRequest): ChatMessage {
  const { agent, group } = lane;
  const { content, toolCalls } = response;
  const calls = toolCalls === undefined || toolCalls.length === 0 ? undefined : toolCalls.slice();
  const message: ChatMessage =
    calls === undefined
      ? { role: 'assistant', content, name: agent.id }
      : { role: 'assistant', content, name: agent.id, toolCalls: calls };
  if (group === undefined) {
    run.lastAgentId = agent.id;
    run.lastContent = content;
  }
  const emit = run.emit;
  if (emit !== undefined) {
    const event: CrewEvent = { type: 'agent_response', agentId: agent.id, content };
    const transfers = laneTransfers(lane);
    if (calls !== undefined && transfers !== undefined) {
      // Transfer calls are handoffs, not tools: they are listed apart (a UI shows a handoff for them).
      const tools = calls.filter((c) => !transfers.has(c.name));
      if (tools.length > 0) event.toolCalls = tools;
      if (tools.length < calls.length) event.transferCalls = calls.filter((c) => transfers.has(c.name));
    } else if (calls !== undefined) event.toolCalls = calls;
    if (group !== undefined) event.group = group;
    // The request rides along non-enumerably: listeners that record it (a cassette recorder) read
    // it, serialized events stay as they were.
    Object.defineProperty(event, 'request', { value: request });
    emit(event);
  }
  return message;
}

/** The request of a turn's next model call: the trimmed history, the agent's id and tools. */
function modelRequest(run: Run, lane: Lane): ChatRequest {
  const { agent, abortSignal } = lane;
  const request: ChatRequest = {
    messages: requestMessages(lane.history, run.crew.settings.maxHistoryMessages, agent.system),
    agentId: agent.id,
    abortSignal,
  };
  const own = agentTools(run, agent);
  const tools = lane.group === undefined ? own.requestTools : own.toolSpecs;
  if (tools !== undefined) request.tools = tools;
  return request;
}

/**
 * One model call of a turn (counted against `max_rounds`) with the trimmed history, returning a
 * valid reply. Not an `async` function: a main-loop `generate` call is raced and checked in one
 * promise ({@link AbortRace.raceThen}), the cheapest a handoff's model call can be.
 *
 * @throws AbortedError `ABORTED`; the turn's failure (`CREW_AGENT_FAILED` / `CREW_MEMBER_FAILED`)
 * when the model threw or its reply is not a `ChatResponse` (as rejections).
 */
function askModel(run: Run, lane: Lane, request: ChatRequest): Promise<ChatResponse> {
  const { agent, abortSignal } = lane;
  run.modelCalls++;
  const checked = (response: unknown): ChatResponse => {
    const problem = responseProblem(response);
    if (problem !== undefined)
      throw turnFailure(run, lane, 'failed', `Agent ${JSON.stringify(agent.id)} failed: its model returned ${problem}`);
    return response as ChatResponse;
  };
  const failed = (error: unknown): never => {
    if (abortSignal.aborted) throw abortedError(abortSignal);
    const why = errorText(error);
    throw turnFailure(run, lane, 'failed', `Agent ${JSON.stringify(agent.id)} failed: its model threw: ${why}`, error);
  };
  try {
    // The main loop's generate calls share the run's one abort listener (and are checked in the
    // race's own step); a group member has its own signal, a streamed call its own reader.
    if (lane.path === undefined && abortSignal === run.abortSignal)
      return run.race.raceThen(agent.model.generate(request), checked, failed);
    return callModel(run, lane, request).then(checked, failed);
  } catch (error) {
    // The model threw at once: the turn's failure, as a rejection (`failed` always throws).
    return new Promise<ChatResponse>(() => failed(error));
  }
}

/**
 * One model call outside the main loop's plain `generate`: a group member's `generate` (raced
 * against its own signal), or — when the run streams (`lane.path` set) — a stream whose visible
 * text is emitted as `text_delta`s.
 */
function callModel(run: Run, lane: Lane, request: ChatRequest): Promise<unknown> {
  const { agent, group, path } = lane;
  if (path === undefined) return untilAborted(agent.model.generate(request), lane.abortSignal);
  const emit = run.emit as (event: CrewEvent) => void;
  const agentId = agent.id;
  const hider = run.crew.settings.hideSignals ? new SignalHider(run.crew.markers) : undefined;
  return streamedReply(
    agent.model,
    request,
    hider,
    group === undefined
      ? (delta) => {
          emit({ type: 'text_delta', agentId, delta, path });
        }
      : (delta) => {
          emit({ type: 'text_delta', agentId, delta, path, group });
        },
    // The main loop's calls share the run's one abort listener; a group member has its own signal.
    lane.abortSignal === run.abortSignal ? run.race : undefined,
  );
}

function responseProblem(response: unknown): string | undefined {
  if (typeof response !== 'object' || response === null)
    return `${describeValue(response)}: expected a ChatResponse { content, toolCalls? }`;
  const r = response as Readonly<Record<string, unknown>>;
  if (typeof r.content !== 'string') return `content ${describeValue(r.content)}: expected a string`;
  if (r.toolCalls !== undefined) return toolCallsProblem(r.toolCalls);
  return undefined;
}

/**
 * A turn's failure, owned by one class per place: in the main loop it is the run's
 * (`CrewRunError` with the state so far: `CREW_AGENT_FAILED`, `CREW_TOOL_LOOP`); in a parallel
 * member it is the member's (`CrewAgentError` naming the group: `CREW_MEMBER_FAILED`,
 * `CREW_MEMBER_TOOL_LOOP`), which the group reports and outlives.
 */
function turnFailure(
  run: Run,
  lane: Lane,
  kind: 'failed' | 'tool_loop',
  message: string,
  cause?: unknown,
): CrewRunError | CrewAgentError {
  const { agent, group } = lane;
  if (group === undefined) {
    const code = kind === 'failed' ? 'CREW_AGENT_FAILED' : 'CREW_TOOL_LOOP';
    return new CrewRunError({ code, message, state: stateOf(run), agentId: agent.id, cause });
  }
  const code = kind === 'failed' ? 'CREW_MEMBER_FAILED' : 'CREW_MEMBER_TOOL_LOOP';
  return new CrewAgentError({ code, message, agentId: agent.id, group, cause });
}
