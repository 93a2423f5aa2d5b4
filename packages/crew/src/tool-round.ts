import type { ApprovalVerdict, ChatMessage, ToolCall } from '@signalyard/core';
import { abortedError } from '@signalyard/core/internal';
import { holdBatch } from './approval-batch.js';
import { decideCalls } from './approval-verdicts.js';
import { toolMessage } from './crew-history.js';
import { AWAITING, type Lane, type Run } from './run-context.js';
import { deniedAnswer, emitAnswer, runToolCall } from './tool-call.js';

/**
 * One tool round (step 2) of `lane`'s turn: decides every call of `message` first (the crew's
 * approval policy and each tool's `needsApproval`), then — when a call of the main loop is
 * held — pauses on the batch (`AWAITING`; allowed calls run now); else appends `message` and
 * answers every call in order. `rounds`: the turn's tool rounds, this one included.
 *
 * @throws AbortedError `ABORTED`; CrewRunError `CREW_COMMIT_FAILED`.
 * @internal
 */
export async function toolRound(
  run: Run,
  lane: Lane,
  message: ChatMessage,
  rounds: number,
): Promise<typeof AWAITING | undefined> {
  const { agent, history, abortSignal, group } = lane;
  const calls = message.toolCalls as readonly ToolCall[];
  const verdicts = await decideCalls(run, agent, calls, abortSignal);
  if (group === undefined && verdicts?.some((v) => v.decision === 'ask') === true) {
    run.requested = await holdBatch(run, agent, message, verdicts, rounds);
    return AWAITING;
  }
  history.push(message);
  await runTools(run, lane, calls, verdicts);
  return undefined;
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
  lane: Lane,
  calls: readonly ToolCall[],
  verdicts: readonly ApprovalVerdict[] | undefined,
): Promise<void> {
  const { agent, history, abortSignal, group } = lane;
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

/**
 * Answers `calls[from…]` with error `tool` messages, so the history never holds an unanswered call.
 * @internal
 */
export function closeCalls(history: ChatMessage[], calls: readonly ToolCall[], from: number, why: string): void {
  for (let i = from; i < calls.length; i++) history.push(toolMessage(calls[i] as ToolCall, `Error: ${why}`));
}
