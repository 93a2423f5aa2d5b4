import { describeValue, type ChatModel, type Clock } from '@signalyard/core';
import {
  Envelope,
  PipelineRuntime,
  type Interrupt,
  type InterruptResponse,
  type Pipeline,
  type PipelineEvent,
} from '@signalyard/pipeline';
import type { Engine, TurnContext, TurnResult } from './engine.js';
import { forwardedEvent } from './forwarded-event.js';
import { RunnerError } from './errors/runner-error.js';

/** Options of {@link pipelineEngine}. */
export interface PipelineEngineOptions {
  /** The model stages reach as `ctx.model` (every call counted toward `maxLlmCalls`). */
  model?: ChatModel;
  /** Turns a user's reply into the response to the pending interrupt. Default: {@link defaultInterruptResponse}. */
  toResponse?: (text: string, interrupt: Interrupt) => InterruptResponse;
  /**
   * The assistant message for a turn. Default: the JSON of the last output — while paused, the
   * pending interrupt's payload (what the stage asked); otherwise the output of the last stage that ran.
   */
  render?: (envelope: Envelope) => string;
  /**
   * The clock the pipeline's times (trace, interrupts, resolutions) are read from. Default: the
   * runner's (`TurnContext.clock`, from `createRunner({ clock })`), so a runner driven by a test
   * clock saves pipeline envelopes stamped with it (decisions-wave3 §10).
   */
  clock?: Clock;
}

const YES = new Set(['y', 'yes', 'ok', 'approve', 'approved', 'confirm']);

/**
 * The default `toResponse` of {@link pipelineEngine}: a clarification is answered with
 * `{ text }`; a confirmation with `{ approved }`, true for `y`, `yes`, `ok`, `approve`,
 * `approved`, `confirm` (case-insensitive, trimmed) and false otherwise; any other interrupt
 * kind with `{ text }`.
 */
export function defaultInterruptResponse(text: string, interrupt: Interrupt): InterruptResponse {
  if (interrupt.kind === 'confirmation') return { approved: YES.has(text.trim().toLowerCase()) };
  return { text };
}

/**
 * An {@link Engine} that runs a pipeline per turn. Its engine state is the paused envelope's
 * JSON (or nothing). A `user_message` with no pending interrupt starts a run with input
 * `{ text, sessionKey }`; with one, it resumes that run with `toResponse(text, interrupt)`. The
 * turn's `messages` is one assistant message from `render`; `status` is `paused` while an
 * interrupt is pending; `output` is the `Envelope`. Pipeline events are forwarded with
 * `ctx.emit`, except the text of streaming stages (`stage_delta`), which goes through
 * `ctx.emitText` with `{ stage }` (a streamed turn's `text_delta`s). `diagrams()` draws the pipeline (`pipeline.toMermaid()`).
 *
 * @example
 * ```ts
 * const review = definePipeline({ name: 'review', stages: [...] });
 * const runner = createRunner({ agents: [{ id: 'reviewer', engine: pipelineEngine(review) }] });
 * ```
 */
export function pipelineEngine(pipeline: Pipeline, opts: PipelineEngineOptions = {}): Engine {
  const runtimeOf = runtimes(pipeline, opts);
  const toResponse = opts.toResponse ?? defaultInterruptResponse;
  const render = opts.render ?? renderLastOutput(pipeline);
  let mermaid: string | undefined;
  return {
    async turn(ctx: TurnContext): Promise<TurnResult> {
      const text = textOf(ctx);
      const runtime = runtimeOf(ctx.clock);
      const paused = ctx.state === undefined || ctx.state === null ? undefined : Envelope.fromJSON(ctx.state);
      let events: AsyncIterable<PipelineEvent>;
      if (paused?.interrupt !== undefined && !paused.terminated) {
        events = runtime.resumeStream(paused, toResponse(text, paused.interrupt), { abortSignal: ctx.abortSignal });
      } else {
        events = runtime.stream({ text, sessionKey: ctx.sessionKey }, { abortSignal: ctx.abortSignal });
      }
      let envelope: Envelope | undefined;
      for await (const event of events) {
        if (event.type === 'end') envelope = event.envelope;
        else if (event.type === 'stage_delta') ctx.emitText(event.delta, { stage: event.stage });
        else ctx.emit(forwardedEvent(event));
      }
      if (envelope === undefined) {
        throw new RunnerError({
          code: 'ENGINE_FAILED',
          message: `Pipeline "${pipeline.name}" ended without an envelope`,
        });
      }
      const pending = envelope.interrupt !== undefined && !envelope.terminated;
      return {
        output: envelope,
        messages: [{ role: 'assistant', content: render(envelope) }],
        state: pending ? envelope.toJSON() : undefined,
        status: pending ? 'paused' : 'completed',
      };
    },
    diagrams: () => {
      mermaid ??= pipeline.toMermaid();
      return { pipeline: mermaid };
    },
  };
}

/**
 * The pipeline's runtime for a turn: one per clock (the option's, else the runner's, else the
 * system clock), made on first use. Bad options fail here, when the engine is made.
 */
function runtimes(pipeline: Pipeline, opts: PipelineEngineOptions): (clock: Clock | undefined) => PipelineRuntime {
  const make = (clock: Clock | undefined): PipelineRuntime =>
    new PipelineRuntime(pipeline, {
      ...(opts.model !== undefined && { model: opts.model }),
      ...(clock !== undefined && { clock }),
    });
  const fixed = opts.clock === undefined ? undefined : make(opts.clock);
  const system = fixed ?? make(undefined);
  const byClock = new WeakMap<Clock, PipelineRuntime>();
  return (clock) => {
    if (fixed !== undefined || clock === undefined) return system;
    let runtime = byClock.get(clock);
    if (runtime === undefined) {
      runtime = make(clock);
      byClock.set(clock, runtime);
    }
    return runtime;
  };
}

/**
 * The default render: the JSON of the last output — the pending interrupt's payload while
 * paused, else the output of the last stage that ran (`{}` before any has).
 */
function renderLastOutput(pipeline: Pipeline): (envelope: Envelope) => string {
  const keys = new Map(pipeline.stages.map((s) => [s.name, s.outputKey ?? s.name]));
  return (envelope) => {
    if (envelope.interrupt !== undefined && !envelope.terminated)
      return JSON.stringify(envelope.interrupt.payload ?? {});
    const last = envelope.trace[envelope.trace.length - 1];
    if (last === undefined) return '{}';
    return JSON.stringify(envelope.outputs[keys.get(last.stage) ?? last.stage] ?? {});
  };
}

function textOf(ctx: TurnContext): string {
  const payload = ctx.signal.payload;
  if (typeof payload === 'string') return payload;
  if (typeof payload === 'object' && payload !== null && typeof (payload as { text?: unknown }).text === 'string') {
    return (payload as { text: string }).text;
  }
  const last = [...ctx.history].reverse().find((m) => m.role === 'user');
  if (last !== undefined) return last.content;
  throw new RunnerError({
    code: 'ENGINE_FAILED',
    message: `pipelineEngine needs a user message with text; got a ${ctx.signal.kind} signal with payload ${describeValue(payload)}`,
  });
}
