import type { Envelope } from '../envelope/envelope.js';
import type { TerminalReason } from '../envelope/terminal-reason.js';
import { envelopeFromState, newRunState, runStateFrom, terminate } from '../runtime/run-state.js';
import type { ProcessRecord } from './process-record.js';

/**
 * The final envelope of a process ended outside a run (unknown or unhealthy service, cancelled
 * while queued or waiting): a terminated copy of its stored envelope (its outputs kept), or a
 * fresh one when it never ran.
 * @internal
 */
export function stoppedEnvelope(p: ProcessRecord, reason: TerminalReason, message: string): Envelope {
  const state =
    p.envelope === undefined
      ? newRunState(p.pid, p.request.input, p.request.mode, p.request.service?.firstStage ?? 'end')
      : runStateFrom(p.envelope);
  state.interrupt = undefined;
  terminate(state, reason, message, state.currentStage);
  return envelopeFromState(state);
}
