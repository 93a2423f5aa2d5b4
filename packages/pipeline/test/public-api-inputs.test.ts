// Every public function of the package, called with values that are not a string, an object or
// a function where it expects one: each gives a typed SignalyardError with a stable code (a
// rejection for the async ones), never a TypeError; functions that accept any value (a run's
// input, `status(pid)`, the `isInstance` checks) accept these too.
import { describe, expect, it } from 'vitest';
import { isSignalyardError, type SignalyardError } from '@signalyard/core';
import {
  definePipeline,
  Envelope,
  isInterruptKind,
  isPriority,
  Kernel,
  KernelError,
  Pipeline,
  PipelineBoundError,
  PipelineConfigError,
  PipelineRuntime,
  PipelineStageError,
  PipelineStateError,
  PipelineUsageError,
  type StageContext,
} from '@signalyard/pipeline';
import { echoModel, stage } from './support.js';

const VALUES: readonly [string, unknown][] = [
  ['undefined', undefined],
  ['null', null],
  ['0', 0],
  ['-1', -1],
  ['NaN', Number.NaN],
  ['Infinity', Infinity],
  ['true', true],
  ['false', false],
  ['a bigint', 10n],
  ['a symbol', Symbol('s')],
];

// ---- what the calls work on
const pipeline = definePipeline({
  name: 'p',
  stages: [stage('a', { q: 1 }, { defaultNext: 'clarification' })],
});
const runtime = new PipelineRuntime(pipeline, { model: echoModel() });
const paused = await runtime.run(null);
let captured: StageContext | undefined;
await new PipelineRuntime(
  definePipeline({ name: 'ctx', stages: [{ name: 'a', run: (ctx) => ((captured = ctx), {}) }] }),
  { model: echoModel() },
).run(null);
const ctx = captured as StageContext;
const kernel = new Kernel();
kernel.registerService('s', runtime);
const waiting = kernel.submit(null);
const waitingEnv = await waiting.result;
let services = 0;

/**
 * A call and the code it gives for a bad value. `optional`: `undefined` is accepted (the argument
 * is optional); `valid`: the values it accepts; `iterate`: it returns an async iterable whose first
 * `next()` reports a bad argument.
 */
interface Row {
  readonly call: string;
  readonly run: (value: unknown) => unknown;
  /** The code, or `'accepts'`. */
  readonly code: string;
  readonly optional?: boolean;
  readonly valid?: readonly unknown[];
  readonly iterate?: boolean;
}

