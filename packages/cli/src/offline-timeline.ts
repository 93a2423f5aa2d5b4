// Time travel on a store, without a Runner: `signalyard`'s session-history functions (the ones
// behind the Runner's `listSessions`, `sessionAt`, `fork` and `rewind`), their failures reported
// with the Runner's codes in the CLI's wording, for a process that is not serving the sessions.
import type { Checkpoint, SessionCheckpointV1, SessionVersion } from '@signalyard/core';
import { SessionKeyError, agentIdOf, formatSessionKey, parseSessionKey } from '@signalyard/sessions';
import { errorText } from '@signalyard/core/internal';
import {
  RunnerError,
  forkSession as forkStored,
  listSessionCheckpoints,
  readSessionVersion,
  rewindSession as rewindStored,
  type SessionHistoryFailure,
} from 'signalyard';
import { CliSessionError } from './errors/cli-session-error.js';
import { CliUsageError } from './errors/cli-usage-error.js';
import type { HistoryStore } from './open-store.js';
import { agentIdOfData, sessionVersionOf } from './session-checkpoint-data.js';

/** One session of `sessions list`; `agentId` is `null` for a checkpoint that is not a session's. */
export interface SessionListing {
  readonly sessionKey: string;
  readonly agentId: string | null;
  readonly version: number;
  readonly updatedAt: string;
}

/** A version of a session, decoded. */
export interface SessionAt {
  readonly checkpoint: Checkpoint;
  readonly data: SessionCheckpointV1;
}

/**
 * A session key argument in its canonical form, with the agent it names (its second part).
 * @throws CliUsageError naming the argument when it is not a session key.
 */
export function sessionKeyArgument(text: string, what: string): { key: string; agentId: string } {
  try {
    const parsed = parseSessionKey(text);
    return { key: formatSessionKey(parsed), agentId: agentIdOf(parsed) };
  } catch (error) {
    throw new CliUsageError({
      message: `${what} ${JSON.stringify(text)} is not a session key: ${SessionKeyError.isInstance(error) ? error.problem : errorText(error)} (keys look like agent:<agent id>:main; see 'signalyard sessions list')`,
      cause: error,
    });
  }
}

/** The stored sessions in code-unit order of their keys, after the key `after`, at most `limit`. */
export async function* listSessions(
  store: HistoryStore,
  opts: { prefix?: string; after?: string; limit?: number },
): AsyncIterable<SessionListing> {
  for await (const { sessionKey, checkpoint } of listSessionCheckpoints(store, opts)) {
    const agentId = agentIdOfData(checkpoint.data) ?? null;
    yield { sessionKey, agentId, version: checkpoint.version, updatedAt: checkpoint.updatedAt };
  }
}

/**
 * The session's kept versions, newest first (the current one included), `before` and `limit` as
 * `Runner.history` takes them.
 * @throws RunnerError `SESSION_NOT_FOUND`; CliSessionError `CLI_CHECKPOINT_UNSUPPORTED`.
 */
export async function sessionHistory(
  store: HistoryStore,
  key: string,
  opts: { before?: number; limit?: number },
): Promise<SessionVersion[]> {
  if ((await store.load(key)) === undefined)
    throw historyError({ ok: false, reason: 'not_found', sessionKey: key }, 'list the history of');
  const versions: SessionVersion[] = [];
  for await (const checkpoint of store.history(key, opts)) versions.push(sessionVersionOf(key, checkpoint));
  return versions;
}

/**
 * Version `version` of the session (default: the current one), decoded.
 * @throws RunnerError `SESSION_NOT_FOUND`, `VERSION_UNAVAILABLE`; CliSessionError `CLI_CHECKPOINT_UNSUPPORTED`.
 */
export async function sessionAt(store: HistoryStore, key: string, version: number | undefined): Promise<SessionAt> {
  const read = await readSessionVersion(store, key, version);
  if (!read.ok) throw historyError(read, 'show');
  return read.value;
}

/**
 * Copies version `version` (default: current) of `from` into the new session `to`: version 1,
 * `cause: { at, forkedFrom: { sessionKey, version } }`, no pending approvals, no inbox position,
 * every other field (unknown ones included) as it was. `from` is untouched.
 * @throws RunnerError `SESSION_NOT_FOUND`, `VERSION_UNAVAILABLE`, `SESSION_EXISTS`; CliSessionError
 *   `CLI_CHECKPOINT_UNSUPPORTED`, `CLI_SESSION_AGENT_MISMATCH`.
 */
