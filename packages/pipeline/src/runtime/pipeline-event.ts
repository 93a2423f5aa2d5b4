import type { ChatRequest, ChatResponse } from '@signalyard/core';
import type { Envelope } from '../envelope/envelope.js';
import type { Interrupt } from '../envelope/interrupt.js';

/**
 * One event of `PipelineRuntime.stream` / `resumeStream`, discriminated by `type`.
 *
 * - `stage_start` / `stage_end`: a stage ran. `next` is where routing sent the run (`end` for a
 *   failure without `errorNext`, the interrupt kind for `ctx.interrupt`); a bound may still
 *   refuse that step, which the final envelope records. In DAG mode (which does not route)
 *   `next` is `end`, or the interrupt kind for `ctx.interrupt`; concurrent stages' events
 *   interleave.
 * - `stage_delta`: a piece of model text the stage read from `ctx.model.stream(...)`, in order,
 *   before that stage's `stage_end` (deltas read after the stage ended are not reported).
 *   Concurrent stages' deltas interleave in DAG mode; `stage` tells them apart.
 * - `stage_model_response`: a model call a stage made through `ctx.model` answered (for a
 *   stream, once it finished), before that stage's `stage_end`: what a recorder
 *   (`@signalyard/replay`'s `cassetteRecorder`) keeps to replay the stage offline.
 * - `interrupt`: the run paused on this interrupt.
 * - `warning`: something the caller should know that did not stop the run (in DAG mode: routing
 *   settings it ignores, an ordering cycle in `after` it broke, a second interrupt it deferred).
 * - `end`: always the last event, also when the run paused or was terminated.
 */
export type PipelineEvent =
  | {
      /** A stage starts. */
      type: 'stage_start';
      /** The stage. */
      stage: string;
    }
  | {
      /** A piece of a streaming stage's model reply. */
      type: 'stage_delta';
      /** The stage. */
      stage: string;
      /** The text to append. */
      delta: string;
    }
  | {
      /** A stage's model call answered. */
      type: 'stage_model_response';
      /** The stage. */
      stage: string;
      /** The request's `agentId` (the stage's name unless the stage set one). */
      agentId: string;
      /** The model's whole response. */
      response: ChatResponse;
      /**
       * The request the model answered, exactly as the stage sent it. Set non-enumerably: a
       * listener that records calls (`@signalyard/replay`'s `cassetteRecorder`) reads it;
       * serialized events leave it out. Read it, never change it.
       */
      readonly request?: ChatRequest;
    }
  | {
      /** A stage ended. */
      type: 'stage_end';
      /** The stage. */
      stage: string;
      /** Its output. */
      output: Record<string, unknown>;
      /** Whether it failed. */
      failed: boolean;
      /** Where the run goes next. */
      next: string;
    }
  | {
      /** The run paused on an interrupt. */
      type: 'interrupt';
      /** What it waits on. */
      interrupt: Interrupt;
    }
  | {
      /** Something was ignored. */
      type: 'warning';
      /** What. */
      message: string;
    }
  | {
      /** The run ended or paused: always the last event. */
      type: 'end';
      /** The envelope as the run left it. */
      envelope: Envelope;
    };
