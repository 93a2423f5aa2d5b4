import { describeValue } from '@signalyard/core';
import type { StageErrorRecord } from './envelope.js';
import type { Interrupt, InterruptKind, InterruptResponse } from './interrupt.js';
import { isoNow } from './iso-now.js';
import type { CompiledStage, CompiledTarget } from './pipeline.js';
import { PipelineStageError } from './pipeline-stage-error.js';
import { ruleValuesEqual } from './rule-equality.js';
import type { RunScope } from './run-scope.js';
import { RunStageContext } from './run-stage-context.js';
import { terminate } from './run-state.js';
import type { TerminalReason } from './terminal-reason.js';

/** Where a sequential run (re)starts. @internal */
export interface StartPoint {
  readonly stage: CompiledStage;
  /** The answer the first stage sees as `ctx.response` (after `resume`). */
  readonly response?: InterruptResponse | undefined;
  /** A transition into `stage` still to be checked against the bounds and counted (a configured resume stage). */
  readonly via?: CompiledTarget | undefined;
}

/** Why a stage failed. @internal */
export interface Failure {
  readonly message: string;
  readonly code: string | undefined;
}

interface Refusal {
  readonly reason: TerminalReason;
  readonly message: string;
}

/** @internal */
export type Settled =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: unknown }
  | { readonly ok: 'aborted' };

const ABORTED: Settled = Object.freeze({ ok: 'aborted' });
const EMPTY_OUTPUT: Record<string, unknown> = Object.freeze({});

/**
 * Runs stages one after another from `start` until the run completes, fails, pauses on an
 * interrupt, is refused by a bound, or is cancelled, updating `scope.state` as it goes. Never
 * throws for anything a stage does: every outcome is recorded in the state.
 *
 * Per step: cancellation is checked; the stage runs (racing its abort signal when it returns a
 * promise); its output is normalized; a failure (throw, timeout, invalid output, truthy `error`)
 * is recorded and routes to `errorNext`; otherwise the rules, then `defaultNext`, decide. A
 * transition is refused, in this order, by its edge limit, `maxIterations` (loop-backs) and
 * `maxAgentHops`; then a refused model or tool call ends the run; then an interrupt pauses it.
 * @internal
 */
