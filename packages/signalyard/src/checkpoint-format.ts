import type { PendingApproval, SessionCheckpointV1 } from '@signalyard/core';
import { readSessionCheckpoint } from '@signalyard/core/internal';
import { RunnerError } from './errors/runner-error.js';
import type { StaleApproval } from './live-session.js';

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
