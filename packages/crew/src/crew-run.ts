import {
  AbortedError,
  describeValue,
  isSignalyardError,
  type ChatMessage,
  type ChatRequest,
  type ChatResponse,
  type SignalyardError,
  type ToolCall,
} from '@signalyard/core';
import { abortedError, errorText, isAbortSignal, linkAbortSignals, untilAborted } from '@signalyard/core/internal';
import type { CompiledAgent, CompiledCrew, CompiledGroup } from './compiled-crew.js';
import { SignalHider, visibleText } from './signal-hider.js';
import { streamedReply } from './streamed-reply.js';
import type { CrewEndReason, CrewEvent, CrewResponse, CrewRunOptions, ParallelMemberStatus } from './crew-events.js';
import type { CrewState } from './crew-state.js';
import {
  aggregateResults,
  messageProblem,
  requestMessages,
  toolCallsProblem,
  toolErrorContent,
  toolMessage,
  toolResultContent,
} from './crew-history.js';
import { CrewAgentError } from './errors/crew-agent-error.js';
import { CrewRunError, type CrewRunErrorCode } from './errors/crew-run-error.js';
import { CrewToolError } from './errors/crew-tool-error.js';

/** Where events go; `undefined` when nobody listens (`execute`), so no event is even built. @internal */
export type Emit = ((event: CrewEvent) => void) | undefined;

/** How a run ended: the final event's payload. @internal */
export type RunResult =
  { readonly ok: true; readonly response: CrewResponse } | { readonly ok: false; readonly error: CrewRunError };

/** A turn that could not make the model call it needed: `max_rounds` is reached. */
const OUT_OF_ROUNDS: unique symbol = Symbol('out of rounds');

const RUN_KEYS: ReadonlySet<string> = new Set(['state', 'resumeAgentId', 'abortSignal', 'textDeltas']);

/** A run's agent path (see the `text_delta` event); `undefined` when the run emits no text deltas. */
type Path = readonly string[] | undefined;

/** The per-run state (never stored on the executor: one of these per run). */
interface Run {
  readonly crew: CompiledCrew;
  readonly emit: Emit;
  /**
   * The main loop's agent path (see the `text_delta` event), extended on every handoff;
   * `undefined` when models are not streamed (`execute`, or `textDeltas: false`).
   */
  path: Path;
  readonly history: ChatMessage[];
  readonly abortSignal: AbortSignal;
  modelCalls: number;
  handoffs: number;
  /** The agent whose reply `lastContent` is (after a group: the agent that started it). */
  lastAgentId: string;
  lastContent: string;
}

/**
 * One run of a crew, start to end. Never rejects: every outcome is the returned result, and
 * (when `emit` is set) the last event emitted is exactly one `end` or `error`.
 * @internal
 */
