import type { TurnContext } from './engine.js';
import type { Applied } from './outcomes.js';

/**
 * `whenBusy: 'interrupt'` at safe points (decisions-wave3 §11). An interrupt never fires a turn's
 * `abortSignal` (a tool call in flight is not cut off; a `force_stop` still does that): it fires
 * the turn's interrupt signal, which an engine that knows its safe points (`crewEngine`: before a
 * model call, before a tool call starts) reads to end the turn there, returning what it
 * completed. An engine that does not read it runs to its end, its own last safe point. Either way
 * what the interrupted turn completed is saved, and its callers get `stopped`.
 */

/** Where a Runner's turn context keeps its interrupt signal (not part of `TurnContext`). */
const INTERRUPT: unique symbol = Symbol.for('signalyard.turn.interruptSignal');

/** A turn context that can carry an interrupt signal. */
interface InterruptibleContext {
  readonly [INTERRUPT]: AbortSignal | undefined;
}

/** The key of the interrupt signal on a turn context. @internal */
export const INTERRUPT_SIGNAL: typeof INTERRUPT = INTERRUPT;

/**
 * The interrupt signal of a Runner's turn (`whenBusy: 'interrupt'`): fires when a newer user
 * message interrupts it. `undefined` for a turn that cannot be interrupted, or a context that is
 * not the Runner's own (a wrapping engine's copy). @internal
 */
export function interruptSignalOf(ctx: TurnContext): AbortSignal | undefined {
  return (ctx as Partial<InterruptibleContext>)[INTERRUPT];
}

/**
 * What an interrupted turn saves and answers: its effects as they are (what it completed), its
 * callers `stopped` — unless it failed or paused (awaiting approval) on its own. @internal
 */
export function interruptedApplied(applied: Applied): Applied {
  if (applied.outcome.status !== 'completed') return applied;
  const { output: _output, ...rest } = applied.outcome;
  return { ...applied, outcome: { ...rest, status: 'stopped' } };
}
