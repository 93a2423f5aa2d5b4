import type { ApprovalDecision, ApprovalVerdict, ChatMessage, PendingApproval, ToolCall } from '@signalyard/core';
import { abortedError, errorText, isoAt } from '@signalyard/core/internal';
import type { CompiledAgent } from './compiled-crew.js';
import { toolMessage } from './crew-history.js';
import type { CrewBatchCall, CrewToolBatch } from './crew-state.js';
import { CrewRunError } from './errors/crew-run-error.js';
import {
  AWAITING,
  DECIDED_KEPT,
  checkInterrupt,
  isAborted,
  stateOf,
  nextIdempotencyKey,
  type ApprovalBook,
  type Run,
} from './run-context.js';
import {
  OUTCOME_UNKNOWN,
  deniedAnswer,
  emitAnswer,
  runToolCall,
  type ToolAnswer,
  type TransferAnswers,
} from './tool-call.js';

/**
 * Pauses on a reply with held calls: issues an approval id for each held call, answers the
 * denied ones and the transfer calls (`transfers`), records the batch in `run.approvals` (the
 * reply stays out of the history), and runs the allowed calls now. Returns the approvals this
 * pause requests.
 *
 * @throws AbortedError `ABORTED` when the run is aborted (the batch is kept in the run's state).
 * @internal
 */
export async function holdBatch(
  run: Run,
  agent: CompiledAgent,
  message: ChatMessage,
  verdicts: readonly ApprovalVerdict[],
  toolRounds: number,
  transfers: TransferAnswers,
): Promise<PendingApproval[]> {
  const requested: PendingApproval[] = [];
  startBatch(run, agent, message, verdicts, toolRounds, transfers, requested);
  await runApproved(run, agent, run.abortSignal);
  return requested;
}

/**
 * A tool round of a run that resumed after approval, when the run can commit: the round goes
 * through a batch like a held one, so each allowed call is claimed — recorded `started` and
 * committed — before it runs (a crash or a re-applied signal then never runs it again), and the
 * reply with its results is appended to the history as one block once every call is answered.
 * `verdicts`: the decide step's (none held), `undefined` when every call runs.
 *
 * @throws AbortedError `ABORTED`; CrewRunError `CREW_COMMIT_FAILED`.
 * @internal
 */
export async function claimedRound(
  run: Run,
  agent: CompiledAgent,
  message: ChatMessage,
  verdicts: readonly ApprovalVerdict[] | undefined,
  toolRounds: number,
  transfers: TransferAnswers,
): Promise<void> {
  startBatch(run, agent, message, verdicts, toolRounds, transfers, undefined);
  await runApproved(run, agent, run.abortSignal);
  completeBatch(run, run.approvals.batch as CrewToolBatch);
}

/**
 * Records the reply `message` as the run's batch: an approval id issued for each held call
 * (pushed to `requested`), the denied calls and the transfer calls answered, the allowed ones
 * `approved` (not yet run). The reply stays out of the history until the batch is complete.
 */
function startBatch(
  run: Run,
  agent: CompiledAgent,
  message: ChatMessage,
  verdicts: readonly ApprovalVerdict[] | undefined,
  toolRounds: number,
  transfers: TransferAnswers,
  requested: PendingApproval[] | undefined,
): void {
  const book = run.approvals;
  const calls = message.toolCalls as readonly ToolCall[];
  const requestedAt = isoAt(run.clock.now());
  const entries: CrewBatchCall[] = calls.map((call, i) => {
    const transfer = transfers?.[i];
    if (transfer !== undefined) return { status: 'done', content: transfer.content, isError: transfer.isError };
    const verdict = verdicts?.[i];
    if (verdict === undefined || verdict.decision === 'allow') return { status: 'approved' };
    if (verdict.decision === 'deny') {
      const answer = deniedAnswer(verdict.reason);
      emitAnswer(run, agent, call, answer, undefined);
      return { status: 'done', content: answer.content, isError: true };
    }
    book.issued++;
    const approval: PendingApproval = Object.freeze({
      id: `ap-${book.issued}`,
      toolCallId: call.id,
      toolName: call.name,
      arguments: call.arguments,
      agentId: agent.id,
      ...(verdict.reason === undefined ? {} : { reason: verdict.reason }),
      ...(verdict.rule === undefined ? {} : { rule: verdict.rule }),
      ...(verdict.ruleName === undefined ? {} : { ruleName: verdict.ruleName }),
      requestedAt,
      ...idempotencyKeyOf(run),
    });
    requested?.push(approval);
    return { status: 'held', approval };
  });
  book.batch = {
    agentId: agent.id,
    message,
    calls: entries,
    at: run.history.length,
    run: { modelCalls: run.modelCalls, handoffs: run.handoffs, toolRounds, path: run.chain.slice() },
  };
}

