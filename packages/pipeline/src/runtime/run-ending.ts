import type { CompiledTarget } from '../definition/compiled-pipeline.js';
import type { Interrupt, InterruptKind } from '../envelope/interrupt.js';
import type { TerminalReason } from '../envelope/terminal-reason.js';
import { messageOf } from '../shared/error-message.js';
import type { RunScope } from './run-scope.js';
import { terminate } from './run-state.js';

// How a run ends when something refuses to let it go on, shared by the sequential and the DAG
// loop: the precedence is cancellation, then a refused step (edge limit, iterations, hops), then
// a refused model call, then a refused tool call.

/** A bound that refuses a step, and where the run ends because of it. @internal */
export interface Refusal {
  readonly reason: TerminalReason;
  readonly message: string;
  /** The run's `currentStage` once it has ended. */
  readonly at: string;
}

/** Why the transition to `t` is refused, if it is: edge limit, then iterations, then hops. @internal */
export function refuse(scope: RunScope, t: CompiledTarget): Refusal | undefined {
  const st = scope.state;
  if (t.edgeLimit !== Infinity && (st.edgeTraversals[t.edgeKey] ?? 0) + 1 > t.edgeLimit) {
    return { reason: 'max_loop_exceeded', message: `edge limit exceeded: ${t.edgeKey}`, at: t.name };
  }
  if (t.loopBack && st.iteration + 1 > scope.maxIterations) {
    return {
      reason: 'max_iterations_exceeded',
      message: `max iterations exceeded: ${scope.maxIterations} (at ${t.edgeKey})`,
      at: t.name,
    };
  }
  if (st.agentHops + 1 > scope.maxAgentHops) {
    return {
      reason: 'max_agent_hops_exceeded',
      message: `max agent hops exceeded: ${scope.maxAgentHops} (at ${t.edgeKey})`,
      at: t.name,
    };
  }
  return undefined;
}

/** The refusal of one more stage execution by `maxAgentHops`, if it would exceed it. @internal */
export function refuseHop(scope: RunScope, at: string): Refusal | undefined {
  return hopWouldExceed(scope) ? hopsRefusal(scope, at) : undefined;
}

/** One more stage execution would exceed `maxAgentHops`. @internal */
export function hopWouldExceed(scope: RunScope): boolean {
  return scope.state.agentHops + 1 > scope.maxAgentHops;
}

/** `maxAgentHops` refused a stage execution; the run ends at `at`. @internal */
export function hopsRefusal(scope: RunScope, at: string): Refusal {
  return { reason: 'max_agent_hops_exceeded', message: `max agent hops exceeded: ${scope.maxAgentHops}`, at };
}

/**
 * Ends the run when it must stop, in precedence order: cancelled (the run's `currentStage`
 * becomes `cancelAt`), a refused step (`refusal`), a refused model call, a refused tool call
 * (both at `at`). Returns true when it ended the run.
 * @internal
 */
export function endIfStopped(scope: RunScope, at: string, cancelAt: string, refusal: Refusal | undefined): boolean {
  if (scope.signal.aborted) {
    cancel(scope, cancelAt);
    return true;
  }
  if (refusal !== undefined) {
    terminate(scope.state, refusal.reason, refusal.message, refusal.at);
    return true;
  }
  if (scope.llmRefused) {
    terminate(scope.state, 'max_llm_calls_exceeded', `max llm calls exceeded: ${scope.maxLlmCalls}`, at);
    return true;
  }
  if (scope.toolRefused) {
    terminate(scope.state, 'max_tool_calls_exceeded', `max tool calls exceeded: ${scope.maxToolCalls}`, at);
    return true;
  }
  return false;
}

/** Ends a cancelled run: `timeout_exceeded` when the run's own deadline fired, else `user_cancelled`. @internal */
export function cancel(scope: RunScope, stage: string): void {
  const reason: unknown = scope.signal.reason;
  if (scope.timedOut) terminate(scope.state, 'timeout_exceeded', messageOf(reason), stage);
  else terminate(scope.state, 'user_cancelled', `cancelled: ${messageOf(reason)}`, stage);
}

/** A new interrupt raised by `stage` at `at` (ISO 8601), expiring per the pipeline's `interruptTtlMs`. @internal */
export function newInterrupt(
  scope: RunScope,
  kind: InterruptKind,
  stage: string,
  payload: unknown,
  at: string,
): Interrupt {
  const id = crypto.randomUUID();
  const interrupt: Interrupt =
    payload === undefined ? { id, kind, stage, createdAt: at } : { id, kind, stage, payload, createdAt: at };
  const ttl = scope.pipeline.interruptTtlMs[kind];
  if (ttl !== undefined) interrupt.expiresAt = new Date(Date.parse(at) + ttl).toISOString();
  return interrupt;
}

/** Pauses the run on `interrupt` (the run is not terminated; `resume` continues it). @internal */
export function pause(scope: RunScope, interrupt: Interrupt): void {
  scope.state.interrupt = interrupt;
  if (scope.emit !== undefined) scope.emit({ type: 'interrupt', interrupt });
}