export async function runCrew(
  crew: CompiledCrew,
  input: unknown,
  opts: unknown,
  emit: Emit,
  consumerSignal?: AbortSignal,
): Promise<RunResult> {
  const prepared = prepare(crew, input, opts);
  if (prepared instanceof CrewRunError) return failed(emit, prepared);
  const { history, start, userSignal, textDeltas } = prepared;

  const controller = new AbortController();
  const linked = linkAbortSignals(userSignal, consumerSignal);
  const onAbort = (): void => {
    controller.abort(linked?.reason);
  };
  if (linked?.aborted === true) onAbort();
  else linked?.addEventListener('abort', onAbort, { once: true });

  const run: Run = {
    crew,
    emit,
    path: emit !== undefined && textDeltas ? Object.freeze([start.id]) : undefined,
    history,
    abortSignal: controller.signal,
    modelCalls: 0,
    handoffs: 0,
    lastAgentId: start.id,
    lastContent: '',
  };
  history.push({ role: 'user', content: input as string });
  let agent = start;
  try {
    for (;;) {
      if (run.abortSignal.aborted) throw abortedError(run.abortSignal);
      const reply = await runTurn(run, agent, history, run.abortSignal, undefined, run.path);
      if (reply === OUT_OF_ROUNDS) return finish(run, 'max_rounds', run.lastAgentId, undefined);

      // 3. Termination, before routing.
      const t = agent.terminationMatcher?.first(reply);
      if (t !== undefined) return finish(run, 'terminated_by_signal', agent.id, agent.terminations[t]);

      // 4. Routing, in config order.
      const r = agent.routeMatcher?.first(reply);
      if (r !== undefined) {
        const route = agent.routes[r] as CompiledAgent['routes'][number];
        if (route.agent !== undefined) {
          const next = handoff(run, agent, route.agent, 'signal', route.signal);
          if (next === undefined) return finish(run, 'max_handoffs', agent.id, undefined);
          agent = next;
          continue;
        }
        if (route.group !== undefined) {
          const group = route.group;
          // 7. A parallel group, if every member can make its first call.
          if (crew.settings.maxRounds - run.modelCalls < group.members.length)
            return finish(run, 'max_rounds', agent.id, undefined);
          const outcome = await runGroup(run, agent, group);
          if (outcome === OUT_OF_ROUNDS) return finish(run, 'max_rounds', agent.id, undefined);
          const target = group.next ?? agent.fallback;
          if (target === undefined) return finish(run, 'no_next_agent', agent.id, undefined);
          const next = handoff(run, agent, target, group.next === undefined ? 'fallback' : 'parallel', undefined);
          if (next === undefined) return finish(run, 'max_handoffs', agent.id, undefined);
          agent = next;
          continue;
        }
        // Only reachable with a config that bypassed validation.
        emit?.({
          type: 'warning',
          agentId: agent.id,
          message: `Signal ${JSON.stringify(route.signal)} of agent ${JSON.stringify(agent.id)} targets ${JSON.stringify(route.target)}, which is neither an agent nor a parallel group: ignored`,
        });
      }

      // 5–6. Behaviours.
      if (agent.waitForSignal) return finish(run, 'paused', agent.id, undefined);
      if (agent.isTerminal) return finish(run, 'terminal_agent', agent.id, undefined);

      // 8. Fallback.
      if (agent.fallback === undefined) return finish(run, 'no_next_agent', agent.id, undefined);
      const next = handoff(run, agent, agent.fallback, 'fallback', undefined);
      if (next === undefined) return finish(run, 'max_handoffs', agent.id, undefined);
      agent = next;
    }
  } catch (error) {
    return failed(emit, runError(error, agent.id, run));
  } finally {
    userSignal?.removeEventListener('abort', onAbort);
    consumerSignal?.removeEventListener('abort', onAbort);
  }
}

/** `path` with `id` appended (a new frozen list: events already emitted keep theirs). */
function extend(path: Path, id: string): Path {
  return path === undefined ? undefined : Object.freeze([...path, id]);
}

/**
 * Step 9: a handoff that would bring the count to `max_handoffs` is not made (`undefined`);
 * otherwise the count goes up, a `handoff` event is emitted, and `to` is returned.
 */
function handoff(
  run: Run,
  from: CompiledAgent,
  to: CompiledAgent,
  via: 'signal' | 'parallel' | 'fallback',
  signal: string | undefined,
): CompiledAgent | undefined {
  if (run.handoffs + 1 >= run.crew.settings.maxHandoffs) return undefined;
  run.handoffs++;
  run.path = extend(run.path, to.id);
  run.emit?.(
    signal === undefined
      ? { type: 'handoff', from: from.id, to: to.id, via, handoffs: run.handoffs }
      : { type: 'handoff', from: from.id, to: to.id, via, signal, handoffs: run.handoffs },
  );
  return to;
}

/** Ends the run successfully: `terminate` (or `pause`), then `end`. */
function finish(run: Run, reason: CrewEndReason, agentId: string, signal: string | undefined): RunResult {
  const paused = reason === 'paused';
  const state: CrewState = paused ? { history: run.history, pausedAgentId: agentId } : { history: run.history };
  const content = run.lastContent;
  const response: CrewResponse = {
    agentId,
    content,
    visibleContent: run.crew.settings.hideSignals ? visibleText(content, run.crew.markers) : content,
    reason,
    isTerminal: reason === 'terminated_by_signal' || reason === 'terminal_agent',
    ...(paused ? { pausedAgentId: agentId } : {}),
    handoffs: run.handoffs,
    state,
  };
  const emit = run.emit;
  if (emit !== undefined) {
    if (paused) emit({ type: 'pause', agentId });
    else
      emit(
        signal === undefined ? { type: 'terminate', agentId, reason } : { type: 'terminate', agentId, reason, signal },
      );
    emit({ type: 'end', response });
  }
  return { ok: true, response };
}