/**
 * Continues the paused batch: applies `decisions` (approved calls run, denied ones are answered
 * `denied: <reason>`; a decision for an id already decided is ignored with a `warning`), runs
 * every approved call, answers claimed calls without a result `outcome unknown: not retried`,
 * and — once every call is answered — appends the reply and its results to the history as one
 * block, where the run paused (messages added since move after it). Returns `AWAITING` while
 * calls are still held. The ids of `decisions` are known (checked before the run started).
 *
 * @throws AbortedError `ABORTED`; CrewRunError `CREW_COMMIT_FAILED`.
 * @internal
 */
export async function resumeBatch(
  run: Run,
  agent: CompiledAgent,
  decisions: readonly ApprovalDecision[],
): Promise<typeof AWAITING | undefined> {
  const batch = run.approvals.batch as CrewToolBatch;
  const held = (): number => batch.calls.filter((c) => c.status === 'held').length;
  const heldBefore = held();
  applyDecisions(run, agent.id, decisions, agent);
  const decided = heldBefore - held();
  const claimed = await runApproved(run, agent, run.abortSignal);
  if (held() > 0) return AWAITING;
  // Decisions that ran no claimed call (denials only) are made durable too before the run goes
  // on: another run that resumes the same batch at the same moment then loses the commit and
  // stops, instead of running the calls of the next reply a second time.
  if (decided > 0 && !claimed && run.commit !== undefined) await commitDecisions(run, batch, run.commit);
  completeBatch(run, batch);
  return undefined;
}

/**
 * Appends the complete batch — the reply and its results — to the history as one block, where
 * the run paused (messages added since move after it), and clears it.
 */
function completeBatch(run: Run, batch: CrewToolBatch): void {
  const calls = batch.message.toolCalls as readonly ToolCall[];
  const block: ChatMessage[] = [batch.message];
  batch.calls.forEach((entry, i) => {
    block.push(toolMessage(calls[i] as ToolCall, entry.content as string));
  });
  run.history.splice(Math.min(batch.at, run.history.length), 0, ...block);
  run.approvals.batch = undefined;
}

/**
 * Applies decisions to the held calls of the batch (there may be none): `approval_resolved` for
 * each, a `warning` for a decision on an id already decided. `agent` is the batch's agent, when
 * there is a batch; `agentId` names the agent of warnings.
 * @internal
 */
export function applyDecisions(
  run: Run,
  agentId: string,
  decisions: readonly ApprovalDecision[],
  agent: CompiledAgent | undefined,
): void {
  const book = run.approvals;
  const batch = book.batch;
  for (const decision of decisions) {
    const index = batch?.calls.findIndex((c) => c.approval?.id === decision.id) ?? -1;
    const entry = batch?.calls[index];
    if (batch === undefined || agent === undefined || entry?.status !== 'held') {
      run.emit?.({
        type: 'warning',
        agentId,
        message: `Approval ${JSON.stringify(decision.id)} was already decided: this decision (${decision.approved ? 'approve' : 'deny'}) is ignored`,
      });
      continue;
    }
    remember(book, decision.id);
    const { id, approved, reason } = decision;
    run.emit?.(
      reason === undefined
        ? { type: 'approval_resolved', agentId: batch.agentId, id, approved }
        : { type: 'approval_resolved', agentId: batch.agentId, id, approved, reason },
    );
    if (approved) {
      entry.status = 'approved';
      continue;
    }
    const answer = deniedAnswer(reason);
    settle(entry, answer);
    emitAnswer(run, agent, (batch.message.toolCalls as readonly ToolCall[])[index] as ToolCall, answer, undefined);
  }
}

/** The held calls of the run's batch, as `CrewResponse.pendingApprovals`. @internal */
export function pendingApprovals(run: Run): PendingApproval[] {
  const out: PendingApproval[] = [];
  for (const entry of run.approvals.batch?.calls ?? [])
    if (entry.status === 'held') out.push(entry.approval as PendingApproval);
  return out;
}

