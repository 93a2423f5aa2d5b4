// A session's past over a CheckpointStore, as pure functions with discriminated failures: the
// one implementation of listing, version lookup, fork and rewind. The Runner wraps them in queue
// jobs (session-timeline.ts); the CLI (`signalyard sessions`) calls them on a store directly.
import {
  CheckpointConflictError,
  systemClock,
  type Checkpoint,
  type CheckpointStore,
  type Clock,
  type SessionCause,
  type SessionCheckpointV1,
} from '@signalyard/core';
import { compareInboxSeq, isoAt, readClock, readSessionCheckpoint, retireApprovals } from '@signalyard/core/internal';
import { reissued } from './approval-aliases.js';

/**
 * Why a session-history operation did nothing (nothing was written):
 * - `not_found`: the session has no checkpoint;
 * - `exists`: a fork's target session already has one;
 * - `version_unavailable`: the version is above the current one, or no longer kept (`oldest` is
 *   the oldest version kept);
 * - `agent_mismatch`: a fork into a session of another agent (`agentId` is the source's);
 * - `unreadable`: a stored checkpoint is not a session checkpoint this release reads
 *   (`badEntry`: a history entry is not a chat message);
 * - `conflict`: another writer saved the session meanwhile (`error` is the store's).
 */
export type SessionHistoryFailure =
  | {
      /** Nothing was done. */
      readonly ok: false;
      /** The session has no checkpoint, or the fork's target has one. */
      readonly reason: 'not_found' | 'exists';
      /** The session it is about. */
      readonly sessionKey: string;
    }
  | {
      /** Nothing was done. */
      readonly ok: false;
      /** The version is not kept, or above the current one. */
      readonly reason: 'version_unavailable';
      /** The session it is about. */
      readonly sessionKey: string;
      /** The version asked for. */
      readonly version: number;
      /** The session's current version. */
      readonly current: number;
      /** The oldest version the store keeps. */
      readonly oldest: number;
    }
  | {
      /** Nothing was done. */
      readonly ok: false;
      /** A fork into a session of another agent. */
      readonly reason: 'agent_mismatch';
      /** The fork's target session. */
      readonly sessionKey: string;
      /** The agent of the session forked from. */
      readonly agentId: string;
    }
  | {
      /** Nothing was done. */
      readonly ok: false;
      /** A stored checkpoint is not a session checkpoint this release reads. */
      readonly reason: 'unreadable';
      /** The session it is about. */
      readonly sessionKey: string;
      /** What is wrong with the stored document. */
      readonly problem: string;
      /** A history entry is not a chat message (the rest of the document is one). */
      readonly badEntry: boolean;
    }
  | {
      /** Nothing was done. */
      readonly ok: false;
      /** Another writer saved the session meanwhile. */
      readonly reason: 'conflict';
      /** The session it is about. */
      readonly sessionKey: string;
      /** The store's error. */
      readonly error: CheckpointConflictError;
    };

/** What a session-history operation gives: `{ ok: true, value }`, or why it did nothing. */
export type SessionHistoryResult<T> =
  | {
      /** It was done. */
      readonly ok: true;
      /** What it gave. */
      readonly value: T;
    }
  | SessionHistoryFailure;

/** A session version written by {@link forkSession} or {@link rewindSession}: its number and data. */
export interface WrittenVersion {
  /** The version saved (1 for a fork). */
  readonly version: number;
  /** The checkpoint data saved. */
  readonly data: SessionCheckpointV1;
  /** The version it copies (a fork's source version, a rewind's target). */
  readonly from: number;
}

/** How {@link forkSession} and {@link rewindSession} write: their clock, and whether pending approvals are issued again. */
export interface ReopenOptions {
  /** Reads the time of the new version's `cause.at` (default: the system clock). */
  readonly clock?: Clock;
  /**
   * Pending approvals of the copied version are issued again under new ids (a decision on an
   * old id decides nothing); otherwise they become stale (answered as denied). Default `false`.
   */
  readonly reissueApprovals?: boolean;
  /** A rewind applied as an inbox control entry: its `seq`, settled in the same save (`inboxSeq`, never lowered). */
  readonly settles?: string;
  /**
   * A rewind applied as an inbox control entry: the outcome its save records for the entry
   * (`inboxOutcomes`), made from the new version's number and data — so a worker that dies before
   * storing it leaves it for the next one (guarantee 6).
   * @internal
   */
  readonly records?: (
    version: number,
    data: SessionCheckpointV1,
  ) => NonNullable<SessionCheckpointV1['inboxOutcomes']>[number] | undefined;
}