function failed(emit: Emit, error: CrewRunError): RunResult {
  emit?.({ type: 'error', error, state: error.state });
  return { ok: false, error };
}

const RUN_CODES: ReadonlySet<string> = new Set<CrewRunErrorCode>(['CREW_AGENT_FAILED', 'ABORTED', 'CREW_TOOL_LOOP']);

/** Any error thrown inside the loop, as the run's `CrewRunError` carrying the state so far. */
function runError(error: unknown, agentId: string, run: Run): CrewRunError {
  const state: CrewState = { history: run.history };
  if (CrewRunError.isInstance(error)) return error;
  if (isSignalyardError(error) && RUN_CODES.has(error.code)) {
    const code = error.code as CrewRunErrorCode;
    const message =
      code === 'ABORTED' ? `Crew run aborted while agent ${JSON.stringify(agentId)} was running` : error.message;
    return new CrewRunError({ code, message, state, agentId, cause: code === 'ABORTED' ? error : error.cause });
  }
  /* v8 ignore next 2 -- a defect of the executor itself, kept as a run error rather than a crash */
  const why = errorText(error);
  return new CrewRunError({
    code: 'CREW_AGENT_FAILED',
    message: `Agent ${JSON.stringify(agentId)} failed: ${why}`,
    state,
    agentId,
    cause: error,
  });
}

// ------------------------------------------------------------------------------------- a turn

/**
 * One agent turn (steps 1–2): model calls and tool rounds until a reply without tool calls,
 * whose content is returned — or `OUT_OF_ROUNDS` when `max_rounds` forbids the next call.
 * Appends every reply and tool result to `history`.
 *
 * @throws AbortedError `ABORTED`; CrewAgentError `CREW_AGENT_FAILED`, `CREW_TOOL_LOOP`.
 */
async function runTurn(
  run: Run,
  agent: CompiledAgent,
  history: ChatMessage[],
  abortSignal: AbortSignal,
  group: string | undefined,
  path: Path,
): Promise<string | typeof OUT_OF_ROUNDS> {
  const settings = run.crew.settings;
  const emit = run.emit;
  let toolRounds = 0;
  for (;;) {
    if (run.modelCalls >= settings.maxRounds) return OUT_OF_ROUNDS;
    if (toolRounds === 0)
      emit?.(
        group === undefined
          ? { type: 'agent_start', agentId: agent.id }
          : { type: 'agent_start', agentId: agent.id, group },
      );
    run.modelCalls++;
    const request: ChatRequest = {
      messages: requestMessages(history, settings.maxHistoryMessages, agent.system),
      agentId: agent.id,
      abortSignal,
    };
    if (agent.toolSpecs !== undefined) request.tools = agent.toolSpecs;
    let response: unknown;
    try {
      response = await callModel(run, agent, request, group, path);
    } catch (error) {
      if (abortSignal.aborted) throw abortedError(abortSignal);
      const why = errorText(error);
      throw new CrewAgentError({
        code: 'CREW_AGENT_FAILED',
        message: `Agent ${JSON.stringify(agent.id)} failed: its model threw: ${why}`,
        ...where(agent, group),
        cause: error,
      });
    }
    const problem = responseProblem(response);
    if (problem !== undefined) {
      throw new CrewAgentError({
        code: 'CREW_AGENT_FAILED',
        message: `Agent ${JSON.stringify(agent.id)} failed: its model returned ${problem}`,
        ...where(agent, group),
      });
    }
    const { content, toolCalls } = response as ChatResponse;
    const calls = toolCalls === undefined || toolCalls.length === 0 ? undefined : toolCalls.slice();
    history.push(
      calls === undefined
        ? { role: 'assistant', content, name: agent.id }
        : { role: 'assistant', content, name: agent.id, toolCalls: calls },
    );
    if (group === undefined) {
      run.lastAgentId = agent.id;
      run.lastContent = content;
    }
    if (emit !== undefined) {
      const event: CrewEvent = { type: 'agent_response', agentId: agent.id, content };
      if (calls !== undefined) event.toolCalls = calls;
      if (group !== undefined) event.group = group;
      emit(event);
    }
    if (calls === undefined) return content;
    if (toolRounds >= settings.maxToolRounds) {
      const why = `agent ${JSON.stringify(agent.id)} reached max_tool_rounds (${settings.maxToolRounds})`;
      closeCalls(history, calls, 0, `not run: ${why}`);
      throw new CrewAgentError({
        code: 'CREW_TOOL_LOOP',
        message: `Agent ${JSON.stringify(agent.id)} asked for tool round ${toolRounds + 1}, but max_tool_rounds is ${settings.maxToolRounds}`,
        ...where(agent, group),
      });
    }
    toolRounds++;
    await runTools(run, agent, calls, history, abortSignal, group);
  }
}

