import { describeValue, type Clock } from '@signalyard/core';
import type { CompiledPipeline, CompiledStage } from '../definition/compiled-pipeline.js';
import { Envelope } from '../envelope/envelope.js';
import type { Interrupt, InterruptResponse, ResolvedInterrupt } from '../envelope/interrupt.js';
import { parseResponseArgument } from '../envelope/interrupt-response.js';
import { PipelineStateError } from '../errors/pipeline-state-error.js';
import { PipelineUsageError } from '../errors/pipeline-usage-error.js';
import { messageOf } from '../shared/error-message.js';
import { frozenCopy, isoAt, readClock } from '@signalyard/core/internal';
import { checkDagEnvelope, NEW_DAG_RUN, type DagStart } from './dag/dag-start.js';
import { runControlOf, type RunControl } from './run-control.js';
import { newRunState, runStateFrom, terminate, type RunState } from './run-state.js';
import { parseResumeOptions, parseRunOptions, type ResumeOptions } from './runtime-options.js';
import type { StartPoint } from './sequential-loop.js';

/** A run ready to execute: its state, where it starts, and its options. @internal */
export interface PreparedRun {
  readonly state: RunState;
  /** `undefined`: the run already ended (a denied confirmation). */
  readonly start: StartPoint | DagStart | undefined;
  readonly opts: ResumeOptions;
  readonly control: RunControl | undefined;
  /** Where the run reads the time: the control's clock (a kernel's), else the runtime's. */
  readonly clock: Clock;
}

/**
 * A new run of `input` from the first stage (or as a DAG). The run holds a deep, frozen copy of
 * `input`: neither the caller nor a stage can change it afterwards.
 * @throws PipelineUsageError `PIPELINE_ARGUMENT_INVALID` for malformed options, or an input that
 *   cannot be copied (reading it throws).
 * @internal
 */
export function prepareRun(
  pipeline: CompiledPipeline,
  input: unknown,
  opts: unknown,
  traceCap: number,
  clock: Clock,
): PreparedRun {
  const o = parseRunOptions(opts);
  const mode = o.mode ?? 'sequential';
  const first = pipeline.stages[0] as CompiledStage;
  const state = newRunState(o.envelopeId ?? crypto.randomUUID(), copyInput(input), mode, first.name, traceCap);
  const control = runControlOf(opts);
  const start = mode === 'parallel' ? NEW_DAG_RUN : { stage: first };
  return { state, start, opts: o, control, clock: control?.clock ?? clock };
}

/**
 * The continuation of `envelope`, paused on an interrupt, with the answer `response`: a new
 * state (the envelope is not changed) with the interrupt resolved, and where the run goes on.
 *
 * @throws PipelineUsageError `PIPELINE_ENVELOPE_INVALID` / `PIPELINE_ARGUMENT_INVALID`;
 *   PipelineStateError `NO_PENDING_INTERRUPT` / `INTERRUPT_EXPIRED` (see `PipelineRuntime.resume`).
 * @internal
 */