/** A version read by {@link readSessionVersion}: the stored checkpoint and its data decoded. */
export interface SessionVersionRead {
  /** The checkpoint as stored (its `data` undecoded). */
  readonly checkpoint: Checkpoint;
  /** Its data, decoded as a session checkpoint (unknown top-level fields kept). */
  readonly data: SessionCheckpointV1;
}

/** One stored session of {@link listSessionCheckpoints}: its canonical key and current checkpoint. */
export interface StoredSession {
  /** The session's key, as stored (canonical when a Runner saved it). */
  readonly sessionKey: string;
  /** Its current checkpoint (`data` not decoded: it may not be a session checkpoint). */
  readonly checkpoint: Checkpoint;
}

/**
 * The stored sessions in code-unit order of their keys, after the key `after` (a paging cursor),
 * with keys starting with `prefix`, at most `limit`; a session deleted while listing is skipped.
 */
export async function* listSessionCheckpoints(
  store: CheckpointStore,
  opts: { readonly prefix?: string; readonly after?: string; readonly limit?: number } = {},
): AsyncIterable<StoredSession> {
  const keys: string[] = [];
  for await (const key of store.list(opts.prefix)) if (opts.after === undefined || key > opts.after) keys.push(key);
  keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  let listed = 0;
  for (const sessionKey of keys) {
    if (opts.limit !== undefined && listed >= opts.limit) return;
    const checkpoint = await store.load(sessionKey);
    if (checkpoint === undefined) continue; // deleted meanwhile
    listed++;
    yield { sessionKey, checkpoint };
  }
}

/** The stored checkpoint of `key` decoded as a session checkpoint, or `unreadable`. */
export function readSessionData(key: string, data: unknown): SessionHistoryResult<SessionCheckpointV1> {
  const read = readSessionCheckpoint(data);
  if (read.ok) return { ok: true, value: read.data };
  return { ok: false, reason: 'unreadable', sessionKey: key, problem: read.problem, badEntry: read.badEntry };
}

/** Version `version` of `key` (`current` when it is the current one), or `version_unavailable`. */
export async function findSessionVersion(
  store: CheckpointStore,
  key: string,
  current: Checkpoint,
  version: number,
): Promise<SessionHistoryResult<Checkpoint>> {
  if (version === current.version) return { ok: true, value: current };
  const kept =
    version < current.version && store.loadVersion !== undefined ? await store.loadVersion(key, version) : undefined;
  if (kept !== undefined) return { ok: true, value: kept };
  let oldest = current.version;
  if (store.history !== undefined) for await (const c of store.history(key)) oldest = Math.min(oldest, c.version);
  return { ok: false, reason: 'version_unavailable', sessionKey: key, version, current: current.version, oldest };
}

/** Version `version` of `key` (default: the current one), decoded. */
export async function readSessionVersion(
  store: CheckpointStore,
  key: string,
  version: number | undefined,
): Promise<SessionHistoryResult<SessionVersionRead>> {
  const current = await store.load(key);
  if (current === undefined) return { ok: false, reason: 'not_found', sessionKey: key };
  const found = await findSessionVersion(store, key, current, version ?? current.version);
  if (!found.ok) return found;
  const data = readSessionData(key, found.value.data);
  return data.ok ? { ok: true, value: { checkpoint: found.value, data: data.value } } : data;
}

/**
 * A fork's first version: version `version` (default: current) of `from` as version 1 of the
 * new session `to` (`cause.forkedFrom`), without the source's inbox position. Nothing is written:
 * {@link saveFork} writes it.
 */
export async function prepareFork(
  store: CheckpointStore,
  from: string,
  to: { readonly key: string; readonly agentId: string },
  version: number | undefined,
  opts: ReopenOptions = {},
): Promise<SessionHistoryResult<WrittenVersion>> {
  const source = await readSessionVersion(store, from, version);
  if (!source.ok) return source;
  const { checkpoint, data } = source.value;
  if (data.agentId !== to.agentId)
    return { ok: false, reason: 'agent_mismatch', sessionKey: to.key, agentId: data.agentId };
  const { inboxSeq: _seq, inboxPartial: _partial, inboxOutcomes: _outcomes, ...copied } = data;
  const cause: SessionCause = {
    at: isoAt(readClock(opts.clock ?? systemClock)),
    forkedFrom: { sessionKey: from, version: checkpoint.version },
  };
  const forked = reopened(copied, cause, opts, 'stale: forked', 1);
  return { ok: true, value: { version: 1, data: forked, from: checkpoint.version } };
}