/** `{ idempotencyKey }` with the run's next key for a call held now; `{}` when the run has none. */
function idempotencyKeyOf(run: Run): { idempotencyKey?: string } {
  const key = nextIdempotencyKey(run);
  return key === undefined ? {} : { idempotencyKey: key };
}

/** Records `id` as decided, forgetting the oldest beyond {@link DECIDED_KEPT}. */
function remember(book: ApprovalBook, id: string): void {
  book.decided.push(id);
  if (book.decided.length > DECIDED_KEPT) book.decided.splice(0, book.decided.length - DECIDED_KEPT);
}

function settle(entry: CrewBatchCall, answer: ToolAnswer): void {
  entry.status = 'done';
  entry.content = answer.content;
  entry.isError = answer.isError;
}

/**
 * Runs the batch's approved calls in order, each claimed first: recorded `started` and — for a
 * call a person approved, or any call of a run that resumed after approval, when the run has a
 * `commit` hook — committed before the tool runs. A
 * call found `started` (claimed by an earlier run that left no result) is never run again: it is
 * answered `outcome unknown: not retried`.
 */
async function runApproved(run: Run, agent: CompiledAgent, abortSignal: AbortSignal): Promise<boolean> {
  const batch = run.approvals.batch as CrewToolBatch;
  const calls = batch.message.toolCalls as readonly ToolCall[];
  let committed = false;
  for (let i = 0; i < batch.calls.length; i++) {
    const entry = batch.calls[i] as CrewBatchCall;
    const call = calls[i] as ToolCall;
    if (entry.status === 'started') {
      settle(entry, OUTCOME_UNKNOWN);
      emitAnswer(run, agent, call, OUTCOME_UNKNOWN, undefined);
      continue;
    }
    if (entry.status !== 'approved') continue;
    if (abortSignal.aborted) throw abortedError(abortSignal);
    checkInterrupt(run); // a safe point: the call stays approved, the batch in the state
    entry.status = 'started';
    if ((entry.approval !== undefined || run.resumed) && run.commit !== undefined) {
      await claim(run, entry, call, run.commit);
      committed = true;
    }
    // A call held for approval keeps the key of the turn that held it (else: the run's next).
    const answer = await runToolCall(run, agent, call, abortSignal, undefined, entry.approval?.idempotencyKey);
    if (answer === undefined) throw abortedError(abortSignal); // stays `started`: its outcome is unknown
    settle(entry, answer);
  }
  return committed;
}

/** Commits the state with every call of `batch` answered (the batch still held in it); if that fails, the run fails. */
async function commitDecisions(run: Run, batch: CrewToolBatch, commit: NonNullable<Run['commit']>): Promise<void> {
  try {
    await commit(stateOf(run, undefined, true));
  } catch (error) {
    if (isAborted(run.abortSignal)) throw abortedError(run.abortSignal);
    throw new CrewRunError({
      code: 'CREW_COMMIT_FAILED',
      message: `Could not commit the decided approvals of agent ${JSON.stringify(batch.agentId)}'s tool calls, so the run did not go on: commit rejected with ${errorText(error)}`,
      state: stateOf(run),
      agentId: batch.agentId,
      cause: error,
    });
  }
  if (isAborted(run.abortSignal)) throw abortedError(run.abortSignal);
}

/** Makes the claim on `entry` durable; if that fails, the claim is withdrawn and the run fails. */
async function claim(
  run: Run,
  entry: CrewBatchCall,
  call: ToolCall,
  commit: NonNullable<Run['commit']>,
): Promise<void> {
  try {
    await commit(stateOf(run, undefined, true));
  } catch (error) {
    entry.status = 'approved'; // the tool did not run
    if (isAborted(run.abortSignal)) throw abortedError(run.abortSignal);
    const which =
      entry.approval === undefined
        ? `call ${JSON.stringify(call.id)}`
        : `approval ${JSON.stringify(entry.approval.id)}`;
    throw new CrewRunError({
      code: 'CREW_COMMIT_FAILED',
      message: `Could not commit the claim of tool call ${JSON.stringify(call.name)} (${which}), so the tool did not run: commit rejected with ${errorText(error)}`,
      state: stateOf(run),
      agentId: (run.approvals.batch as CrewToolBatch).agentId,
      cause: error,
    });
  }
  if (isAborted(run.abortSignal)) {
    entry.status = 'approved'; // committed as started, but the tool did not run
    throw abortedError(run.abortSignal);
  }
}
