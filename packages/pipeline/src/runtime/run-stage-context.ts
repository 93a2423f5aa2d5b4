import { frozenCopy } from '@signalyard/core/internal';
import type { ChatModel, ChatRequest, ChatResponse } from '@signalyard/core';
import { describeValue } from '@signalyard/core';
import type { StageContext } from '../definition/stage-context.js';
import type { PipelineEvent } from './pipeline-event.js';
import type { Envelope } from '../envelope/envelope.js';
import { INTERRUPT_KINDS, isInterruptKind, type InterruptKind, type InterruptResponse } from '../envelope/interrupt.js';
import { PipelineBoundError } from '../errors/pipeline-bound-error.js';
import { PipelineStageError } from '../errors/pipeline-stage-error.js';
import { PipelineUsageError } from '../errors/pipeline-usage-error.js';
import { messageOf } from '../shared/error-message.js';
import { countingModel } from './counting-model.js';
import type { RunScope } from './run-scope.js';
import { outputsView, snapshotEnvelope } from './run-state.js';

/** The interrupt a stage raised with `ctx.interrupt`. @internal */
export interface RaisedInterrupt {
  readonly kind: InterruptKind;
  readonly payload: unknown;
}

/**
 * The {@link StageContext} each stage execution receives (in either mode). Cheap to create:
 * the model wrapper and the envelope snapshot are built only when a stage asks for them.
 * @internal
 */
export class RunStageContext implements StageContext {
  readonly stage: string;
  readonly input: unknown;
  readonly abortSignal: AbortSignal;
  readonly response: InterruptResponse | undefined;
  /** Set by `interrupt()`; the engine pauses the run when it is set, even if the stage caught the throw. */
  raised: RaisedInterrupt | undefined = undefined;
  readonly #scope: RunScope;
  #outputs: Readonly<Record<string, unknown>> | undefined;
  #model: Required<ChatModel> | undefined = undefined;
  /** False once the stage's execution has ended: deltas read after that are not events of it. */
  #running = true;
  #envelope: Envelope | undefined = undefined;

  constructor(scope: RunScope, stage: string, abortSignal: AbortSignal, response: InterruptResponse | undefined) {
    this.#scope = scope;
    this.stage = stage;
    this.input = scope.state.input;
    this.abortSignal = abortSignal;
    this.response = response;
  }

  get outputs(): Readonly<Record<string, unknown>> {
    // A frozen copy of the record as it stands at the first read (its values are frozen all the
    // way down): a stage must not write into the run's state. Stages that read between two
    // stored outputs share one copy.
    this.#outputs ??= outputsView(this.#scope.state);
    return this.#outputs;
  }

  get envelope(): Envelope {
    return (this.#envelope ??= snapshotEnvelope(this.#scope.state));
  }

  get model(): Required<ChatModel> | undefined {
    const scope = this.#scope;
    if (scope.model === undefined) return undefined;
    if (this.#model !== undefined) return this.#model;
    const emit = scope.emit;
    const stage = this.stage;
    const onDelta =
      emit === undefined
        ? undefined
        : (delta: string): void => {
            if (this.#running) emit({ type: 'stage_delta', stage, delta });
          };
    const onResponse =
      emit === undefined
        ? undefined
        : (request: ChatRequest, response: ChatResponse): void => {
            if (!this.#running) return;
            const event: PipelineEvent = {
              type: 'stage_model_response',
              stage,
              agentId: request.agentId ?? stage,
              response,
            };
            // The request rides along non-enumerably (for a recorder; serialized events leave it out).
            Object.defineProperty(event, 'request', { value: request });
            emit(event);
          };
    return (this.#model = countingModel(scope, scope.model, stage, this.abortSignal, onDelta, onResponse));
  }

  /** The stage's execution ended: its `stage_end` comes next, so no later delta is reported as its. */
  end(): void {
    this.#running = false;
  }

  interrupt(kind: InterruptKind, payload?: unknown): never {
    if (!isInterruptKind(kind)) {
      throw new PipelineUsageError({
        code: 'PIPELINE_ARGUMENT_INVALID',
        argument: 'kind',
        message: `Stage ${JSON.stringify(this.stage)} raised an interrupt of unknown kind ${describeValue(kind)}: expected one of ${INTERRUPT_KINDS.join(', ')}`,
      });
    }
    let copy: unknown;
    try {
      copy = frozenCopy(payload);
    } catch (error) {
      throw new PipelineUsageError({
        code: 'PIPELINE_ARGUMENT_INVALID',
        argument: 'payload',
        message: `Stage ${JSON.stringify(this.stage)} raised a ${kind} interrupt with a payload that cannot be copied: ${messageOf(error)}`,
      });
    }
    this.raised ??= { kind, payload: copy };
    throw new PipelineStageError({
      code: 'PIPELINE_INTERRUPTED',
      stage: this.stage,
      message: `Stage ${JSON.stringify(this.stage)} raised a ${kind} interrupt; the run pauses after it`,
    });
  }

  countToolCall(n = 1): void {
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
      throw new PipelineUsageError({
        code: 'PIPELINE_ARGUMENT_INVALID',
        argument: 'n',
        message: `Invalid tool call count ${describeValue(n)} from stage ${JSON.stringify(this.stage)}: expected a non-negative integer`,
      });
    }
    const scope = this.#scope;
    if (scope.toolCalls.used + n > scope.maxToolCalls) {
      scope.toolRefused = true;
      throw new PipelineBoundError({ bound: 'maxToolCalls', limit: scope.maxToolCalls, stage: this.stage });
    }
    scope.toolCalls.used += n;
  }
}