/** Writes a fork prepared by {@link prepareFork} as version 1 of `to`; `exists` when `to` has a checkpoint. */
export async function saveFork(
  store: CheckpointStore,
  to: string,
  fork: WrittenVersion,
): Promise<SessionHistoryResult<WrittenVersion>> {
  if ((await store.load(to)) !== undefined) return { ok: false, reason: 'exists', sessionKey: to };
  try {
    return { ok: true, value: { ...fork, version: await store.save(to, fork.data, 0) } };
  } catch (error) {
    if ((await store.load(to)) !== undefined) return { ok: false, reason: 'exists', sessionKey: to };
    throw error;
  }
}

/** {@link prepareFork} then {@link saveFork}: copies a version of `from` into the new session `to`. */
export async function forkSession(
  store: CheckpointStore,
  from: string,
  to: { readonly key: string; readonly agentId: string },
  version: number | undefined,
  opts: ReopenOptions = {},
): Promise<SessionHistoryResult<WrittenVersion>> {
  const fork = await prepareFork(store, from, to, version, opts);
  return fork.ok ? saveFork(store, to.key, fork.value) : fork;
}

/**
 * Saves a new version of `key` whose data equals version `version`'s (`cause.rewoundTo`), with
 * compare-and-set on the current version; the versions in between stay. The current version's
 * inbox position (`inboxSeq`) is kept: what was settled stays settled; so are the outcomes its
 * last settling save recorded (`inboxOutcomes`), which describe that position.
 */
export async function rewindSession(
  store: CheckpointStore,
  key: string,
  version: number,
  opts: ReopenOptions = {},
): Promise<SessionHistoryResult<WrittenVersion>> {
  const current = await store.load(key);
  if (current === undefined) return { ok: false, reason: 'not_found', sessionKey: key };
  const target = await findSessionVersion(store, key, current, version);
  if (!target.ok) return target;
  const read = readSessionData(key, target.value.data);
  if (!read.ok) return read;
  const { inboxSeq: _seq, inboxPartial: _partial, inboxOutcomes: _outcomes, ...data } = read.value;
  const inboxSeq = laterSeq(inboxSeqOf(current.data), opts.settles);
  // The current version's last settle (`inboxOutcomes`) is kept with its inbox position.
  const outcomes = inboxOutcomesOf(current.data);
  const positioned = inboxSeq === undefined ? data : { ...data, inboxSeq };
  const kept = outcomes === undefined ? positioned : { ...positioned, inboxOutcomes: outcomes };
  const cause: SessionCause = { at: isoAt(readClock(opts.clock ?? systemClock)), rewoundTo: target.value.version };
  const reopenedData = reopened(kept, cause, opts, 'stale: rewound', current.version + 1);
  const own = opts.records?.(current.version + 1, reopenedData);
  const restored =
    own === undefined
      ? reopenedData
      : {
          ...reopenedData,
          inboxOutcomes: [...(outcomes ?? []).filter((o) => o.receiptId !== own.receiptId), own],
        };
  try {
    const saved = await store.save(key, restored, current.version);
    return { ok: true, value: { version: saved, data: restored, from: target.value.version } };
  } catch (error) {
    if (CheckpointConflictError.isInstance(error)) return { ok: false, reason: 'conflict', sessionKey: key, error };
    throw error;
  }
}

/** The later of two inbox seqs (either may be absent). */
function laterSeq(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  return compareInboxSeq(a, b) >= 0 ? a : b;
}

/** The `inboxOutcomes` of a stored checkpoint, when it has them (the last settling save's outcomes). */
function inboxOutcomesOf(data: unknown): SessionCheckpointV1['inboxOutcomes'] {
  if (typeof data !== 'object' || data === null) return undefined;
  const outcomes = (data as { inboxOutcomes?: unknown }).inboxOutcomes;
  return Array.isArray(outcomes) ? (outcomes as SessionCheckpointV1['inboxOutcomes']) : undefined;
}

/** The `inboxSeq` of a stored checkpoint, when it has one. */
function inboxSeqOf(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const seq = (data as { inboxSeq?: unknown }).inboxSeq;
  return typeof seq === 'string' ? seq : undefined;
}

/**
 * `data` as a fork's or rewind's new version `version`, with the given cause. Its pending
 * approvals become stale (the engine's next turn answers them as denied with `reason`), unless
 * `reissueApprovals`: then they are issued again under new ids (aliases of the ids the engine's
 * restored state knows them by), so a decision on an old id never decides them.
 */
function reopened(
  data: SessionCheckpointV1,
  cause: SessionCause,
  opts: ReopenOptions,
  reason: 'stale: rewound' | 'stale: forked',
  version: number,
): SessionCheckpointV1 {
  return opts.reissueApprovals === true ? reissued(data, cause, version) : retireApprovals(data, cause, reason);
}
