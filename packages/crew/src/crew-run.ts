import {
  AbortedError,
  describeValue,
  isSignalyardError,
  type ChatMessage,
  type ChatRequest,
  type ApprovalDecision,
  type ApprovalVerdict,
  type ChatResponse,
  type SignalyardError,
  type ToolCall,
} from '@signalyard/core';
import { AbortRace, abortedError, errorText, isAbortSignal, untilAborted } from '@signalyard/core/internal';
import type { CompiledAgent, CompiledCrew, CompiledGroup } from './compiled-crew.js';
import { SignalHider, visibleText } from './signal-hider.js';
import { streamedReply } from './streamed-reply.js';
import type { CrewEndReason, CrewEvent, CrewResponse, CrewRunOptions, ParallelMemberStatus } from './crew-events.js';
import type { CrewState } from './crew-state.js';
import { aggregateResults, messageProblem, requestMessages, toolCallsProblem, toolMessage } from './crew-history.js';
import { CrewAgentError } from './errors/crew-agent-error.js';
import { CrewRunError, type CrewRunErrorCode } from './errors/crew-run-error.js';
import { applyDecisions, holdBatch, pendingApprovals, resumeBatch } from './approval-batch.js';
import { readApprovalState, readDecisions, unknownApprovalId } from './approval-state.js';
import { decideCalls } from './approval-verdicts.js';
import {
  AWAITING,
  OUT_OF_ROUNDS,
  approvalStateOf,
  extend,
  stateOf,
  where,
  type ApprovalBook,
  type Emit,
  type Path,
  type Run,
  type RunResult,
} from './run-context.js';
import { deniedAnswer, emitAnswer, runToolCall } from './tool-call.js';

const RUN_KEYS: ReadonlySet<string> = new Set([
  'state',
  'resumeAgentId',
  'abortSignal',
  'textDeltas',
  'approvals',
  'commit',
]);

/**
 * One run of a crew, start to end. Never rejects: every outcome is the returned result, and
 * (when `emit` is set) the last event emitted is exactly one `end` or `error`. `controller`:
 * the run's own, aborted when the user's signal fires (a stream passes the one its reader's early
 * stop aborts).
 * @internal
 */
export async function runCrew(
  crew: CompiledCrew,
  input: unknown,
  opts: unknown,
  emit: Emit,
  controller = new AbortController(),
): Promise<RunResult> {
  const prepared = prepare(crew, input, opts);
  if (prepared instanceof CrewRunError) return failed(emit, prepared);
  const { history, start, userSignal, textDeltas, book, decisions, commit } = prepared;

  const onAbort = (): void => {
    controller.abort(userSignal?.reason);
  };
  if (userSignal?.aborted === true) onAbort();
  else userSignal?.addEventListener('abort', onAbort, { once: true });

  // A run that resumes a paused batch continues the paused run: its counts and agent path.
  const paused = book.batch;
  const chain = paused === undefined ? [start.id] : paused.run.path.slice();
  const run: Run = {
    crew,
    emit,
    path: emit !== undefined && textDeltas ? Object.freeze(chain.slice()) : undefined,
    chain,
    history,
    abortSignal: controller.signal,
    race: new AbortRace(controller.signal),
    modelCalls: paused?.run.modelCalls ?? 0,
    handoffs: paused?.run.handoffs ?? 0,
    lastAgentId: start.id,
    lastContent: paused?.message.content ?? '',
    agentId: start.id,
    approvals: book,
    requested: undefined,
    commit,
  };
  try {
    let toolRounds = 0;
    if (paused === undefined) {
      if (decisions.length > 0) applyDecisions(run, start.id, decisions, undefined);
      history.push({ role: 'user', content: input as string });
    } else {
      // `input` is ignored while approvals are pending: the decisions continue the batch.
      if ((await resumeBatch(run, start, decisions)) === AWAITING)
        return finish(run, 'awaiting_approval', start.id, undefined);
      toolRounds = paused.run.toolRounds;
    }
    return await mainLoop(run, start, toolRounds);
  } catch (error) {
    return failed(emit, runError(error, run.agentId, run));
  } finally {
    run.race.dispose();
    userSignal?.removeEventListener('abort', onAbort);
  }
}

/**
 * The loop of agent turns (steps 1–9) from `agent`, whose turn has made `toolRounds` tool rounds
 * already (a turn resumed after approval), until the run ends.
 */
