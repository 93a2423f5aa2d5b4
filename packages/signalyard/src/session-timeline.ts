import {
  describeValue,
  type Checkpoint,
  type CheckpointStore,
  type Clock,
  type RunnerEvent,
  type SessionVersion,
} from '@signalyard/core';
import { resolveHistoryOptions, sessionVersionOf, type EventChannel } from '@signalyard/core/internal';
import { decodeCheckpoint } from './checkpoint-format.js';
import { RunnerError } from './errors/runner-error.js';
import { UNLOADED, type LiveSession } from './live-session.js';
import { agentMismatch } from './outcomes.js';
import type { AgentRuntime } from './runner-options.js';
import {
  listSessionCheckpoints,
  prepareFork,
  readSessionVersion,
  rewindSession,
  saveFork,
  type ReopenOptions as HistoryReopenOptions,
  type SessionHistoryFailure,
} from './session-history.js';
import type { SessionQueue } from './session-queue.js';
import { viewOf, type SessionView } from './session-view.js';

/** What {@link SessionTimeline} works with. @internal */
export interface TimelineDeps {
  readonly store: CheckpointStore;
  readonly queue: SessionQueue;
  readonly hub: EventChannel<RunnerEvent>;
  readonly agents: ReadonlyMap<string, AgentRuntime>;
  /** Reads the time of a fork's or rewind's `cause.at`. */
  readonly clock: Clock;
}

/** Options of `fork` and `rewind`. */
interface ReopenOptions {
  readonly reissueApprovals: boolean;
}

/** One session listed by `Runner.listSessions`. */
export interface SessionListing {
  sessionKey: string;
  agentId: string;
  version: number;
  updatedAt: string;
}

/**
 * A session's past: its kept versions (`history`, `sessionAt`), and time travel that never
 * overwrites evidence (`fork` into a new session, `rewind` as a new version), plus
 * `deleteSession` and `listSessions`. Session keys given here are canonical.
 * @internal
 */
export class SessionTimeline {
  readonly #d: TimelineDeps;

  constructor(deps: TimelineDeps) {
    this.#d = deps;
  }

  /** The session's kept versions, newest first (the current one included). */
  async *history(key: string, opts: unknown): AsyncIterable<SessionVersion> {
    const { store } = this.#d;
    if (store.history === undefined) {
      // A store without history keeps the current version only.
      const query = resolveHistoryOptions(opts);
      const current = await store.load(key);
      if (current === undefined || query.limit === 0) return;
      if (query.before !== undefined && current.version >= query.before) return;
      yield versionOf(key, current);
      return;
    }
    for await (const checkpoint of store.history(key, opts as { before?: number; limit?: number })) {
      yield versionOf(key, checkpoint);
    }
  }

  /** Version `version` of the session, read-only; `undefined` when the session does not exist. */
  async sessionAt(key: string, version: unknown): Promise<SessionView | undefined> {
    assertVersion(version);
    const read = await readSessionVersion(this.#d.store, key, version);
    if (!read.ok && read.reason === 'not_found') return undefined;
    if (!read.ok) throw historyError(read, 'show');
    return viewOf(key, read.value.checkpoint.version, read.value.data, this.#liveness(key));
  }

  /** Copies version `version` (default: current) of `from` into the new session `to`. */
  async fork(
    from: string,
    to: { key: string; agentId: string },
    version: unknown,
    opts: ReopenOptions,
  ): Promise<SessionView> {
    if (version !== undefined) assertVersion(version);
    const { store, clock } = this.#d;
    const fork = await prepareFork(store, from, to, version, { ...opts, clock });
    if (!fork.ok) throw historyError(fork, 'fork', to.agentId);
    const agent = this.#agent(fork.value.data.agentId, to.key);
    // Queued on the new session, so no signal for it can interleave with its first save.
    return this.#d.queue.enqueueTask(to.key, agent, async (session) => {
      const saved = await saveFork(store, to.key, fork.value);
      if (!saved.ok) throw historyError(saved, 'fork');
      session.state = UNLOADED;
      return viewOf(to.key, saved.value.version, saved.value.data, { busy: false, queued: session.queued });
    });
  }

  /** Saves a new version of the session whose data equals version `version`'s. */
  async rewind(key: string, version: unknown, opts: ReopenOptions): Promise<SessionView> {
    assertVersion(version);
    const first = await this.#d.store.load(key);
    if (first === undefined) throw historyError({ ok: false, reason: 'not_found', sessionKey: key }, 'rewind');
    const agent = this.#agent(decodeCheckpoint(key, first.data).agentId, key);
    return this.#d.queue.enqueueTask(key, agent, (session) => this.rewindNow(session, version, opts));
  }