export async function runSequential(scope: RunScope, start: StartPoint): Promise<void> {
  const st = scope.state;
  const signal = scope.signal;
  const emit = scope.emit;
  let stage = start.stage;
  let response = start.response;
  let checkEntryHop = true;

  if (start.via !== undefined) {
    const refusal = refuse(scope, start.via);
    if (refusal !== undefined) {
      terminate(st, refusal.reason, refusal.message, stage.name);
      return;
    }
    traverse(scope, start.via);
    checkEntryHop = false;
  }

  // The caller has checked cancellation before the first step; each step checks it at its end,
  // and nothing is awaited between a step's end and the next step's start.
  for (;;) {
    if (checkEntryHop) {
      if (st.agentHops + 1 > scope.maxAgentHops) {
        terminate(st, 'max_agent_hops_exceeded', `max agent hops exceeded: ${scope.maxAgentHops}`, stage.name);
        return;
      }
      checkEntryHop = false;
    }
    st.agentHops++;
    st.currentStage = stage.name;
    if (emit !== undefined) emit({ type: 'stage_start', stage: stage.name });
    const startedAt = isoNow();

    // ---- run the stage
    const deadline =
      stage.timeoutMs === undefined ? undefined : startStageDeadline(stage.name, stage.timeoutMs, signal);
    const stageSignal = deadline?.controller.signal ?? signal;
    const stageController = deadline?.controller;
    const ctx = new RunStageContext(scope, stage.name, stageSignal, response);
    response = undefined;
    // outcome: 'value' (in `value`), 'error' (in `value`) or 'aborted'; locals, so a synchronous
    // stage costs no allocation here
    let outcome: 'value' | 'error' | 'aborted';
    let value: unknown;
    try {
      value = stage.config.run(ctx);
      outcome = 'value';
      if (isThenable(value)) {
        const settled = await settle(value, stageSignal);
        outcome = settled.ok === true ? 'value' : settled.ok === false ? 'error' : 'aborted';
        value = settled.ok === true ? settled.value : settled.ok === false ? settled.error : undefined;
      }
    } catch (error) {
      outcome = 'error';
      value = error;
    }
    deadline?.clear();
    const endedAt = isoNow();

    // ---- cancelled while it ran, and the stage did not finish first
    if (outcome === 'aborted' && isAborted(signal)) {
      const reason: unknown = signal.reason;
      st.errors.push({ stage: stage.name, error: `aborted: ${messageOf(reason)}`, code: 'ABORTED', at: endedAt });
      st.trace.push({ stage: stage.name, startedAt, endedAt, next: 'end' });
      if (emit !== undefined)
        emit({ type: 'stage_end', stage: stage.name, output: EMPTY_OUTPUT, failed: true, next: 'end' });
      cancel(scope, stage.name);
      return;
    }

    // ---- outcome: output or failure
    let output = EMPTY_OUTPUT;
    let failure: Failure | undefined;
    const raised = ctx.raised;
    if (raised === undefined) {
      if (stageController?.signal.aborted === true) {
        failure = failureOf(stageController.signal.reason);
      } else if (outcome === 'value') {
        let normalized: Record<string, unknown> | undefined;
        let problem = 'expected a plain object or undefined';
        try {
          normalized = normalizeOutput(value);
        } catch (error) {
          problem = `reading it threw: ${messageOf(error)}`;
        }
        if (normalized === undefined) {
          failure = {
            message: `Stage ${JSON.stringify(stage.name)} returned ${safeDescribe(value)}: ${problem}`,
            code: 'PIPELINE_STAGE_OUTPUT_INVALID',
          };
        } else {
          output = normalized;
          st.outputs[stage.outputKey] = output;
          if (output.error) failure = outputFailure(output.error);
        }
      } else if (outcome === 'error') {
        failure = failureOf(value);
      }
    }

    // ---- routing
    let next: CompiledTarget | undefined;
    let nextName: string;
    if (raised !== undefined) {
      nextName = raised.kind;
    } else {
      if (failure === undefined) {
        try {
          next = route(stage, output);
        } catch (error) {
          failure = {
            message: `Routing after stage ${JSON.stringify(stage.name)} failed: ${messageOf(error)}`,
            code: 'PIPELINE_ROUTING_FAILED',
          };
        }
      }
      if (failure !== undefined) {
        const record: StageErrorRecord = { stage: stage.name, error: failure.message, at: endedAt };
        if (failure.code !== undefined) record.code = failure.code;
        st.errors.push(record);
        next = stage.errorTarget;
      } else if (!st.completed.has(stage.name)) {
        st.completed.add(stage.name);
        st.completedStages.push(stage.name);
      }
      nextName = next === undefined ? 'end' : next.name;
    }
    st.trace.push({ stage: stage.name, startedAt, endedAt, next: nextName });
    if (emit !== undefined)
      emit({ type: 'stage_end', stage: stage.name, output, failed: failure !== undefined, next: nextName });

    // ---- what ends the step, in precedence order: cancellation first
    if (isAborted(signal)) {
      cancel(scope, next?.stage === undefined ? stage.name : next.name);
      return;
    }
    if (next?.stage !== undefined) {
      const refusal = refuse(scope, next);
      if (refusal !== undefined) {
        terminate(st, refusal.reason, refusal.message, next.name);
        return;
      }
    }
    if (scope.llmRefused) {
      terminate(st, 'max_llm_calls_exceeded', `max llm calls exceeded: ${scope.maxLlmCalls}`, stage.name);
      return;
    }
    if (scope.toolRefused) {
      terminate(st, 'max_tool_calls_exceeded', `max tool calls exceeded: ${scope.maxToolCalls}`, stage.name);
      return;
    }
    if (raised !== undefined) {
      pause(scope, stage.name, raised.kind, raised.payload, endedAt);
      return;
    }
    if (next === undefined) {
      terminate(
        st,
        'stage_failed',
        `stage ${JSON.stringify(stage.name)} failed: ${(failure as Failure).message}`,
        stage.name,
      );
      return;
    }
    if (next.stage === undefined) {
      if (next.kind === 'end') {
        terminate(st, 'completed', undefined, 'end');
      } else {
        pause(scope, stage.name, next.name as InterruptKind, output, endedAt);
      }
      return;
    }
    traverse(scope, next);
    stage = next.stage;
  }
}

/** The first matching rule's target, else the default. Throws only if a getter in the output throws. */
function route(stage: CompiledStage, output: Record<string, unknown>): CompiledTarget {
  const rules = stage.rules;
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i] as (typeof rules)[number];
    if (Object.hasOwn(output, rule.condition) && ruleValuesEqual(output[rule.condition], rule.value))
      return rule.target;
  }
  return stage.defaultTarget;
}

/** Why the transition to `t` is refused, if it is: edge limit, then iterations, then hops. @internal */
export function refuse(scope: RunScope, t: CompiledTarget): Refusal | undefined {
  const st = scope.state;
  if (t.edgeLimit !== Infinity && (st.edgeTraversals[t.edgeKey] ?? 0) + 1 > t.edgeLimit) {
    return { reason: 'max_loop_exceeded', message: `edge limit exceeded: ${t.edgeKey}` };
  }
  if (t.loopBack && st.iteration + 1 > scope.maxIterations) {
    return {
      reason: 'max_iterations_exceeded',
      message: `max iterations exceeded: ${scope.maxIterations} (at ${t.edgeKey})`,
    };
  }
  if (st.agentHops + 1 > scope.maxAgentHops) {
    return {
      reason: 'max_agent_hops_exceeded',
      message: `max agent hops exceeded: ${scope.maxAgentHops} (at ${t.edgeKey})`,
    };
  }
  return undefined;
}