/**
 * One model call: `generate` (raced against the abort signal), or — when the run streams
 * (`path` set) — a stream whose visible text is emitted as `text_delta`s.
 */
function callModel(
  run: Run,
  agent: CompiledAgent,
  request: ChatRequest,
  group: string | undefined,
  path: Path,
): Promise<unknown> {
  if (path === undefined) return untilAborted(agent.model.generate(request), request.abortSignal);
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
  );
}

/** Runs one round of tool calls in order, answering each with a `tool` message (errors included). */
async function runTools(
  run: Run,
  agent: CompiledAgent,
  calls: readonly ToolCall[],
  history: ChatMessage[],
  abortSignal: AbortSignal,
  group: string | undefined,
): Promise<void> {
  const emit = run.emit;
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i] as ToolCall;
    if (abortSignal.aborted) {
      closeCalls(history, calls, i, 'not run: the run was aborted');
      throw abortedError(abortSignal);
    }
    emit?.(
      group === undefined
        ? { type: 'tool_start', agentId: agent.id, call }
        : { type: 'tool_start', agentId: agent.id, call, group },
    );
    const tool = agent.tools.get(call.name);
    let result: unknown;
    let isError = false;
    if (tool === undefined) {
      const names = [...agent.tools.keys()].map((n) => JSON.stringify(n)).join(', ');
      result = new CrewToolError({
        code: 'CREW_UNKNOWN_TOOL',
        message: `Unknown tool ${JSON.stringify(call.name)}: agent ${JSON.stringify(agent.id)} has ${names === '' ? 'no tools' : `the tools ${names}`}`,
        agentId: agent.id,
        toolName: call.name,
      });
      isError = true;
    } else {
      try {
        result = await untilAborted(
          tool.execute(call.arguments, { abortSignal, toolCallId: call.id, agentId: agent.id }),
          abortSignal,
        );
      } catch (error) {
        if (isAborted(abortSignal)) {
          closeCalls(history, calls, i, 'aborted: the run was aborted');
          throw abortedError(abortSignal);
        }
        result = error;
        isError = true;
      }
    }
    let content = isError ? undefined : toolResultContent(result);
    if (typeof content === 'object') {
      // Unserializable: answered as a failed call, so the model sees why and the run goes on.
      result = new CrewToolError({
        code: 'CREW_TOOL_RESULT_INVALID',
        message: `Tool ${JSON.stringify(call.name)} of agent ${JSON.stringify(agent.id)} returned a result that cannot be sent to the model: ${content.problem}`,
        agentId: agent.id,
        toolName: call.name,
      });
      isError = true;
      content = undefined;
    }
    history.push(toolMessage(call, content ?? toolErrorContent(result)));
    emit?.(
      group === undefined
        ? { type: 'tool_result', agentId: agent.id, call, result, isError }
        : { type: 'tool_result', agentId: agent.id, call, result, isError, group },
    );
  }
}

/** Answers `calls[from…]` with error `tool` messages, so the history never holds an unanswered call. */
function closeCalls(history: ChatMessage[], calls: readonly ToolCall[], from: number, why: string): void {
  for (let i = from; i < calls.length; i++) history.push(toolMessage(calls[i] as ToolCall, `Error: ${why}`));
}

function responseProblem(response: unknown): string | undefined {
  if (typeof response !== 'object' || response === null)
    return `${describeValue(response)}: expected a ChatResponse { content, toolCalls? }`;
  const r = response as Readonly<Record<string, unknown>>;
  if (typeof r.content !== 'string') return `content ${describeValue(r.content)}: expected a string`;
  if (r.toolCalls !== undefined) return toolCallsProblem(r.toolCalls);
  return undefined;
}