  /**
   * The rewind itself, in the session's turn in its queue (`settles`: the inbox control entry's
   * `seq`, recorded in the same save).
   */
  async rewindNow(
    session: LiveSession,
    version: unknown,
    opts: ReopenOptions & Pick<HistoryReopenOptions, 'settles' | 'records'>,
  ): Promise<SessionView> {
    assertVersion(version);
    const { store, clock } = this.#d;
    const { key } = session;
    const rewound = await rewindSession(store, key, version, { ...opts, clock });
    if (!rewound.ok) throw historyError(rewound, 'rewind');
    const { version: saved, data, from } = rewound.value;
    session.state = UNLOADED; // the next signal loads the rewound state
    this.#d.hub.emit({
      type: 'session_rewound',
      sessionKey: key,
      agentId: data.agentId,
      version: saved,
      rewoundTo: from,
    });
    return viewOf(key, saved, data, { busy: false, queued: session.queued });
  }

  /** Deletes the session and its whole history, in its turn in the queue. */
  async deleteSession(key: string, agent: AgentRuntime): Promise<void> {
    await this.#d.queue.enqueueTask(key, agent, (session) => this.deleteNow(session));
  }

  /** The delete itself, in the session's turn in its queue. */
  async deleteNow(session: LiveSession): Promise<void> {
    await this.#d.store.delete(session.key);
    session.state = UNLOADED;
  }

  /** The stored sessions in code-unit order of their keys, after the key `after`. */
  async *listSessions(opts: { prefix?: string; after?: string; limit?: number }): AsyncIterable<SessionListing> {
    for await (const { sessionKey, checkpoint } of listSessionCheckpoints(this.#d.store, opts)) {
      const data = decodeCheckpoint(sessionKey, checkpoint.data);
      yield { sessionKey, agentId: data.agentId, version: checkpoint.version, updatedAt: checkpoint.updatedAt };
    }
  }

  #agent(agentId: string, key: string): AgentRuntime {
    const agent = this.#d.agents.get(agentId);
    if (agent === undefined) {
      throw new RunnerError({
        code: 'RUNNER_INPUT_INVALID',
        message: `Session ${JSON.stringify(key)} belongs to agent ${JSON.stringify(agentId)}, which this runner does not serve (agents: ${JSON.stringify([...this.#d.agents.keys()])})`,
      });
    }
    return agent;
  }

  #liveness(key: string): { busy: boolean; queued: number } {
    const live: LiveSession | undefined = this.#d.queue.live(key);
    return { busy: live?.busy ?? false, queued: live?.queued ?? 0 };
  }
}

function versionOf(key: string, checkpoint: Checkpoint): SessionVersion {
  return sessionVersionOf(checkpoint, decodeCheckpoint(key, checkpoint.data));
}

function assertVersion(version: unknown): asserts version is number {
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) {
    throw new RunnerError({
      code: 'RUNNER_INPUT_INVALID',
      message: `Invalid session version ${describeValue(version)}: expected an integer >= 1`,
    });
  }
}

/** A session-history failure as the Runner reports it (`toAgentId`: a fork's target agent). */
function historyError(failure: SessionHistoryFailure, what: string, toAgentId = ''): Error {
  const key = JSON.stringify(failure.sessionKey);
  switch (failure.reason) {
    case 'not_found':
      return new RunnerError({
        code: 'SESSION_NOT_FOUND',
        message: `Cannot ${what} session ${key}: it has no checkpoint`,
      });
    case 'exists':
      return new RunnerError({
        code: 'SESSION_EXISTS',
        message: `Cannot fork into session ${key}: it already exists (fork into a new key, or delete it first)`,
      });
    case 'version_unavailable': {
      const why =
        failure.version > failure.current
          ? `the current version is ${failure.current}`
          : `the oldest version kept is ${failure.oldest}`;
      const message = `Version ${failure.version} of session ${key} is not available: ${why}`;
      return new RunnerError({ code: 'VERSION_UNAVAILABLE', message });
    }
    case 'agent_mismatch':
      return agentMismatch(failure.sessionKey, toAgentId, failure.agentId);
    case 'unreadable':
      return new RunnerError({
        code: failure.badEntry ? 'CHECKPOINT_LOAD_FAILED' : 'CHECKPOINT_FORMAT_UNSUPPORTED',
        message: `Cannot read the checkpoint of session ${key}: ${failure.problem}`,
      });
    case 'conflict':
      return failure.error; // another writer saved meanwhile: the store's own error
  }
}