/** Counts the transition to `t`: its edge, and an iteration when it is a loop-back. */
function traverse(scope: RunScope, t: CompiledTarget): void {
  const st = scope.state;
  st.edgeTraversals[t.edgeKey] = (st.edgeTraversals[t.edgeKey] ?? 0) + 1;
  if (t.loopBack) st.iteration++;
}

function pause(scope: RunScope, stage: string, kind: InterruptKind, payload: unknown, at: string): void {
  const st = scope.state;
  const id = crypto.randomUUID();
  const interrupt: Interrupt =
    payload === undefined ? { id, kind, stage, createdAt: at } : { id, kind, stage, payload, createdAt: at };
  const ttl = scope.pipeline.interruptTtlMs[kind];
  if (ttl !== undefined) interrupt.expiresAt = new Date(Date.parse(at) + ttl).toISOString();
  st.interrupt = interrupt;
  st.currentStage = stage;
  if (scope.emit !== undefined) scope.emit({ type: 'interrupt', interrupt });
}

/** Ends a cancelled run: `timeout_exceeded` when the run's own deadline fired, else `user_cancelled`. @internal */
export function cancel(scope: RunScope, stage: string): void {
  const reason: unknown = scope.signal.reason;
  if (scope.timedOut) terminate(scope.state, 'timeout_exceeded', messageOf(reason), stage);
  else terminate(scope.state, 'user_cancelled', `cancelled: ${messageOf(reason)}`, stage);
}

/** Reads `signal.aborted` afresh (a function call, so no earlier narrowing of the property sticks). */
function isAborted(signal: AbortSignal): boolean {
  return signal.aborted;
}

/** @internal */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/** Waits for the stage's promise, or for `signal` to fire, whichever comes first. @internal */
export function settle(promise: PromiseLike<unknown>, signal: AbortSignal): Promise<Settled> {
  return new Promise<Settled>((resolve) => {
    const onAbort = (): void => {
      resolve(ABORTED);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve({ ok: true, value });
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        resolve({ ok: false, error });
      },
    );
  });
}

/**
 * A stage's return value as a frozen output record without `undefined` values; `undefined`
 * counts as `{}`; `undefined` is returned for anything that is not a plain object.
 * @internal
 */
export function normalizeOutput(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined) return EMPTY_OUTPUT;
  if (typeof value !== 'object' || value === null) return undefined;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return undefined;
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key in source) {
    if (!Object.hasOwn(source, key)) continue;
    const v = source[key];
    if (v === undefined) continue;
    if (key === '__proto__')
      Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
    else out[key] = v;
  }
  return Object.freeze(out);
}

/** @internal */
export function failureOf(error: unknown): Failure {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return { message: messageOf(error), code: typeof code === 'string' ? code : undefined };
}

/** The failure an output's truthy `error` field describes. @internal */
export function outputFailure(error: unknown): Failure {
  if (typeof error === 'string') return { message: error, code: undefined };
  if (error === true) return { message: 'the stage output has error: true', code: undefined };
  return failureOf(error);
}

/** A message for any thrown or reported value; never throws. */
export function messageOf(value: unknown): string {
  if (value instanceof Error) return value.message;
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null) {
    try {
      const message = (value as { message?: unknown }).message;
      if (typeof message === 'string') return message;
    } catch {
      // a throwing getter: fall through to the generic description
    }
  }
  return safeDescribe(value);
}

/** `describeValue`, never throwing. @internal */
export function safeDescribe(value: unknown): string {
  try {
    return describeValue(value);
  } catch {
    return typeof value;
  }
}

/** A stage's own deadline: a controller linked to the run's signal, aborted after `timeoutMs`. */
export interface StageDeadline {
  /** Aborted when the run is, or with `PIPELINE_STAGE_TIMEOUT` once the stage's time is up. */
  readonly controller: AbortController;
  /** Stops the timer and unlinks from the run's signal. */
  clear(): void;
}

/**
 * Starts a stage's `timeoutMs` deadline (setTimeout + AbortController, so fake timers work).
 * Shared by the sequential and DAG loops.
 */
export function startStageDeadline(stage: string, timeoutMs: number, runSignal: AbortSignal): StageDeadline {
  const controller = new AbortController();
  const onRunAbort = (): void => {
    controller.abort(runSignal.reason);
  };
  runSignal.addEventListener('abort', onRunAbort, { once: true });
  const timer = setTimeout(() => {
    controller.abort(
      new PipelineStageError({
        code: 'PIPELINE_STAGE_TIMEOUT',
        stage,
        message: `Stage ${JSON.stringify(stage)} timed out after ${timeoutMs} ms`,
      }),
    );
  }, timeoutMs);
  return {
    controller,
    clear() {
      clearTimeout(timer);
      runSignal.removeEventListener('abort', onRunAbort);
    },
  };
}