// ----------------------------------------------------------------------------- parallel groups

interface MemberOutcome {
  status: ParallelMemberStatus | 'aborted';
  content?: string;
  error?: SignalyardError;
  outOfRounds?: boolean;
}

/**
 * Step 7: runs the group's members concurrently, each on its own copy of the history with its
 * own AbortSignal, under the group's deadline; appends the aggregated results as one `user`
 * message. Returns `OUT_OF_ROUNDS` when no member succeeded because `max_rounds` stopped them.
 *
 * @throws AbortedError `ABORTED` when the run is aborted; CrewRunError `CREW_PARALLEL_FAILED`
 * when no member succeeded.
 */
async function runGroup(
  run: Run,
  from: CompiledAgent,
  group: CompiledGroup,
): Promise<undefined | typeof OUT_OF_ROUNDS> {
  run.emit?.({ type: 'parallel_start', group: group.name, agents: group.memberIds });
  const outcomes = await runMembers(run, group, run.path);
  if (run.abortSignal.aborted) throw abortedError(run.abortSignal);
  return groupResult(run, from, group, outcomes);
}

/**
 * Runs every member of `group` at once under the group's deadline, each on its own copy of the
 * history with its own AbortSignal (aborted by the run, the deadline, or — without
 * `wait_for_all` — the first member to succeed). Resolves with each member's outcome.
 */
async function runMembers(run: Run, group: CompiledGroup, path: Path): Promise<MemberOutcome[]> {
  const emit = run.emit;
  const runSignal = run.abortSignal;
  const members = group.members;
  const n = members.length;
  const snapshot = run.history.slice();
  const controllers = members.map(() => new AbortController());
  const outcomes: (MemberOutcome | undefined)[] = new Array<MemberOutcome | undefined>(n);
  const cancelled = new Uint8Array(n);
  const flags = { timedOut: false };
  const abortUnfinished = (reason: unknown): void => {
    for (let i = 0; i < n; i++) if (outcomes[i] === undefined) (controllers[i] as AbortController).abort(reason);
  };
  const onRunAbort = (): void => {
    abortUnfinished(runSignal.reason);
  };
  runSignal.addEventListener('abort', onRunAbort, { once: true });
  const timer = setTimeout(() => {
    flags.timedOut = true;
    abortUnfinished(groupTimeout(group));
  }, group.timeoutMs);

  const settle = (i: number, outcome: MemberOutcome): void => {
    outcomes[i] = outcome;
    const agentId = (members[i] as CompiledAgent).id;
    if (outcome.status !== 'aborted' && emit !== undefined) emit(memberEnd(group, agentId, outcome));
    if (outcome.status === 'succeeded' && !group.waitForAll) {
      for (let j = 0; j < n; j++) {
        if (outcomes[j] === undefined && cancelled[j] === 0) {
          cancelled[j] = 1;
          (controllers[j] as AbortController).abort(
            new AbortedError({
              message: `Cancelled: ${JSON.stringify(agentId)} already completed parallel group ${JSON.stringify(group.name)}`,
            }),
          );
        }
      }
    }
  };

  try {
    await Promise.all(
      members.map((agent, i) =>
        runTurn(
          run,
          agent,
          snapshot.slice(),
          (controllers[i] as AbortController).signal,
          group.name,
          extend(path, agent.id),
        ).then(
          (reply) => {
            if (cancelled[i] === 1) {
              // Finished, but after another member had already completed the group (wait_for_all: false).
              settle(i, { status: 'cancelled' });
              return;
            }
            settle(i, replyOutcome(run, agent, group, reply));
          },
          (error: unknown) => {
            settle(
              i,
              memberFailure(
                agent,
                group,
                error,
                runSignal.aborted,
                cancelled[i] === 1,
                flags.timedOut && (controllers[i] as AbortController).signal.aborted,
              ),
            );
          },
        ),
      ),
    );
  } finally {
    clearTimeout(timer);
    runSignal.removeEventListener('abort', onRunAbort);
  }
  return outcomes as MemberOutcome[];
}

