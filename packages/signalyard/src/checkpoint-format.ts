import type {
  ChatMessage,
  PendingApproval,
  SessionCause,
  SessionCheckpointV1,
  StrategySnapshot,
} from '@signalyard/core';
import { frozenJsonValue, isJsonRecord, readSessionCheckpoint } from '@signalyard/core/internal';
import { RunnerError } from './errors/runner-error.js';
import type { StaleApproval } from './live-session.js';
import { CheckpointRecord, EngineCheckpointRecord } from './plain-records.js';

/**
 * Reads a stored checkpoint (core's session checkpoint rules). An unknown `v` (or a malformed
 * document) is an error, never a guess; unknown top-level fields are kept.
 * @throws RunnerError `CHECKPOINT_FORMAT_UNSUPPORTED`; `CHECKPOINT_LOAD_FAILED` for a history
 * entry that is not a chat message.
 */
export function decodeCheckpoint(key: string, data: unknown): SessionCheckpointV1 {
  const read = readSessionCheckpoint(data);
  if (read.ok) return read.data;
  throw new RunnerError({
    code: read.badEntry ? 'CHECKPOINT_LOAD_FAILED' : 'CHECKPOINT_FORMAT_UNSUPPORTED',
    message: `Cannot read the checkpoint of session ${JSON.stringify(key)}: ${read.problem}`,
  });
}

/** The fields a Runner writes itself on every save; every other top-level field is carried over. */
const OWN_FIELDS = new Set([
  'v',
  'agentId',
  'strategy',
  'history',
  'engine',
  'cause',
  'pendingApprovals',
  'staleApprovals',
  'approvalAliases',
]);

/** The top-level fields of `data` a Runner does not write itself (kept across saves); `none` when there are none. @internal */
export function carriedFields(
  data: SessionCheckpointV1,
  none: Readonly<Record<string, unknown>>,
): Readonly<Record<string, unknown>> {
  let carried: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(data)) if (!OWN_FIELDS.has(key)) (carried ??= {})[key] = value;
  return carried ?? none;
}

const NONE: readonly never[] = Object.freeze([]);

/** The checkpoint's pending approvals (a shared empty list when none). @internal */
export function pendingOf(data: SessionCheckpointV1): readonly PendingApproval[] {
  return Array.isArray(data.pendingApprovals) && data.pendingApprovals.length > 0 ? data.pendingApprovals : NONE;
}

/** The checkpoint's stale approvals (a shared empty list when none). @internal */
export function staleOf(data: SessionCheckpointV1): readonly StaleApproval[] {
  return Array.isArray(data.staleApprovals) && data.staleApprovals.length > 0 ? data.staleApprovals : NONE;
}

/** The shared empty list of approvals. @internal */
export const NO_APPROVALS: readonly never[] = NONE;

/**
 * A checkpoint with no approval fields and no carried ones, frozen and marked (core's
 * `frozenJsonValue`) when every member is a marked value or a JSON primitive — the strategy
 * snapshot (an FSM's are), the history (a Runner's are), the cause (`sealedCause`) and the
 * engine state — so that the memory store keeps it as it is instead of copying it with every
 * save; else a plain record for the store to copy. An `undefined` engine state is left out, as
 * JSON would. @internal
 */
export function ownCheckpoint(
  agentId: string,
  strategy: StrategySnapshot,
  history: readonly ChatMessage[],
  engine: unknown,
  cause: SessionCause,
): SessionCheckpointV1 {
  if (isJsonRecord(strategy) && isJsonRecord(history) && isJsonRecord(cause)) {
    // Without `engine`, as JSON leaves an undefined value out (the type wants the key: it is `unknown`).
    // Plain records sized to hold the mark too (plain-records.ts): no property store of their own.
    if (engine === undefined) return frozenJsonValue(new CheckpointRecord(agentId, strategy, history, cause));
    if (isSharedJson(engine))
      return frozenJsonValue(new EngineCheckpointRecord(agentId, strategy, history, engine, cause));
  }
  return { v: 1, agentId, strategy, history, engine, cause };
}

/** A value a store can keep as it is: a marked one, or a JSON primitive JSON keeps as it is (not `-0`, `NaN`, ±∞). */
function isSharedJson(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'object':
      return value === null || isJsonRecord(value);
    default:
      return false;
  }
}