async function mainLoop(run: Run, start: CompiledAgent, toolRounds: number): Promise<RunResult> {
  const crew = run.crew;
  let agent = start;
  let rounds = toolRounds;
  for (;;) {
    run.agentId = agent.id;
    if (run.abortSignal.aborted) throw abortedError(run.abortSignal);
    const reply = await runTurn(run, agent, run.history, run.abortSignal, undefined, run.path, rounds);
    rounds = 0;
    if (reply === OUT_OF_ROUNDS) return finish(run, 'max_rounds', run.lastAgentId, undefined);
    if (reply === AWAITING) return finish(run, 'awaiting_approval', agent.id, undefined);

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
      run.emit?.({
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
  run.chain.push(to.id);
  run.emit?.(
    signal === undefined
      ? { type: 'handoff', from: from.id, to: to.id, via, handoffs: run.handoffs }
      : { type: 'handoff', from: from.id, to: to.id, via, signal, handoffs: run.handoffs },
  );
  return to;
}

/**
 * Ends the run successfully: `terminate` (or `pause`, or — awaiting approval — the
 * `approval_requested` of the approvals this run requested), then `end`.
 */
function finish(run: Run, reason: CrewEndReason, agentId: string, signal: string | undefined): RunResult {
  const paused = reason === 'paused';
  const awaiting = reason === 'awaiting_approval';
  const state = stateOf(run, paused ? agentId : undefined);
  const content = run.lastContent;
  const response: CrewResponse = {
    agentId,
    content,
    visibleContent: run.crew.settings.hideSignals ? visibleText(content, run.crew.markers) : content,
    reason,
    isTerminal: reason === 'terminated_by_signal' || reason === 'terminal_agent',
    ...(paused ? { pausedAgentId: agentId } : {}),
    ...(awaiting ? { pendingApprovals: pendingApprovals(run) } : {}),
    handoffs: run.handoffs,
    state,
  };
  const emit = run.emit;
  if (emit !== undefined) {
    if (paused) emit({ type: 'pause', agentId });
    else if (awaiting) {
      const requested = run.requested;
      if (requested !== undefined && requested.length > 0)
        emit({ type: 'approval_requested', agentId, approvals: requested });
    } else
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
  const state = stateOf(run);
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
 * whose content is returned — or `OUT_OF_ROUNDS` when `max_rounds` forbids the next call, or
 * `AWAITING` when calls of a reply are held for approval (main loop only: the reply and its
 * results are then in `run.approvals.batch`, not in `history`). Appends every other reply and
 * tool result to `history`. `toolRounds`: the rounds this turn already made (a resumed turn).
 *
 * @throws AbortedError `ABORTED`; CrewAgentError `CREW_AGENT_FAILED`, `CREW_TOOL_LOOP`;
 * CrewRunError `CREW_COMMIT_FAILED`.
 */
async function runTurn(
  run: Run,
  agent: CompiledAgent,
  history: ChatMessage[],
  abortSignal: AbortSignal,
  group: string | undefined,
  path: Path,
  toolRounds = 0,
): Promise<string | typeof OUT_OF_ROUNDS | typeof AWAITING> {
  const settings = run.crew.settings;
  const emit = run.emit;
  let rounds = toolRounds;
  for (;;) {
    if (run.modelCalls >= settings.maxRounds) return OUT_OF_ROUNDS;
    if (rounds === 0)
      emit?.(
        group === undefined
          ? { type: 'agent_start', agentId: agent.id }
          : { type: 'agent_start', agentId: agent.id, group },
      );
    const { content, toolCalls } = await askModel(run, agent, history, abortSignal, group, path);
    const calls = toolCalls === undefined || toolCalls.length === 0 ? undefined : toolCalls.slice();
    const message: ChatMessage =
      calls === undefined
        ? { role: 'assistant', content, name: agent.id }
        : { role: 'assistant', content, name: agent.id, toolCalls: calls };
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
    if (calls === undefined) {
      history.push(message);
      return content;
    }
    if (rounds >= settings.maxToolRounds) {
      const why = `agent ${JSON.stringify(agent.id)} reached max_tool_rounds (${settings.maxToolRounds})`;
      history.push(message);
      closeCalls(history, calls, 0, `not run: ${why}`);
      throw new CrewAgentError({
        code: 'CREW_TOOL_LOOP',
        message: `Agent ${JSON.stringify(agent.id)} asked for tool round ${rounds + 1}, but max_tool_rounds is ${settings.maxToolRounds}`,
        ...where(agent, group),
      });
    }
    rounds++; // a round counts once, however many approval pauses it spans
    if ((await toolRound(run, agent, message, history, abortSignal, group, rounds)) === AWAITING) return AWAITING;
  }
}

/**
 * One model call of a turn (counted against `max_rounds`) with the trimmed history, returning a
 * valid reply.
 *
 * @throws AbortedError `ABORTED`; CrewAgentError `CREW_AGENT_FAILED` (the model threw, or its
 * reply is not a `ChatResponse`).
 */
async function askModel(
  run: Run,
  agent: CompiledAgent,
  history: ChatMessage[],
  abortSignal: AbortSignal,
  group: string | undefined,
  path: Path,
): Promise<ChatResponse> {
  run.modelCalls++;
  const request: ChatRequest = {
    messages: requestMessages(history, run.crew.settings.maxHistoryMessages, agent.system),
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
  return response as ChatResponse;
}

/**
 * One tool round: decides every call of `message` first (the crew's approval policy and each
 * tool's `needsApproval`), then — when a call of the main loop is held — pauses on the batch
 * (`AWAITING`; allowed calls run now); else appends `message` and answers every call in order.
 */
async function toolRound(
  run: Run,
  agent: CompiledAgent,
  message: ChatMessage,
  history: ChatMessage[],
  abortSignal: AbortSignal,
  group: string | undefined,
  rounds: number,
): Promise<typeof AWAITING | undefined> {
  const calls = message.toolCalls as readonly ToolCall[];
  const verdicts = await decideCalls(run, agent, calls, abortSignal);
  if (group === undefined && verdicts?.some((v) => v.decision === 'ask') === true) {
    run.requested = await holdBatch(run, agent, message, verdicts, rounds);
    return AWAITING;
  }
  history.push(message);
  await runTools(run, agent, calls, verdicts, history, abortSignal, group);
  return undefined;
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
  if (path === undefined) {
    const abortSignal = request.abortSignal as AbortSignal;
    // The main loop's calls share the run's one abort listener; a group member has its own signal.
    return abortSignal === run.abortSignal
      ? run.race.race(agent.model.generate(request))
      : untilAborted(agent.model.generate(request), abortSignal);
  }
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

/** A held call's reason in a parallel group, where a run cannot pause. */
const NO_APPROVAL_IN_GROUP = 'approval unavailable in a parallel group';

/**
 * Runs one round of tool calls in order, answering each with a `tool` message (errors and
 * denials included). `verdicts`: the decide step's, `undefined` when every call runs. A call that
 * would need approval here (a parallel member) is denied with a `warning`.
 */
async function runTools(
  run: Run,
  agent: CompiledAgent,
  calls: readonly ToolCall[],
  verdicts: readonly ApprovalVerdict[] | undefined,
  history: ChatMessage[],
  abortSignal: AbortSignal,
  group: string | undefined,
): Promise<void> {
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i] as ToolCall;
    if (abortSignal.aborted) {
      closeCalls(history, calls, i, 'not run: the run was aborted');
      throw abortedError(abortSignal);
    }
    const verdict = verdicts?.[i];
    if (verdict !== undefined && verdict.decision !== 'allow') {
      const asked = verdict.decision === 'ask';
      if (asked)
        run.emit?.({
          type: 'warning',
          agentId: agent.id,
          message: `Tool call ${JSON.stringify(call.name)} (${JSON.stringify(call.id)}) of agent ${JSON.stringify(agent.id)} needs approval, which is unavailable in parallel group ${JSON.stringify(group)}: denied`,
        });
      const answer = deniedAnswer(asked ? NO_APPROVAL_IN_GROUP : verdict.reason);
      history.push(toolMessage(call, answer.content));
      emitAnswer(run, agent, call, answer, group);
      continue;
    }
    const answer = await runToolCall(run, agent, call, abortSignal, group);
    if (answer === undefined) {
      closeCalls(history, calls, i, 'aborted: the run was aborted');
      throw abortedError(abortSignal);
    }
    history.push(toolMessage(call, answer.content));
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
            // a member's turn never pauses (a call that would need approval is denied there)
            settle(i, replyOutcome(run, agent, group, reply as string | typeof OUT_OF_ROUNDS));
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
      state: stateOf(run),
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

// ------------------------------------------------------------------------------ run arguments

interface Prepared {
  readonly history: ChatMessage[];
  readonly start: CompiledAgent;
  readonly userSignal: AbortSignal | undefined;
  readonly textDeltas: boolean;
  readonly book: ApprovalBook;
  readonly decisions: readonly ApprovalDecision[];
  readonly commit: Run['commit'];
}

const invalid = (message: string, state: CrewState = { history: [] }): CrewRunError =>
  new CrewRunError({ code: 'CREW_ARGUMENT_INVALID', message, state });

/**
 * Validates the input and options. The start agent is the paused batch's (approvals pending),
 * else `resumeAgentId`, else `state.pausedAgentId`, else the entry point. Decisions for approval
 * ids the state does not know fail here, before anything is applied.
 */
function prepare(crew: CompiledCrew, input: unknown, opts: unknown): Prepared | CrewRunError {
  if (opts !== undefined && (typeof opts !== 'object' || opts === null || Array.isArray(opts))) {
    return invalid(
      `Invalid run options ${describeValue(opts)}: expected { state?, resumeAgentId?, abortSignal?, textDeltas?, approvals?, commit? }`,
    );
  }
  const o = (opts ?? {}) as Readonly<Record<string, unknown>> & CrewRunOptions;
  for (const key of Object.keys(o)) {
    if (!RUN_KEYS.has(key))
      return invalid(
        `Unknown run option ${JSON.stringify(key)}: expected state, resumeAgentId, abortSignal, textDeltas, approvals or commit`,
      );
  }
  const read = readState(crew, o.state);
  if (read instanceof CrewRunError) return read;
  const { state, book } = read;
  if (typeof input !== 'string')
    return invalid(`Invalid input ${describeValue(input)}: expected the user's message as a string`, state);
  const userSignal: unknown = o.abortSignal;
  if (userSignal !== undefined && !isAbortSignal(userSignal))
    return invalid(`Invalid abortSignal ${describeValue(userSignal)}: expected an AbortSignal`, state);
  const textDeltas: unknown = o.textDeltas;
  if (textDeltas !== undefined && typeof textDeltas !== 'boolean')
    return invalid(`Invalid textDeltas ${describeValue(textDeltas)}: expected true or false`, state);
  const commit: unknown = o.commit;
  if (commit !== undefined && typeof commit !== 'function')
    return invalid(`Invalid commit ${describeValue(commit)}: expected a function (state) => Promise<void>`, state);
  const decisions = readDecisions(o.approvals);
  if ('problem' in decisions) return invalid(decisions.problem, state);
  const start = startAgent(crew, o.resumeAgentId, state, book);
  if (start instanceof CrewRunError) return start;
  const unknown = unknownApprovalId(book, decisions);
  if (unknown !== undefined) {
    return new CrewRunError({
      code: 'CREW_APPROVAL_UNKNOWN',
      message: `Unknown approval id ${JSON.stringify(unknown)}: ${knownIds(book)}; nothing was applied`,
      state,
      agentId: start.id,
    });
  }
  return {
    history: state.history.slice(),
    start,
    userSignal,
    textDeltas: textDeltas ?? true,
    book,
    decisions,
    commit: commit as Run['commit'],
  };
}

/** What a CREW_APPROVAL_UNKNOWN message says the state knows. */
function knownIds(book: ApprovalBook): string {
  const held = (book.batch?.calls ?? []).flatMap((c) => (c.status === 'held' && c.approval ? [c.approval.id] : []));
  return held.length === 0
    ? 'no approval is pending in this state (decide the ids of CrewResponse.pendingApprovals, with the state that response returned)'
    : `the pending approvals are ${held.map((id) => JSON.stringify(id)).join(', ')}`;
}

/** The agent the run starts at (see {@link prepare}), or why there is none. */
function startAgent(
  crew: CompiledCrew,
  resume: unknown,
  state: CrewState,
  book: ApprovalBook,
): CompiledAgent | CrewRunError {
  if (resume !== undefined && typeof resume !== 'string')
    return invalid(`Invalid resumeAgentId ${describeValue(resume)}: expected an agent id`, state);
  if (book.batch !== undefined) {
    if (resume !== undefined)
      return invalid(
        `resumeAgentId ${JSON.stringify(resume)} cannot be used while approvals are pending: the run continues the turn of agent ${JSON.stringify(book.batch.agentId)}`,
        state,
      );
    return crew.agents.get(book.batch.agentId) as CompiledAgent; // checked by readState
  }
  const startId = resume ?? state.pausedAgentId;
  if (startId === undefined) return crew.entry;
  const found = crew.agents.get(startId);
  if (found !== undefined) return found;
  const where = resume === undefined ? 'state.pausedAgentId' : 'resumeAgentId';
  return new CrewRunError({
    code: 'CREW_UNKNOWN_AGENT',
    message: `Unknown agent ${JSON.stringify(startId)} in ${where}: expected one of ${crew.agentIds.map((id) => JSON.stringify(id)).join(', ')}`,
    state,
    agentId: startId,
  });
}

/** `opts.state` checked and copied (nothing shared with the caller's), with its approval bookkeeping. */
function readState(crew: CompiledCrew, given: unknown): { state: CrewState; book: ApprovalBook } | CrewRunError {
  if (given === undefined) return { state: { history: [] }, book: { issued: 0, decided: [], batch: undefined } };
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
  const state: CrewState = { history: (history as ChatMessage[]).slice() };
  if (s.pausedAgentId !== undefined) state.pausedAgentId = s.pausedAgentId;
  const book = readApprovalState(s.approvals, history.length, (id) => crew.agents.has(id));
  if ('problem' in book) return invalid(book.problem, state);
  const approvals = approvalStateOf(book);
  if (approvals !== undefined) state.approvals = approvals;
  return { state, book };
}
