// Time travel on a store, without a Runner: the same semantics as the Runner's `listSessions`,
// `history`, `sessionAt`, `fork`, `rewind` and `deleteSession`, for a process that is not serving
// the sessions.
import {
  CheckpointConflictError,
  type Checkpoint,
  type SessionCheckpointV1,
  type SessionVersion,
} from '@signalyard/core';
import { SessionKeyError, agentIdOf, formatSessionKey, parseSessionKey } from '@signalyard/sessions';
import { errorText, retireApprovals } from '@signalyard/core/internal';
import { CliSessionError } from './errors/cli-session-error.js';
import { CliUsageError } from './errors/cli-usage-error.js';
import type { HistoryStore } from './open-store.js';
import { agentIdOfData, decodeSessionCheckpoint, sessionVersionOf } from './session-checkpoint-data.js';

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
  const keys: string[] = [];
  for await (const key of store.list(opts.prefix)) if (opts.after === undefined || key > opts.after) keys.push(key);
  keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  let listed = 0;
  for (const key of keys) {
    if (opts.limit !== undefined && listed >= opts.limit) return;
    const checkpoint = await store.load(key);
    if (checkpoint === undefined) continue; // deleted meanwhile
    listed++;
    const agentId = agentIdOfData(checkpoint.data) ?? null;
    yield { sessionKey: key, agentId, version: checkpoint.version, updatedAt: checkpoint.updatedAt };
  }
}

/**
 * The session's kept versions, newest first (the current one included), `before` and `limit` as
 * `Runner.history` takes them.
 * @throws CliSessionError `CLI_SESSION_NOT_FOUND`, `CLI_CHECKPOINT_UNSUPPORTED`.
 */
export async function sessionHistory(
  store: HistoryStore,
  key: string,
  opts: { before?: number; limit?: number },
): Promise<SessionVersion[]> {
  if ((await store.load(key)) === undefined) throw notFound('list the history of', key);
  const versions: SessionVersion[] = [];
  for await (const checkpoint of store.history(key, opts)) versions.push(sessionVersionOf(key, checkpoint));
  return versions;
}

/**
 * Version `version` of the session (default: the current one), decoded.
 * @throws CliSessionError `CLI_SESSION_NOT_FOUND`, `CLI_VERSION_UNAVAILABLE`, `CLI_CHECKPOINT_UNSUPPORTED`.
 */
export async function sessionAt(store: HistoryStore, key: string, version: number | undefined): Promise<SessionAt> {
  const current = await store.load(key);
  if (current === undefined) throw notFound('show', key);
  const checkpoint = await versionOf(store, key, current, version ?? current.version);
  return { checkpoint, data: decodeSessionCheckpoint(key, checkpoint.data) };
}

/**
 * Copies version `version` (default: current) of `from` into the new session `to`: version 1,
 * `cause: { at, forkedFrom: { sessionKey, version } }`, no pending approvals, every other field
 * (unknown ones included) as it was. `from` is untouched.
 * @throws CliSessionError `CLI_SESSION_NOT_FOUND`, `CLI_VERSION_UNAVAILABLE`,
 *   `CLI_CHECKPOINT_UNSUPPORTED`, `CLI_SESSION_AGENT_MISMATCH`, `CLI_SESSION_EXISTS`.
 */
export async function forkSession(
  store: HistoryStore,
  from: string,
  to: { key: string; agentId: string },
  version: number | undefined,
): Promise<{ version: number; data: SessionCheckpointV1 }> {
  const current = await store.load(from);
  if (current === undefined) throw notFound('fork', from);
  const source = await versionOf(store, from, current, version ?? current.version);
  const data = decodeSessionCheckpoint(from, source.data);
  if (data.agentId !== to.agentId) {
    throw new CliSessionError({
      code: 'CLI_SESSION_AGENT_MISMATCH',
      sessionKey: to.key,
      message: `cannot fork session ${JSON.stringify(from)} of agent ${JSON.stringify(data.agentId)} into ${JSON.stringify(to.key)}, a session of agent ${JSON.stringify(to.agentId)}: fork into a key of the same agent (agent:${data.agentId}:…)`,
    });
  }
  const forked = retireApprovals(
    data,
    { at: new Date().toISOString(), forkedFrom: { sessionKey: from, version: source.version } },
    'stale: forked',
  );
  if ((await store.load(to.key)) !== undefined) throw exists(to.key);
  try {
    return { version: await store.save(to.key, forked, 0), data: forked };
  } catch (error) {
    if (CheckpointConflictError.isInstance(error)) throw exists(to.key);
    throw error;
  }
}