export function prepareResume(
  pipeline: CompiledPipeline,
  envelope: Envelope,
  response: InterruptResponse,
  opts: unknown,
  traceCap: number,
  runtimeClock: Clock,
): PreparedRun {
  if (!Envelope.isInstance(envelope)) {
    throw new PipelineUsageError({
      code: 'PIPELINE_ENVELOPE_INVALID',
      argument: 'envelope',
      message: `Cannot resume ${describeValue(envelope)}: expected an Envelope (Envelope.fromJSON rebuilds one from its JSON)`,
    });
  }
  const answer = parseResponseArgument(response, 'response');
  const o = parseResumeOptions(opts);
  const interrupt = pendingInterrupt(envelope);
  const raising = pipeline.byName.get(interrupt.stage);
  if (raising === undefined) {
    throw new PipelineUsageError({
      code: 'PIPELINE_ENVELOPE_INVALID',
      argument: 'envelope.interrupt.stage',
      message: `Cannot resume envelope ${JSON.stringify(envelope.id)}: its interrupt was raised by stage ${JSON.stringify(interrupt.stage)}, which pipeline ${JSON.stringify(pipeline.name)} does not have`,
    });
  }
  if (envelope.mode === 'parallel') checkDagEnvelope(pipeline, envelope);
  const control = runControlOf(opts);
  const clock = control?.clock ?? runtimeClock;
  const now = readClock(clock);
  checkNotExpired(envelope.id, interrupt, `Cannot resume envelope ${JSON.stringify(envelope.id)}`, now);

  const state = runStateFrom(envelope, traceCap);
  const resolved: ResolvedInterrupt = { ...interrupt, response: answer, resolvedAt: isoAt(now) };
  state.interrupt = undefined;
  state.resolvedInterrupts.push(resolved);
  if (interrupt.kind === 'confirmation' && answer.approved !== true) {
    terminate(state, 'user_denied', `confirmation denied at stage ${JSON.stringify(raising.name)}`, raising.name);
    return { state, start: undefined, opts: o, control, clock };
  }
  return { state, start: resumeStart(pipeline, envelope, interrupt, raising, answer), opts: o, control, clock };
}

/** A deep, frozen copy of a run's input. @throws PipelineUsageError `PIPELINE_ARGUMENT_INVALID` when reading it throws. */
function copyInput(input: unknown): unknown {
  try {
    return frozenCopy(input);
  } catch (error) {
    throw new PipelineUsageError({
      code: 'PIPELINE_ARGUMENT_INVALID',
      argument: 'input',
      message: `Invalid input ${describeValue(input)}: copying it threw: ${messageOf(error)}`,
    });
  }
}

/** The interrupt `envelope` is paused on. @throws PipelineStateError `NO_PENDING_INTERRUPT` when there is none. */
function pendingInterrupt(envelope: Envelope): Interrupt {
  const interrupt = envelope.interrupt;
  if (interrupt !== undefined) return interrupt;
  const why = envelope.terminated
    ? `it is terminated (${envelope.terminalReason ?? 'unknown'})`
    : 'it is not paused on an interrupt';
  throw new PipelineStateError({
    code: 'NO_PENDING_INTERRUPT',
    envelopeId: envelope.id,
    message: `Cannot resume envelope ${JSON.stringify(envelope.id)}: ${why}`,
  });
}

/**
 * Throws when `interrupt` has expired (its `expiresAt` is not after `now`, ms since the epoch).
 * @throws PipelineStateError `INTERRUPT_EXPIRED`, its message starting with `what`.
 * @internal
 */
export function checkNotExpired(envelopeId: string, interrupt: Interrupt, what: string, now: number): void {
  if (interrupt.expiresAt !== undefined && now >= Date.parse(interrupt.expiresAt)) {
    throw new PipelineStateError({
      code: 'INTERRUPT_EXPIRED',
      envelopeId,
      interruptId: interrupt.id,
      expiresAt: interrupt.expiresAt,
      message: `${what}: its ${interrupt.kind} interrupt expired at ${interrupt.expiresAt}`,
    });
  }
}

/** Where a resumed run continues: the DAG from where it stood, or the configured resume stage (else the raising one). */
function resumeStart(
  pipeline: CompiledPipeline,
  envelope: Envelope,
  interrupt: Interrupt,
  raising: CompiledStage,
  answer: InterruptResponse,
): StartPoint | DagStart {
  const configured =
    interrupt.kind === 'clarification'
      ? pipeline.clarificationResumeStage
      : interrupt.kind === 'confirmation'
        ? pipeline.confirmationResumeStage
        : undefined;
  if (envelope.mode === 'parallel') {
    return {
      mode: 'parallel',
      resumed: { stage: raising, response: answer },
      ignoredResumeStage: configured === raising ? undefined : configured?.name,
    };
  }
  const stage = configured ?? raising;
  return stage === raising
    ? { stage, response: answer }
    : { stage, response: answer, via: pipeline.targetBetween(raising, stage.name) };
}
