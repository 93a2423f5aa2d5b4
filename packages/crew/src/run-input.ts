import { describeValue, systemClock, type ApprovalDecision, type ChatMessage, type Clock } from '@signalyard/core';
import { isAbortSignal } from '@signalyard/core/internal';
import { readApprovalState, readDecisions, unknownApprovalId } from './approval-state.js';
import type { CompiledAgent, CompiledCrew } from './compiled-crew.js';
import type { CrewRunOptions } from './crew-events.js';
import { messageProblem } from './crew-history.js';
import type { CrewState } from './crew-state.js';
import { CrewRunError } from './errors/crew-run-error.js';
import { approvalStateOf, type ApprovalBook, type Run } from './run-context.js';

// A run's input and options, checked before anything runs: a bad argument fails the run with
// CREW_ARGUMENT_INVALID (or CREW_UNKNOWN_AGENT, CREW_APPROVAL_UNKNOWN) and nothing is applied.

const RUN_KEYS: ReadonlySet<string> = new Set([
  'state',
  'resumeAgentId',
  'abortSignal',
  'textDeltas',
  'approvals',
  'commit',
  'clock',
  'interruptSignal',
  'idempotencyKey',
]);

/** A run's checked arguments: copies of what the caller gave, nothing shared with it. @internal */
export interface Prepared {
  readonly history: ChatMessage[];
  readonly start: CompiledAgent;
  readonly userSignal: AbortSignal | undefined;
  readonly textDeltas: boolean;
  readonly book: ApprovalBook;
  readonly decisions: readonly ApprovalDecision[];
  readonly commit: Run['commit'];
  readonly interruptSignal: AbortSignal | undefined;
  /** `opts.clock`, else the executor's. */
  readonly clock: Clock;
  /** `opts.idempotencyKey`: the base of each tool call's key. */
  readonly idempotencyKey: string | undefined;
  /** `state.lastAgentId`, kept for the state the run returns (`resumeAt: 'last_agent'` only). */
  readonly lastAgentId: string | undefined;
  /** Why the run does not start where `state.lastAgentId` says (an agent the crew no longer has). */
  readonly warning: string | undefined;
}

const invalid = (message: string, state: CrewState = { history: [] }): CrewRunError =>
  new CrewRunError({ code: 'CREW_ARGUMENT_INVALID', message, state });

/**
 * Validates the input and options. The start agent is the paused batch's (approvals pending),
 * else `resumeAgentId`, else `state.pausedAgentId`, else — with `resumeAt: 'last_agent'` —
 * `state.lastAgentId` (unless it is terminal, or unknown: then a warning), else the entry point.
 * Decisions for approval ids the state does not know fail here, before anything is applied.
 * `clock`: the executor's, unless the options name one.
 * @internal
 */
export function prepare(
  crew: CompiledCrew,
  input: unknown,
  opts: unknown,
  clock: Clock = systemClock,
): Prepared | CrewRunError {
  if (opts !== undefined && (typeof opts !== 'object' || opts === null || Array.isArray(opts))) {
    return invalid(
      `Invalid run options ${describeValue(opts)}: expected { state?, resumeAgentId?, abortSignal?, textDeltas?, approvals?, commit?, clock?, interruptSignal?, idempotencyKey? }`,
    );
  }
  const o = (opts ?? {}) as Readonly<Record<string, unknown>> & CrewRunOptions;
  for (const key of Object.keys(o)) {
    if (!RUN_KEYS.has(key))
      return invalid(
        `Unknown run option ${JSON.stringify(key)}: expected state, resumeAgentId, abortSignal, textDeltas, approvals, commit, clock, interruptSignal or idempotencyKey`,
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
  const interruptSignal: unknown = o.interruptSignal;
  if (interruptSignal !== undefined && !isAbortSignal(interruptSignal))
    return invalid(`Invalid interruptSignal ${describeValue(interruptSignal)}: expected an AbortSignal`, state);
  const textDeltas: unknown = o.textDeltas;
  if (textDeltas !== undefined && typeof textDeltas !== 'boolean')
    return invalid(`Invalid textDeltas ${describeValue(textDeltas)}: expected true or false`, state);
  const commit: unknown = o.commit;
  if (commit !== undefined && typeof commit !== 'function')
    return invalid(`Invalid commit ${describeValue(commit)}: expected a function (state) => Promise<void>`, state);
  const runClock: unknown = o.clock;
  if (runClock !== undefined && !isClock(runClock))
    return invalid(`Invalid clock ${describeValue(runClock)}: expected a Clock { now(): number }`, state);
  const idempotencyKey: unknown = o.idempotencyKey;
  if (idempotencyKey !== undefined && (typeof idempotencyKey !== 'string' || idempotencyKey === ''))
    return invalid(`Invalid idempotencyKey ${describeValue(idempotencyKey)}: expected a non-empty string`, state);
  const decisions = readDecisions(o.approvals);
  if ('problem' in decisions) return invalid(decisions.problem, state);
  const start = startAgent(crew, o.resumeAgentId, state, book);
  if (start instanceof CrewRunError) return start;
  const lastAgentId = crew.settings.resumeAt === 'last_agent' ? state.lastAgentId : undefined;
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
    interruptSignal,
    clock: runClock ?? clock,
    idempotencyKey,
    lastAgentId,
    warning:
      lastAgentId !== undefined &&
      !crew.agents.has(lastAgentId) &&
      book.batch === undefined &&
      o.resumeAgentId === undefined &&
      state.pausedAgentId === undefined
        ? `state.lastAgentId ${JSON.stringify(lastAgentId)} is not an agent of this crew: the run starts at the entry point ${JSON.stringify(crew.entry.id)}`
        : undefined,
  };
}

/** True for a {@link Clock}: an object with a `now()` method. @internal */
export function isClock(value: unknown): value is Clock {
  return typeof value === 'object' && value !== null && typeof (value as { now?: unknown }).now === 'function';
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
  if (startId === undefined) {
    const last = state.lastAgentId === undefined ? undefined : crew.agents.get(state.lastAgentId);
    return crew.settings.resumeAt === 'last_agent' && last !== undefined && !last.isTerminal ? last : crew.entry;
  }
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
    return invalid(
      `Invalid state ${describeValue(given)}: expected { history: ChatMessage[], pausedAgentId?, lastAgentId?, approvals? }`,
    );
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
  if (s.lastAgentId !== undefined && typeof s.lastAgentId !== 'string') {
    return invalid(`Invalid state.lastAgentId ${describeValue(s.lastAgentId)}: expected an agent id`);
  }
  const state: CrewState = { history: (history as ChatMessage[]).slice() };
  if (s.pausedAgentId !== undefined) state.pausedAgentId = s.pausedAgentId;
  if (s.lastAgentId !== undefined) state.lastAgentId = s.lastAgentId;
  const book = readApprovalState(s.approvals, history.length, (id) => crew.agents.has(id));
  if ('problem' in book) return invalid(book.problem, state);
  const approvals = approvalStateOf(book);
  if (approvals !== undefined) state.approvals = approvals;
  return { state, book };
}