/** The `parallel_member_end` event of a member that ended (not by a run abort). */
function memberEnd(group: CompiledGroup, agentId: string, outcome: MemberOutcome): CrewEvent {
  const status = outcome.status as ParallelMemberStatus;
  const event: CrewEvent = { type: 'parallel_member_end', group: group.name, agentId, status };
  if (outcome.content !== undefined) event.content = outcome.content;
  if (outcome.error !== undefined) event.error = outcome.error;
  return event;
}

/** The abort reason of a group's members when its deadline passes. */
function groupTimeout(group: CompiledGroup): CrewAgentError {
  return new CrewAgentError({
    code: 'CREW_PARALLEL_TIMEOUT',
    message: `Parallel group ${JSON.stringify(group.name)} reached its deadline of ${group.timeoutSeconds} s`,
    group: group.name,
  });
}

/** How a member whose turn returned ended: its reply, or out of rounds. */
function replyOutcome(
  run: Run,
  agent: CompiledAgent,
  group: CompiledGroup,
  reply: string | typeof OUT_OF_ROUNDS,
): MemberOutcome {
  if (reply !== OUT_OF_ROUNDS) return { status: 'succeeded', content: reply };
  return {
    status: 'failed',
    outOfRounds: true,
    error: new CrewAgentError({
      code: 'CREW_MAX_ROUNDS',
      message: `Agent ${JSON.stringify(agent.id)} of parallel group ${JSON.stringify(group.name)} needed another model call, but max_rounds (${run.crew.settings.maxRounds}) is reached`,
      agentId: agent.id,
      group: group.name,
    }),
  };
}

/** Step 7's end: the aggregated results as one user message, or why the group failed. */
function groupResult(
  run: Run,
  from: CompiledAgent,
  group: CompiledGroup,
  outcomes: readonly MemberOutcome[],
): undefined | typeof OUT_OF_ROUNDS {
  const emit = run.emit;
  const members = group.members;
  const n = members.length;
  const succeeded: { agentId: string; content: string }[] = [];
  let outOfRounds = false;
  for (let i = 0; i < n; i++) {
    const o = outcomes[i] as MemberOutcome;
    if (o.status === 'succeeded')
      succeeded.push({ agentId: (members[i] as CompiledAgent).id, content: o.content as string });
    if (o.outOfRounds === true) outOfRounds = true;
  }
  emit?.({ type: 'parallel_end', group: group.name, succeeded: succeeded.map((s) => s.agentId) });
  if (succeeded.length === 0) {
    if (outOfRounds) return OUT_OF_ROUNDS;
    const errors = outcomes.map((o) => o.error ?? new AbortedError());
    const summary = outcomes.map(
      (o, i) =>
        `${(members[i] as CompiledAgent).id} ${o.status === 'timed_out' ? 'timed out' : (o.error?.message ?? o.status)}`,
    );
    throw new CrewRunError({
      code: 'CREW_PARALLEL_FAILED',
      message: `No member of parallel group ${JSON.stringify(group.name)} succeeded: ${summary.join('; ')}`,
      state: { history: run.history },
      agentId: from.id,
      group: group.name,
      cause: new AggregateError(errors, `every member of parallel group ${JSON.stringify(group.name)} failed`),
    });
  }
  const content = aggregateResults(succeeded);
  run.history.push({ role: 'user', content });
  run.lastAgentId = from.id;
  run.lastContent = content;
  return undefined;
}

/** How a member whose turn threw ended. */
function memberFailure(
  agent: CompiledAgent,
  group: CompiledGroup,
  error: unknown,
  runAborted: boolean,
  cancelled: boolean,
  timedOut: boolean,
): MemberOutcome {
  if (runAborted) return { status: 'aborted' };
  if (cancelled) return { status: 'cancelled' };
  if (timedOut) {
    return {
      status: 'timed_out',
      error: new CrewAgentError({
        code: 'CREW_PARALLEL_TIMEOUT',
        message: `Agent ${JSON.stringify(agent.id)} of parallel group ${JSON.stringify(group.name)} did not finish within ${group.timeoutSeconds} s`,
        agentId: agent.id,
        group: group.name,
      }),
    };
  }
  return { status: 'failed', error: error as SignalyardError }; // runTurn throws only CrewAgentErrors and AbortedErrors
}

// ------------------------------------------------------------------------------------ helpers

