import type { ApprovalVerdict, ChatMessage, ToolCall } from '@signalyard/core';
import { abortedError } from '@signalyard/core/internal';
import { claimedRound, holdBatch } from './approval-batch.js';
import { decideCalls } from './approval-verdicts.js';
import { toolMessage } from './crew-history.js';
import { transferAnswer, type HandoffDecision } from './handoff-decision.js';
import { AWAITING, checkInterrupt, laneTransfers, type Lane, type Run } from './run-context.js';
import { deniedAnswer, emitAnswer, runToolCall, type ToolAnswer, type TransferAnswers } from './tool-call.js';

/**
 * One tool round (step 2) of `lane`'s turn — or the calls of a final reply that transfers: answers
 * its transfer calls as `decision` says (main loop, `handoff_mode: tool | both`; never through
 * approvals), decides every other call (the crew's approval policy and each tool's
 * `needsApproval`), then — when a call of the main loop is held — pauses on the batch
 * (`AWAITING`; allowed calls run now); else appends `message` and answers every call in order.
 * `rounds`: the turn's tool rounds, this one included.
 *
 * @throws AbortedError `ABORTED`; CrewRunError `CREW_COMMIT_FAILED`.
 * @internal
 */
export async function toolRound(
  run: Run,
  lane: Lane,
  message: ChatMessage,
  rounds: number,
  decision: HandoffDecision | undefined,
): Promise<typeof AWAITING | undefined> {
  const { agent, history, abortSignal, group } = lane;
  const calls = message.toolCalls as readonly ToolCall[];
  const transfers = answerTransfers(run, lane, calls, decision);
  const verdicts = await decideCalls(run, agent, calls, abortSignal);
  if (group === undefined && verdicts?.some((v) => v.decision === 'ask') === true) {
    run.requested = await holdBatch(run, agent, message, verdicts, rounds, transfers);
    return AWAITING;
  }
  // After a resume, every call is claimed (committed) before it runs, as approved ones are.
  if (group === undefined && run.resumed && run.commit !== undefined) {
    await claimedRound(run, agent, message, verdicts, rounds, transfers);
    return undefined;
  }
  history.push(message);
  await runTools(run, lane, calls, verdicts, transfers);
  return undefined;
}

/**
 * The calls of a final reply that are all transfer calls (the common case: a reply that only
 * hands off), answered at once, without a tool round: appends `message` and an answer to each
 * call, and returns true. False — nothing done — when any call is an ordinary one (then
 * {@link toolRound} runs them). Synchronous, so a handoff by tool call costs no more awaits than
 * one by marker.
 * @internal
 */
export function answerTransferCalls(run: Run, lane: Lane, message: ChatMessage, decision: HandoffDecision): boolean {
  const transfers = laneTransfers(lane);
  const calls = message.toolCalls as readonly ToolCall[];
  if (transfers === undefined) return false;
  for (const call of calls) if (!transfers.has(call.name)) return false;
  const answers = answerTransfers(run, lane, calls, decision) as readonly ToolAnswer[];
  const history = lane.history;
  history.push(message);
  for (let i = 0; i < calls.length; i++)
    history.push(toolMessage(calls[i] as ToolCall, (answers[i] as ToolAnswer).content));
  return true;
}

/**
 * The answers to the transfer calls among `calls`, by position (`undefined` at an ordinary call),
 * with a `warning` for each transfer call that did nothing; `undefined` when there is none.
 */
function answerTransfers(
  run: Run,
  lane: Lane,
  calls: readonly ToolCall[],
  decision: HandoffDecision | undefined,
): TransferAnswers {
  const transfers = laneTransfers(lane);
  if (transfers === undefined || decision === undefined) return undefined;
  let answers: (ToolAnswer | undefined)[] | undefined;
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i] as ToolCall;
    const answer = transferAnswer(transfers, call, decision);
    if (answer === undefined) continue;
    answers ??= new Array<ToolAnswer | undefined>(calls.length);
    answers[i] = { result: answer.content, isError: answer.isError, content: answer.content };
    if (answer.warning !== undefined)
      run.emit?.({
        type: 'warning',
        agentId: lane.agent.id,
        message: `Transfer call ${JSON.stringify(call.name)} (${JSON.stringify(call.id)}) of agent ${JSON.stringify(lane.agent.id)}: ${answer.warning}`,
      });
  }
  return answers;
}

/** A held call's reason in a parallel group, where a run cannot pause. */
const NO_APPROVAL_IN_GROUP = 'approval unavailable in a parallel group';

/**
 * Runs one round of tool calls in order, answering each with a `tool` message (errors and
 * denials included; a transfer call with its answer in `transfers`). `verdicts`: the decide
 * step's, `undefined` when every call runs. A call that would need approval here (a parallel
 * member) is denied with a `warning`.
 */
async function runTools(
  run: Run,
  lane: Lane,
  calls: readonly ToolCall[],
  verdicts: readonly ApprovalVerdict[] | undefined,
  transfers: TransferAnswers,
): Promise<void> {
  const { agent, history, abortSignal, group } = lane;
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i] as ToolCall;
    const transfer = transfers?.[i];
    if (transfer !== undefined) {
      history.push(toolMessage(call, transfer.content));
      continue;
    }
    if (abortSignal.aborted) {
      closeCalls(history, calls, i, 'not run: the run was aborted');
      throw abortedError(abortSignal);
    }
    if (group === undefined && run.interruptSignal?.aborted === true) {
      // A safe point: before a tool call starts. The calls not run are answered, so the
      // history stays valid.
      closeCalls(history, calls, i, 'not run: the run was interrupted');
      checkInterrupt(run);
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