export async function forkSession(
  store: HistoryStore,
  from: string,
  to: { key: string; agentId: string },
  version: number | undefined,
): Promise<{ version: number; data: SessionCheckpointV1 }> {
  const forked = await forkStored(store, from, to, version);
  if (!forked.ok) throw historyError(forked, 'fork', { from, to: to.agentId });
  return { version: forked.value.version, data: forked.value.data };
}

/**
 * Saves a new version of the session whose data equals version `version`'s, with
 * `cause: { at, rewoundTo }`, no pending approvals and the current inbox position; the versions
 * in between stay kept.
 * @throws RunnerError `SESSION_NOT_FOUND`, `VERSION_UNAVAILABLE`; CliSessionError
 *   `CLI_CHECKPOINT_UNSUPPORTED`, `CLI_SESSION_CONFLICT` (a runner saved meanwhile).
 */
export async function rewindSession(
  store: HistoryStore,
  key: string,
  version: number,
): Promise<{ version: number; rewoundTo: number; data: SessionCheckpointV1 }> {
  const rewound = await rewindStored(store, key, version);
  if (!rewound.ok) throw historyError(rewound, 'rewind');
  return { version: rewound.value.version, rewoundTo: rewound.value.from, data: rewound.value.data };
}

/**
 * Deletes the session and its whole history; resolves with the version it had.
 * @throws RunnerError `SESSION_NOT_FOUND`.
 */
export async function deleteSession(store: HistoryStore, key: string): Promise<number> {
  const current = await store.load(key);
  if (current === undefined) throw historyError({ ok: false, reason: 'not_found', sessionKey: key }, 'delete');
  await store.delete(key);
  return current.version;
}

/**
 * A session-history failure in the CLI's wording: the Runner's codes (`SESSION_NOT_FOUND`,
 * `SESSION_EXISTS`, `VERSION_UNAVAILABLE`), and the CLI's own for what only it reports.
 */
function historyError(
  failure: SessionHistoryFailure,
  what: string,
  fork?: { readonly from: string; readonly to: string },
): Error {
  const key = failure.sessionKey;
  const shown = JSON.stringify(key);
  switch (failure.reason) {
    case 'not_found':
      return new RunnerError({
        code: 'SESSION_NOT_FOUND',
        message: `cannot ${what} session ${shown}: it has no checkpoint in the store`,
      });
    case 'exists':
      return new RunnerError({
        code: 'SESSION_EXISTS',
        message: `cannot fork into session ${shown}: it already exists (fork into a new key, or delete it first)`,
      });
    case 'version_unavailable': {
      const why =
        failure.version > failure.current
          ? `the current version is ${failure.current}`
          : `the oldest version kept is ${failure.oldest} (a store keeps --keep-versions, default 20, before the current one)`;
      return new RunnerError({
        code: 'VERSION_UNAVAILABLE',
        message: `version ${failure.version} of session ${shown} is not available: ${why}`,
      });
    }
    case 'agent_mismatch':
      return new CliSessionError({
        code: 'CLI_SESSION_AGENT_MISMATCH',
        sessionKey: key,
        message: `cannot fork session ${JSON.stringify(fork?.from)} of agent ${JSON.stringify(failure.agentId)} into ${shown}, a session of agent ${JSON.stringify(fork?.to)}: fork into a key of the same agent (agent:${failure.agentId}:…)`,
      });
    case 'unreadable':
      return new CliSessionError({
        code: 'CLI_CHECKPOINT_UNSUPPORTED',
        sessionKey: key,
        message: `cannot read the checkpoint of session ${shown}: ${failure.problem}`,
      });
    case 'conflict':
      return new CliSessionError({
        code: 'CLI_SESSION_CONFLICT',
        sessionKey: key,
        message: `cannot rewind session ${shown}: it was saved by another writer while rewinding (version ${failure.error.expected} is now ${failure.error.actual}); nothing was written: run it again, or stop the runners serving it`,
        cause: failure.error,
      });
  }
}
