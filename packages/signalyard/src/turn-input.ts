import type { Action, ChatMessage, Signal } from '@signalyard/core';
import type { RouteMatch } from '@signalyard/router';
import type { Job, LiveSession, LoadedState } from './live-session.js';
import type { SessionSave } from './session-save.js';

/** One `continue`: the session, its loaded state, the signal's job and the route decision. @internal */
export interface TurnInput {
  readonly session: LiveSession;
  readonly loaded: LoadedState;
  readonly job: Job;
  readonly action: Action;
  readonly match: RouteMatch | undefined;
  /** The history with the signal's user message. */
  readonly history: readonly ChatMessage[];
  /** What to save when the turn changes nothing: the arrival, or nothing. */
  readonly arrival: SessionSave | undefined;
  /** A merged turn's signals in arrival order (`job.signal` is the last); absent: `[job.signal]`. */
  readonly signals?: readonly Signal[];
  /** Fires when a newer user message interrupts the turn (`whenBusy: 'interrupt'`; see turn-interrupt.ts). */
  readonly interruptSignal?: AbortSignal;
}