/** The agent (and group) a {@link CrewAgentError} of a turn names. */
function where(agent: CompiledAgent, group: string | undefined): { agentId: string; group?: string } {
  return group === undefined ? { agentId: agent.id } : { agentId: agent.id, group };
}

/** `signal.aborted`, read through a call: it changes across awaits, which narrowing does not see. */
function isAborted(signal: AbortSignal): boolean {
  return signal.aborted;
}

// ------------------------------------------------------------------------------ run arguments

interface Prepared {
  readonly history: ChatMessage[];
  readonly start: CompiledAgent;
  readonly userSignal: AbortSignal | undefined;
  readonly textDeltas: boolean;
}

/** Validates the input and options; the start agent is `resumeAgentId`, else `state.pausedAgentId`, else the entry point. */
function prepare(crew: CompiledCrew, input: unknown, opts: unknown): Prepared | CrewRunError {
  const invalid = (message: string, state: CrewState = { history: [] }): CrewRunError =>
    new CrewRunError({ code: 'CREW_ARGUMENT_INVALID', message, state });
  if (opts !== undefined && (typeof opts !== 'object' || opts === null || Array.isArray(opts))) {
    return invalid(
      `Invalid run options ${describeValue(opts)}: expected { state?, resumeAgentId?, abortSignal?, textDeltas? }`,
    );
  }
  const o = (opts ?? {}) as Readonly<Record<string, unknown>> & CrewRunOptions;
  for (const key of Object.keys(o)) {
    if (!RUN_KEYS.has(key))
      return invalid(
        `Unknown run option ${JSON.stringify(key)}: expected state, resumeAgentId, abortSignal or textDeltas`,
      );
  }
  const given: unknown = o.state;
  let state: CrewState = { history: [] };
  if (given !== undefined) {
    if (typeof given !== 'object' || given === null)
      return invalid(`Invalid state ${describeValue(given)}: expected { history: ChatMessage[], pausedAgentId? }`);
    const s = given as Readonly<Record<string, unknown>>;
    if (!Array.isArray(s.history))
      return invalid(`Invalid state.history ${describeValue(s.history)}: expected a list of ChatMessages`);
    const history = s.history as unknown[];
    for (let i = 0; i < history.length; i++) {
      const problem = messageProblem(history[i]);
      if (problem !== undefined) return invalid(`Invalid state.history[${i}]: ${problem}`);
    }
    if (s.pausedAgentId !== undefined && typeof s.pausedAgentId !== 'string') {
      return invalid(`Invalid state.pausedAgentId ${describeValue(s.pausedAgentId)}: expected an agent id`);
    }
    state =
      s.pausedAgentId === undefined
        ? { history: (history as ChatMessage[]).slice() }
        : { history: (history as ChatMessage[]).slice(), pausedAgentId: s.pausedAgentId };
  }
  if (typeof input !== 'string')
    return invalid(`Invalid input ${describeValue(input)}: expected the user's message as a string`, state);
  const userSignal: unknown = o.abortSignal;
  if (userSignal !== undefined && !isAbortSignal(userSignal))
    return invalid(`Invalid abortSignal ${describeValue(userSignal)}: expected an AbortSignal`, state);
  const textDeltas: unknown = o.textDeltas;
  if (textDeltas !== undefined && typeof textDeltas !== 'boolean')
    return invalid(`Invalid textDeltas ${describeValue(textDeltas)}: expected true or false`, state);
  const resume: unknown = o.resumeAgentId;
  if (resume !== undefined && typeof resume !== 'string')
    return invalid(`Invalid resumeAgentId ${describeValue(resume)}: expected an agent id`, state);
  const startId = resume ?? state.pausedAgentId;
  let start = crew.entry;
  if (startId !== undefined) {
    const found = crew.agents.get(startId);
    if (found === undefined) {
      const where = resume === undefined ? 'state.pausedAgentId' : 'resumeAgentId';
      return new CrewRunError({
        code: 'CREW_UNKNOWN_AGENT',
        message: `Unknown agent ${JSON.stringify(startId)} in ${where}: expected one of ${crew.agentIds.map((id) => JSON.stringify(id)).join(', ')}`,
        state,
        agentId: startId,
      });
    }
    start = found;
  }
  return { history: state.history, start, userSignal, textDeltas: textDeltas ?? true };
}
