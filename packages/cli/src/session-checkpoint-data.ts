import type { Checkpoint, SessionCheckpointV1, SessionVersion } from '@signalyard/core';
import { readSessionCheckpoint, sessionVersionOf as versionOf } from '@signalyard/core/internal';
import { CliSessionError } from './errors/cli-session-error.js';

/**
 * Reads a stored session checkpoint (`SessionCheckpointV1`) with core's rules, as a Runner does:
 * an unknown `v` or a malformed document is an error, never a guess. Unknown top-level fields (a
 * newer release's) are kept, so a fork or a rewind never drops them.
 *
 * @throws CliSessionError `CLI_CHECKPOINT_UNSUPPORTED` naming the session and the problem.
 */
export function decodeSessionCheckpoint(key: string, data: unknown): SessionCheckpointV1 {
  const read = readSessionCheckpoint(data);
  if (read.ok) return read.data;
  throw unsupported(key, read.problem);
}

/** The agent of a stored checkpoint when it has one, else `undefined` (for listings, which never fail on one bad row). */
export function agentIdOfData(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const agentId = (data as { agentId?: unknown }).agentId;
  return typeof agentId === 'string' && agentId !== '' ? agentId : undefined;
}

/** A kept checkpoint as a `SessionVersion`, the shape `Runner.history` yields. */
export function sessionVersionOf(key: string, checkpoint: Checkpoint): SessionVersion {
  return versionOf(checkpoint, decodeSessionCheckpoint(key, checkpoint.data));
}

function unsupported(key: string, problem: string): CliSessionError {
  return new CliSessionError({
    code: 'CLI_CHECKPOINT_UNSUPPORTED',
    sessionKey: key,
    message: `cannot read the checkpoint of session ${JSON.stringify(key)}: ${problem}`,
  });
}
