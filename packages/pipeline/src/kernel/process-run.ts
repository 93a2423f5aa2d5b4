import type { Clock } from '@signalyard/core';
import type { Envelope } from '../envelope/envelope.js';
import { PipelineStateError } from '../errors/pipeline-state-error.js';
import { RUN_CONTROL, type RunControl } from '../runtime/run-control.js';
import type { RunOptions } from '../runtime/runtime-options.js';
import { messageOf } from '../shared/error-message.js';
import type { ProcessRecord, RunningSegment } from './process-record.js';
import type { Service } from './service-registry.js';
import { stoppedEnvelope } from './stopped-envelope.js';

/**
 * Starts a run of process `p` on its service: its pipeline runs its input (or continues its
 * stored envelope with the answer `resume` gave), with the quota as bounds, the quota's time
 * left as `timeoutMs`, its tool-call count, a live view of its counters and the kernel's
 * `clock` (the run records its times with it); `startedAt` is that clock's reading now. `onStop` receives
 * the envelope when the run stops (paused or terminated); `ran` is false when the runtime
 * rejected (then the envelope is a terminated copy saying why).
 * @internal
 */
export function startProcessRun(
  p: ProcessRecord,
  service: Service<ProcessRecord>,
  timeoutMs: number | undefined,
  clock: Clock,
  startedAt: number,
  onStop: (envelope: Envelope, ran: boolean) => void,
): void {
  const controller = new AbortController();
  const run: RunningSegment = { controller, startedAt, live: undefined };
  p.run = run;
  const control: RunControl = {
    toolCalls: p.usage.toolCalls,
    maxToolCalls: p.request.quota.maxToolCalls ?? Infinity,
    onState: (state) => {
      run.live = state;
    },
    clock,
  };
  const options: RunOptions & { [RUN_CONTROL]: RunControl } = {
    abortSignal: controller.signal,
    [RUN_CONTROL]: control,
  };
  if (p.request.bounds !== undefined) options.bounds = p.request.bounds;
  if (timeoutMs !== undefined) options.timeoutMs = timeoutMs;
  const stored = p.envelope;
  let result: Promise<Envelope>;
  if (stored === undefined) {
    options.envelopeId = p.pid;
    options.mode = p.request.mode;
    result = service.runtime.run(p.request.input, options);
  } else {
    result = service.runtime.resume(stored, p.response ?? {}, options);
  }
  result.then(
    (envelope) => {
      onStop(envelope, true);
    },
    (error: unknown) => {
      onStop(rejectedEnvelope(p, error), false);
    },
  );
}

/** The envelope of a run whose runtime call rejected (an interrupt that expired while queued, or a runtime bug). */
function rejectedEnvelope(p: ProcessRecord, error: unknown): Envelope {
  if (PipelineStateError.isInstance(error) && error.code === 'INTERRUPT_EXPIRED') {
    return stoppedEnvelope(
      p,
      'timeout_exceeded',
      `the interrupt expired before the process was resumed: ${error.message}`,
    );
  }
  return stoppedEnvelope(p, 'stage_failed', `the pipeline runtime failed: ${messageOf(error)}`);
}
