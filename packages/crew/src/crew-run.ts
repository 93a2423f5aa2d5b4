import { isSignalyardError, systemClock, type Clock } from '@signalyard/core';
import { resolveMcpTools } from './mcp-tools.js';
import { AbortRace, errorText, linkAbort } from '@signalyard/core/internal';
import { applyDecisions, pendingApprovals, resumeBatch } from './approval-batch.js';
import type { CompiledCrew } from './compiled-crew.js';
import type { CrewEvent, CrewResponse } from './crew-events.js';
import { decideHandoff } from './handoff-decision.js';
import { CrewRunError } from './errors/crew-run-error.js';
import { runLoop, type RunEnd } from './run-loop.js';
import { prepare, type Prepared } from './run-input.js';
import { AWAITING, stateOf, type Emit, type Run, type RunResult } from './run-context.js';
import { visibleText } from './signal-hider.js';

/**
 * One run of a crew, start to end. Never rejects: every outcome is the returned result, and
 * (when `emit` is set) the last event emitted is exactly one `end` or `error`. `controller`:
 * the run's own, aborted when the user's signal fires (a stream passes the one its reader's early
 * stop aborts). `clock`: the executor's (a run's `opts.clock` wins).
 * @internal
 */
export async function runCrew(
  crew: CompiledCrew,
  input: unknown,
  opts: unknown,
  emit: Emit,
  controller = new AbortController(),
  clock: Clock = systemClock,
): Promise<RunResult> {
  const prepared = prepare(crew, input, opts, clock);
  if (prepared instanceof CrewRunError) return failed(emit, prepared);
  const unlink = linkAbort(controller, prepared.userSignal);
  const run = startRun(crew, prepared, emit, controller.signal);
  const { start, book, decisions } = prepared;
  const paused = book.batch;
  try {
    run.mcpTools = await resolveMcpTools(crew, crew.mcp, () => stateOf(run));
    if (prepared.warning !== undefined) emit?.({ type: 'warning', agentId: start.id, message: prepared.warning });
    if (paused === undefined) {
      if (decisions.length > 0) applyDecisions(run, start.id, decisions, undefined);
      run.history.push({ role: 'user', content: input as string });
      return finish(run, await runLoop(run, start, 0));
    }
    // `input` is ignored while approvals are pending: the decisions continue the batch.
    if ((await resumeBatch(run, start, decisions)) === AWAITING)
      return finish(run, { reason: 'awaiting_approval', agentId: start.id });
    // The held reply decides again (the same decision): a tool round continues the turn; a
    // transfer it made is carried out now.
    const decision = decideHandoff(start, paused.message);
    return finish(
      run,
      decision.kind === 'tool_round'
        ? await runLoop(run, start, paused.run.toolRounds)
        : await runLoop(run, start, 0, decision),
    );
  } catch (error) {
    return failed(emit, runError(error, run.agentId, run));
  } finally {
    run.race.dispose();
    unlink();
  }
}

/** The per-run state. A run that resumes a paused batch continues the paused run: its counts and agent path. */
function startRun(crew: CompiledCrew, prepared: Prepared, emit: Emit, abortSignal: AbortSignal): Run {
  const { start, book, history, textDeltas, commit, clock, interruptSignal, idempotencyKey } = prepared;
  const paused = book.batch;
  const chain = paused === undefined ? [start.id] : paused.run.path.slice();
  return {
    crew,
    emit,
    path: emit !== undefined && textDeltas ? Object.freeze(chain.slice()) : undefined,
    chain,
    history,
    abortSignal,
    race: new AbortRace(abortSignal),
    modelCalls: paused?.run.modelCalls ?? 0,
    handoffs: paused?.run.handoffs ?? 0,
    lastAgentId: start.id,
    lastContent: paused?.message.content ?? '',
    agentId: start.id,
    resumeAgentId: prepared.lastAgentId,
    approvals: book,
    requested: undefined,
    resumed: paused !== undefined,
    interruptSignal,
    commit,
    clock,
    idempotencyKey,
    toolCalls: 0,
    mcpTools: undefined,
  };
}

/**
 * Ends the run successfully: `terminate` (or `pause`, or — awaiting approval — the
 * `approval_requested` of the approvals this run requested), then `end`.
 */
function finish(run: Run, end: RunEnd): RunResult {
  const { reason, agentId, signal, tool } = end;
  const paused = reason === 'paused';
  const awaiting = reason === 'awaiting_approval';
  if (run.crew.settings.resumeAt === 'last_agent') run.resumeAgentId = resumesAt(run, end);
  const state = stateOf(run, paused ? agentId : undefined);
  const content = run.lastContent;
  const response: CrewResponse = {
    agentId,
    content,
    visibleContent: run.crew.settings.hideSignals ? visibleText(content, run.crew.markers) : content,
    reason,
    isTerminal: reason === 'terminated_by_signal' || reason === 'terminal_agent',
    ...(paused ? { pausedAgentId: agentId } : {}),
    ...(signal === undefined ? {} : { signal }),
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
    } else {
      const event: CrewEvent = { type: 'terminate', agentId, reason };
      if (signal !== undefined) event.signal = signal;
      if (tool !== undefined) event.tool = tool;
      emit(event);
    }
    emit({ type: 'end', response });
  }
  return { ok: true, response };
}

/**
 * Where the next run of a `resume_at: last_agent` crew starts (`CrewState.lastAgentId`): the agent
 * whose reply ended this run — unless it is terminal, or a `max_*` limit ended the run (then the
 * entry point: `undefined`).
 */
function resumesAt(run: Run, end: RunEnd): string | undefined {
  const { reason, agentId } = end;
  if (reason === 'terminal_agent' || reason === 'max_handoffs' || reason === 'max_rounds') return undefined;
  return run.crew.agents.get(agentId)?.isTerminal === true ? undefined : agentId;
}

function failed(emit: Emit, error: CrewRunError): RunResult {
  emit?.({ type: 'error', error, state: error.state });
  return { ok: false, error };
}

/**
 * Any error thrown inside the run, as the run's `CrewRunError` carrying the state so far: a run
 * error as it is; an abort as `ABORTED` with the `AbortedError` as `cause`.
 */
function runError(error: unknown, agentId: string, run: Run): CrewRunError {
  if (CrewRunError.isInstance(error)) return error;
  const state = stateOf(run);
  if (isSignalyardError(error, 'ABORTED')) {
    return new CrewRunError({
      code: 'ABORTED',
      message: `Crew run aborted while agent ${JSON.stringify(agentId)} was running`,
      state,
      agentId,
      cause: error,
    });
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
