import { AbortedError, type ChatMessage, type SignalyardError } from '@signalyard/core';
import { abortedError, onAbort, startTimer } from '@signalyard/core/internal';
import { runTurn, type TurnEnd } from './agent-turn.js';
import type { CompiledAgent, CompiledGroup } from './compiled-crew.js';
import type { CrewEvent, ParallelMemberStatus } from './crew-events.js';
import { aggregateResults } from './crew-history.js';
import { CrewAgentError } from './errors/crew-agent-error.js';
import { CrewRunError } from './errors/crew-run-error.js';
import { OUT_OF_ROUNDS, extend, stateOf, type Path, type Run } from './run-context.js';

/** How one member of a parallel group ended (`aborted`: by the run's abort, reported by no event). */
interface MemberOutcome {
  readonly agentId: string;
  readonly status: ParallelMemberStatus | 'aborted';
  readonly content?: string;
  readonly error?: SignalyardError;
  /** Failed because `max_rounds` forbade its next model call. */
  readonly outOfRounds?: boolean;
}

/** One member of a running group. */
interface Member {
  readonly agent: CompiledAgent;
  /** The member's own: aborted by the run's abort, the group's deadline, or a cancellation. */
  readonly controller: AbortController;
  /** Set once the member ended. */
  outcome: MemberOutcome | undefined;
  /** Aborted because another member completed the group first (`wait_for_all: false`). */
  cancelled: boolean;
}

/**
 * Step 7: runs the group's members concurrently (a {@link ParallelRun}) — `parallel_start`, then
 * a `handoff` (`via: 'parallel'`, with `group`) from `from` to each member — then appends the
 * aggregated results as one `user` message. Returns `OUT_OF_ROUNDS` when no member succeeded
 * because `max_rounds` stopped them.
 *
 * @throws AbortedError `ABORTED` when the run is aborted; CrewRunError `CREW_PARALLEL_FAILED`
 * when no member succeeded.
 * @internal
 */
export async function runGroup(
  run: Run,
  from: CompiledAgent,
  group: CompiledGroup,
): Promise<undefined | typeof OUT_OF_ROUNDS> {
  const emit = run.emit;
  if (emit !== undefined) {
    emit({ type: 'parallel_start', group: group.name, agents: group.memberIds });
    // Each member takes over from the agent that started the group (no handoff counted: running
    // a group is not itself a handoff; moving on to `next_agent` afterwards is one).
    for (const to of group.memberIds)
      emit({ type: 'handoff', from: from.id, to, via: 'parallel', group: group.name, handoffs: run.handoffs });
  }
  const outcomes = await new ParallelRun(run, group).outcomes();
  if (run.abortSignal.aborted) throw abortedError(run.abortSignal);
  return groupResult(run, from, group, outcomes);
}

/**
 * The members of one parallel group running at once under the group's deadline, each on its own
 * copy of the history with its own AbortSignal — aborted by the run, the deadline, or (without
 * `wait_for_all`) the first member to succeed. Every member reports how it ended with a
 * `parallel_member_end` event (except when the run itself was aborted).
 */
class ParallelRun {
  readonly #run: Run;
  readonly #group: CompiledGroup;
  readonly #members: readonly Member[];
  #timedOut = false;

