import type { ChatMessage, RunSummary, SessionCause, SessionCheckpointV1, StrategySnapshot } from '@signalyard/core';

type Writable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * `init` as a constructor of plain objects: its objects' prototype is `Object.prototype` (so their
 * `constructor` is `Object`, and JSON, spreads and equality see what they would of a literal with
 * the same fields in the same order), but V8 sizes them by slack tracking, over the fields `init`
 * assigns and those added within a few objects of the first (what is filled in later, the frozen
 * mark of core's `frozenJsonValue`): they fit in the object itself, where a literal's object gets
 * a separate property store for them. The objects a save keeps for every version it stores are
 * made so (a checkpoint: 72 bytes instead of 104). Each call makes its own constructor: one shape each.
 */
function plainRecord<A extends unknown[], T>(init: (this: Writable<T>, ...args: A) => void): new (...args: A) => T {
  const ctor = init as unknown as { prototype: object };
  ctor.prototype = Object.prototype;
  return init as unknown as new (...args: A) => T;
}

/** `{ v: 1, agentId, strategy, history, cause }`. @internal */
export const CheckpointRecord = plainRecord<
  [agentId: string, strategy: StrategySnapshot, history: readonly ChatMessage[], cause: SessionCause],
  SessionCheckpointV1
>(function checkpointRecord(agentId, strategy, history, cause) {
  this.v = 1;
  this.agentId = agentId;
  this.strategy = strategy;
  this.history = history;
  this.cause = cause;
});

/** `{ v: 1, agentId, strategy, history, engine, cause }`. @internal */
export const EngineCheckpointRecord = plainRecord<
  [agentId: string, strategy: StrategySnapshot, history: readonly ChatMessage[], engine: unknown, cause: SessionCause],
  SessionCheckpointV1
>(function engineCheckpointRecord(agentId, strategy, history, engine, cause) {
  this.v = 1;
  this.agentId = agentId;
  this.strategy = strategy;
  this.history = history;
  this.engine = engine;
  this.cause = cause;
});

/** `{ at, signal }`, the start of a version's cause (its other fields are filled in after). @internal */
export const CauseRecord = plainRecord<
  [at: string, signal: NonNullable<SessionCause['signal']>],
  { -readonly [K in keyof SessionCause]: SessionCause[K] }
>(function causeRecord(at, signal) {
  this.at = at;
  this.signal = signal;
});

/** `{ status, handoffs, toolCalls, approvals }`, the start of a run summary (its other fields are filled in after). @internal */
export const SummaryRecord = plainRecord<
  [status: RunSummary['status'], none: readonly never[]],
  { -readonly [K in keyof RunSummary]: RunSummary[K] }
>(function summaryRecord(status, none) {
  this.status = status;
  this.handoffs = none;
  this.toolCalls = none;
  this.approvals = none;
});