/**
 * Saves a new version of the session whose data equals version `version`'s, with
 * `cause: { at, rewoundTo }` and no pending approvals; the versions in between stay kept.
 * @throws CliSessionError `CLI_SESSION_NOT_FOUND`, `CLI_VERSION_UNAVAILABLE`,
 *   `CLI_CHECKPOINT_UNSUPPORTED`, `CLI_SESSION_CONFLICT` (a runner saved meanwhile).
 */
export async function rewindSession(
  store: HistoryStore,
  key: string,
  version: number,
): Promise<{ version: number; rewoundTo: number; data: SessionCheckpointV1 }> {
  const current = await store.load(key);
  if (current === undefined) throw notFound('rewind', key);
  const target = await versionOf(store, key, current, version);
  const restored = retireApprovals(
    decodeSessionCheckpoint(key, target.data),
    { at: new Date().toISOString(), rewoundTo: target.version },
    'stale: rewound',
  );
  try {
    return { version: await store.save(key, restored, current.version), rewoundTo: target.version, data: restored };
  } catch (error) {
    if (CheckpointConflictError.isInstance(error)) {
      throw new CliSessionError({
        code: 'CLI_SESSION_CONFLICT',
        sessionKey: key,
        message: `cannot rewind session ${JSON.stringify(key)}: it was saved by another writer while rewinding (version ${current.version} is now ${error.actual}); nothing was written: run it again, or stop the runners serving it`,
        cause: error,
      });
    }
    throw error;
  }
}

/**
 * Deletes the session and its whole history; resolves with the version it had.
 * @throws CliSessionError `CLI_SESSION_NOT_FOUND`.
 */
export async function deleteSession(store: HistoryStore, key: string): Promise<number> {
  const current = await store.load(key);
  if (current === undefined) throw notFound('delete', key);
  await store.delete(key);
  return current.version;
}

/** `version` of `key` (`current` when it is the current one), or `CLI_VERSION_UNAVAILABLE` naming the oldest version kept. */
async function versionOf(store: HistoryStore, key: string, current: Checkpoint, version: number): Promise<Checkpoint> {
  if (version === current.version) return current;
  const kept = version < current.version ? await store.loadVersion(key, version) : undefined;
  if (kept !== undefined) return kept;
  let oldest = current.version;
  for await (const c of store.history(key)) oldest = Math.min(oldest, c.version);
  const why =
    version > current.version
      ? `the current version is ${current.version}`
      : `the oldest version kept is ${oldest} (a store keeps --keep-versions, default 20, before the current one)`;
  throw new CliSessionError({
    code: 'CLI_VERSION_UNAVAILABLE',
    sessionKey: key,
    message: `version ${version} of session ${JSON.stringify(key)} is not available: ${why}`,
  });
}

function notFound(what: string, key: string): CliSessionError {
  return new CliSessionError({
    code: 'CLI_SESSION_NOT_FOUND',
    sessionKey: key,
    message: `cannot ${what} session ${JSON.stringify(key)}: it has no checkpoint in the store`,
  });
}

function exists(key: string): CliSessionError {
  return new CliSessionError({
    code: 'CLI_SESSION_EXISTS',
    sessionKey: key,
    message: `cannot fork into session ${JSON.stringify(key)}: it already exists (fork into a new key, or delete it first)`,
  });
}