const rows: readonly Row[] = [
  { call: 'definePipeline(config)', run: (v) => definePipeline(v as never), code: 'CONFIG_INVALID' },
  {
    call: 'new PipelineRuntime(pipeline)',
    run: (v) => new PipelineRuntime(v as never),
    code: 'PIPELINE_ARGUMENT_INVALID',
  },
  {
    call: 'new PipelineRuntime(pipeline, options)',
    run: (v) => new PipelineRuntime(pipeline, v as never),
    code: 'PIPELINE_ARGUMENT_INVALID',
    optional: true,
  },
  { call: 'runtime.run(input)', run: (v) => runtime.run(v), code: 'accepts' },
  {
    call: 'runtime.run(input, opts)',
    run: (v) => runtime.run(null, v as never),
    code: 'PIPELINE_ARGUMENT_INVALID',
    optional: true,
  },
  {
    call: 'runtime.stream(input, opts)',
    run: (v) => runtime.stream(null, v as never),
    code: 'PIPELINE_ARGUMENT_INVALID',
    optional: true,
    iterate: true,
  },
  { call: 'runtime.resume(envelope)', run: (v) => runtime.resume(v as never, {}), code: 'PIPELINE_ENVELOPE_INVALID' },
  {
    call: 'runtime.resume(envelope, response)',
    run: (v) => runtime.resume(paused, v as never),
    code: 'PIPELINE_ARGUMENT_INVALID',
  },
  {
    call: 'runtime.resume(envelope, response, opts)',
    run: (v) => runtime.resume(paused, {}, v as never),
    code: 'PIPELINE_ARGUMENT_INVALID',
    optional: true,
  },
  {
    call: 'runtime.resumeStream(envelope)',
    run: (v) => runtime.resumeStream(v as never, {}),
    code: 'PIPELINE_ENVELOPE_INVALID',
    iterate: true,
  },
  {
    call: 'runtime.resumeStream(envelope, response)',
    run: (v) => runtime.resumeStream(paused, v as never),
    code: 'PIPELINE_ARGUMENT_INVALID',
    iterate: true,
  },
  { call: 'Envelope.fromJSON(json)', run: (v) => Envelope.fromJSON(v), code: 'PIPELINE_ENVELOPE_INVALID' },
  { call: 'Envelope.isInstance(value)', run: (v) => Envelope.isInstance(v), code: 'accepts' },
  { call: 'Pipeline.isInstance(value)', run: (v) => Pipeline.isInstance(v), code: 'accepts' },
  { call: 'isInterruptKind(value)', run: (v) => isInterruptKind(v), code: 'accepts' },
  { call: 'isPriority(value)', run: (v) => isPriority(v), code: 'accepts' },
  {
    call: 'the error classes’ isInstance(value)',
    run: (v) =>
      [
        KernelError,
        PipelineBoundError,
        PipelineConfigError,
        PipelineStageError,
        PipelineStateError,
        PipelineUsageError,
      ].map((c) => c.isInstance(v)),
    code: 'accepts',
  },
  { call: 'new Kernel(options)', run: (v) => new Kernel(v as never), code: 'KERNEL_ARGUMENT_INVALID', optional: true },
  {
    call: 'kernel.registerService(name)',
    run: (v) => kernel.registerService(v as never, runtime),
    code: 'KERNEL_ARGUMENT_INVALID',
  },
  {
    call: 'kernel.registerService(name, runtime)',
    run: (v) => kernel.registerService(`r${services++}`, v as never),
    code: 'KERNEL_ARGUMENT_INVALID',
  },
  {
    call: 'kernel.registerService(name, runtime, opts)',
    run: (v) => kernel.registerService(`o${services++}`, runtime, v as never),
    code: 'KERNEL_ARGUMENT_INVALID',
    optional: true,
  },
  { call: 'kernel.setHealth(name)', run: (v) => kernel.setHealth(v as never, true), code: 'KERNEL_UNKNOWN_SERVICE' },
  {
    call: 'kernel.setHealth(name, healthy)',
    run: (v) => kernel.setHealth('s', v as never),
    code: 'KERNEL_ARGUMENT_INVALID',
    valid: [true, false],
  },
  { call: 'kernel.submit(input)', run: (v) => kernel.submit(v), code: 'accepts' },
  {
    call: 'kernel.submit(input, opts)',
    run: (v) => kernel.submit(null, v as never),
    code: 'KERNEL_ARGUMENT_INVALID',
    optional: true,
  },
  { call: 'kernel.resume(pid)', run: (v) => kernel.resume(v as never, 'i', {}), code: 'KERNEL_UNKNOWN_PROCESS' },
  {
    call: 'kernel.resume(pid, interruptId)',
    run: (v) => kernel.resume(waiting.pid, v as never, {}),
    code: 'KERNEL_INTERRUPT_MISMATCH',
  },
  {
    call: 'kernel.resume(pid, interruptId, response)',
    run: (v) => kernel.resume(waiting.pid, waitingEnv.interrupt!.id, v as never),
    code: 'KERNEL_ARGUMENT_INVALID',
  },
  { call: 'kernel.cancel(pid)', run: (v) => kernel.cancel(v as never), code: 'KERNEL_UNKNOWN_PROCESS' },
  {
    call: 'kernel.cancel(pid, reason)',
    run: (v) => kernel.cancel(waiting.pid, v as never),
    code: 'KERNEL_ARGUMENT_INVALID',
    optional: true,
  },
  { call: 'kernel.status(pid)', run: (v) => kernel.status(v as never), code: 'accepts' },
  { call: 'kernel.envelope(pid)', run: (v) => kernel.envelope(v as never), code: 'accepts' },
  { call: 'kernel.on(listener)', run: (v) => kernel.on(v as never), code: 'KERNEL_ARGUMENT_INVALID' },
  {
    call: 'kernel.events(opts)',
    run: (v) => kernel.events(v as never),
    code: 'KERNEL_ARGUMENT_INVALID',
    optional: true,
  },
  { call: 'kernel.reap(pid)', run: (v) => kernel.reap(v as never), code: 'KERNEL_UNKNOWN_PROCESS' },
  { call: 'ctx.interrupt(kind)', run: (v) => ctx.interrupt(v as never), code: 'PIPELINE_ARGUMENT_INVALID' },
  {
    call: 'ctx.countToolCall(n)',
    run: (v) => ctx.countToolCall(v as never),
    code: 'PIPELINE_ARGUMENT_INVALID',
    optional: true,
    valid: [0],
  },
  {
    call: 'ctx.model.generate(request)',
    run: (v) => ctx.model!.generate(v as never),
    code: 'PIPELINE_ARGUMENT_INVALID',
  },
];

/** What the call gave: `'ok'`, or the SignalyardError it threw or rejected with (anything else fails the test). */
async function outcome(row: Row, value: unknown): Promise<'ok' | SignalyardError> {
  try {
    const result = row.run(value);
    if (result instanceof Promise) await result;
    else if (row.iterate === true) await (result as AsyncIterable<unknown>)[Symbol.asyncIterator]().next();
    return 'ok';
  } catch (error) {
    if (!isSignalyardError(error))
      throw new Error(`${row.call} gave ${String(error)} (expected a SignalyardError)`, { cause: error });
    return error;
  }
}

describe('public functions given values that are not what they expect', () => {
  describe.each(rows.map((row) => [row.call, row] as const))('%s', (_call, row) => {
    it.each(VALUES)('given %s', async (_what, value) => {
      const result = await outcome(row, value);
      if (row.code === 'accepts' || (row.optional === true && value === undefined) || row.valid?.includes(value)) {
        expect(result).toBe('ok');
      } else {
        expect(result).not.toBe('ok');
        expect((result as SignalyardError).code).toBe(row.code);
        expect(typeof (result as SignalyardError).message).toBe('string');
      }
    });
  });

  it('left the kernel consistent', async () => {
    kernel.cancel(waiting.pid);
    await kernel.drain();
    expect(kernel.status(waiting.pid)?.state).toBe('zombie');
  });
});
