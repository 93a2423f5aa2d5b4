import {
  describeValue,
  isSignalKind,
  signal as makeSignal,
  type ApprovalDecision,
  type Signal,
} from '@signalyard/core';
import { approverProblem, decisionsProblem, toolApprovalPayloadProblem } from './approvals.js';
import type { RunnerError } from './errors/runner-error.js';
import { inputError } from './outcomes.js';
import type { InboundMessage } from './runner-api.js';
import { OPTIONS, optionsProblem } from './runner-input.js';

// What the entry points (`handle`, `dispatch`, `approve`) check before a signal is queued, as
// errors the runner rejects with (never thrown: a bad call is a rejected promise), and the
// signal `approve` builds.

/** `approve()`'s options, approver and decisions: the first problem as `RUNNER_INPUT_INVALID`. @internal */
export function approvalProblem(
  decisions: readonly ApprovalDecision[],
  opts: { by?: string; abortSignal?: AbortSignal },
): RunnerError | undefined {
  const badOptions = optionsProblem(OPTIONS.approve, opts);
  if (badOptions !== undefined) return badOptions;
  const problem = approverProblem(opts.by) ?? decisionsProblem(decisions);
  return problem === undefined ? undefined : inputError(`approve() got ${problem}`);
}

/** The `tool_approval` signal `approve()` dispatches: copies of checked decisions, and the approver. @internal */
export function approvalSignal(decisions: readonly ApprovalDecision[], by: string | undefined): Signal {
  const copies = decisions.map((d): ApprovalDecision =>
    d.reason === undefined ? { id: d.id, approved: d.approved } : { id: d.id, approved: d.approved, reason: d.reason },
  );
  const payload = by === undefined ? { decisions: copies } : { decisions: copies, by };
  return makeSignal('tool_approval', payload);
}

/** `handle()`'s message: not an object with a `text` string is `RUNNER_INPUT_INVALID`. @internal */
export function messageProblem(message: InboundMessage): RunnerError | undefined {
  if (typeof message !== 'object' || (message as unknown) === null || typeof message.text !== 'string') {
    return inputError(`handle() needs a message { channel, text, ... }, got ${describeValue(message)}`);
  }
  return undefined;
}

/**
 * `dispatch()`'s signal: not a `Signal` of a known kind, or a `tool_approval` with a malformed
 * payload, is `RUNNER_INPUT_INVALID`. @internal
 */
export function dispatchedSignalProblem(signal: Signal): RunnerError | undefined {
  if (
    typeof signal !== 'object' ||
    (signal as unknown) === null ||
    !isSignalKind((signal as { kind?: unknown }).kind)
  ) {
    return inputError(`dispatch() needs a Signal { kind, payload }, got ${describeValue(signal)}`);
  }
  if (signal.kind === 'tool_approval') {
    const problem = toolApprovalPayloadProblem(signal.payload);
    if (problem !== undefined) return inputError(`A tool_approval signal has ${problem}`);
  }
  return undefined;
}