  constructor(run: Run, group: CompiledGroup) {
    this.#run = run;
    this.#group = group;
    this.#members = group.members.map((agent) => ({
      agent,
      controller: new AbortController(),
      outcome: undefined,
      cancelled: false,
    }));
  }

  /** Runs every member; resolves with each member's outcome, in member order. */
  async outcomes(): Promise<MemberOutcome[]> {
    const run = this.#run;
    const runSignal = run.abortSignal;
    const snapshot = run.history.slice();
    const path = run.path;
    const stopListening = onAbort(runSignal, () => {
      this.#abortUnfinished(runSignal.reason);
    });
    const stopTimer = startTimer(this.#group.timeoutMs, () => {
      this.#timedOut = true;
      this.#abortUnfinished(groupTimeout(this.#group));
    });
    try {
      return await Promise.all(this.#members.map((member) => this.#runMember(member, snapshot.slice(), path)));
    } finally {
      stopTimer();
      stopListening();
    }
  }

  /** One member's turn, and how it ended. */
  async #runMember(member: Member, history: ChatMessage[], path: Path): Promise<MemberOutcome> {
    const { agent, controller } = member;
    const group = this.#group;
    let outcome: MemberOutcome;
    try {
      const lane = { agent, history, abortSignal: controller.signal, group: group.name, path: extend(path, agent.id) };
      // a member's turn never pauses (a call that would need approval is denied there)
      const end = (await runTurn(this.#run, lane)) as TurnEnd | typeof OUT_OF_ROUNDS;
      const reply = end === OUT_OF_ROUNDS ? end : end.content;
      // Finished, but after another member had already completed the group (wait_for_all: false).
      outcome = member.cancelled
        ? { agentId: agent.id, status: 'cancelled' }
        : replyOutcome(this.#run, agent, group, reply);
    } catch (error) {
      const timedOut = this.#timedOut && controller.signal.aborted;
      outcome = memberFailure(agent, group, error, this.#run.abortSignal.aborted, member.cancelled, timedOut);
    }
    this.#settle(member, outcome);
    return outcome;
  }

  /** Records how `member` ended, reports it, and — the group's first success without `wait_for_all` — cancels the rest. */
  #settle(member: Member, outcome: MemberOutcome): void {
    member.outcome = outcome;
    const group = this.#group;
    const emit = this.#run.emit;
    if (outcome.status !== 'aborted' && emit !== undefined) emit(memberEnd(group, outcome));
    if (outcome.status !== 'succeeded' || group.waitForAll) return;
    for (const other of this.#members) {
      if (other.outcome === undefined && !other.cancelled) {
        other.cancelled = true;
        other.controller.abort(
          new AbortedError({
            message: `Cancelled: ${JSON.stringify(outcome.agentId)} already completed parallel group ${JSON.stringify(group.name)}`,
          }),
        );
      }
    }
  }

  #abortUnfinished(reason: unknown): void {
    for (const member of this.#members) if (member.outcome === undefined) member.controller.abort(reason);
  }
}

/** The `parallel_member_end` event of a member that ended (not by a run abort). */
function memberEnd(group: CompiledGroup, outcome: MemberOutcome): CrewEvent {
  const status = outcome.status as ParallelMemberStatus;
  const event: CrewEvent = { type: 'parallel_member_end', group: group.name, agentId: outcome.agentId, status };
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
  if (reply !== OUT_OF_ROUNDS) return { agentId: agent.id, status: 'succeeded', content: reply };
  return {
    agentId: agent.id,
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

/** How a member whose turn threw ended. */
function memberFailure(
  agent: CompiledAgent,
  group: CompiledGroup,
  error: unknown,
  runAborted: boolean,
  cancelled: boolean,
  timedOut: boolean,
): MemberOutcome {
  const agentId = agent.id;
  if (runAborted) return { agentId, status: 'aborted' };
  if (cancelled) return { agentId, status: 'cancelled' };
  if (timedOut) {
    return {
      agentId,
      status: 'timed_out',
      error: new CrewAgentError({
        code: 'CREW_PARALLEL_TIMEOUT',
        message: `Agent ${JSON.stringify(agentId)} of parallel group ${JSON.stringify(group.name)} did not finish within ${group.timeoutSeconds} s`,
        agentId,
        group: group.name,
      }),
    };
  }
  // a member's turn throws only CrewAgentErrors and AbortedErrors
  return { agentId, status: 'failed', error: error as SignalyardError };
}

/** Step 7's end: the aggregated results as one user message, or why the group failed. */
function groupResult(
  run: Run,
  from: CompiledAgent,
  group: CompiledGroup,
  outcomes: readonly MemberOutcome[],
): undefined | typeof OUT_OF_ROUNDS {
  const succeeded: { agentId: string; content: string }[] = [];
  let outOfRounds = false;
  for (const o of outcomes) {
    if (o.status === 'succeeded') succeeded.push({ agentId: o.agentId, content: o.content as string });
    if (o.outOfRounds === true) outOfRounds = true;
  }
  run.emit?.({ type: 'parallel_end', group: group.name, succeeded: succeeded.map((s) => s.agentId) });
  if (succeeded.length === 0) {
    if (outOfRounds) return OUT_OF_ROUNDS;
    const errors = outcomes.map((o) => o.error ?? new AbortedError());
    const summary = outcomes.map(
      (o) => `${o.agentId} ${o.status === 'timed_out' ? 'timed out' : (o.error?.message ?? o.status)}`,
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
