import {
  describeValue,
  type Checkpoint,
  type CheckpointStore,
  type RunnerEvent,
  type SessionCause,
  type SessionCheckpointV1,
  type SessionVersion,
} from '@signalyard/core';
import { resolveHistoryOptions, retireApprovals, sessionVersionOf, type EventChannel } from '@signalyard/core/internal';
import { reissued } from './approval-aliases.js';
import { decodeCheckpoint } from './checkpoint-format.js';
import { RunnerError } from './errors/runner-error.js';
import { UNLOADED, type LiveSession } from './live-session.js';
import { agentMismatch } from './outcomes.js';
import type { AgentRuntime } from './runner-options.js';
import type { SessionQueue } from './session-queue.js';
import { viewOf, type SessionView } from './session-view.js';

/** What {@link SessionTimeline} works with. @internal */
export interface TimelineDeps {
  readonly store: CheckpointStore;
  readonly queue: SessionQueue;
  readonly hub: EventChannel<RunnerEvent>;
  readonly agents: ReadonlyMap<string, AgentRuntime>;
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
    const current = await this.#d.store.load(key);
    if (current === undefined) return undefined;
    const checkpoint = await this.#version(key, current, version);
    return viewOf(key, checkpoint.version, decodeCheckpoint(key, checkpoint.data), this.#liveness(key));
  }

  /** Copies version `version` (default: current) of `from` into the new session `to`. */
  async fork(
    from: string,
    to: { key: string; agentId: string },
    version: unknown,
    opts: ReopenOptions,
  ): Promise<SessionView> {
    if (version !== undefined) assertVersion(version);
    const { store } = this.#d;
    const current = await store.load(from);
    if (current === undefined) throw notFound('fork', from);
    const source = await this.#version(from, current, version ?? current.version);
    const data = decodeCheckpoint(from, source.data);
    if (data.agentId !== to.agentId) throw agentMismatch(to.key, to.agentId, data.agentId);
    const agent = this.#agent(data.agentId, to.key);
    const cause: SessionCause = {
      at: new Date().toISOString(),
      forkedFrom: { sessionKey: from, version: source.version },
    };
    const forked = reopened(data, cause, opts, 'stale: forked', 1);
    // Queued on the new session, so no signal for it can interleave with its first save.
    return this.#d.queue.enqueueTask(to.key, agent, async (session) => {
      if ((await store.load(to.key)) !== undefined) throw exists(to.key);
      let saved: number;
      try {
        saved = await store.save(to.key, forked, 0);
      } catch (error) {
        if ((await store.load(to.key)) !== undefined) throw exists(to.key);
        throw error;
      }
      session.state = UNLOADED;
      return viewOf(to.key, saved, forked, { busy: false, queued: session.queued });
    });
  }

  /** Saves a new version of the session whose data equals version `version`'s. */
  async rewind(key: string, version: unknown, opts: ReopenOptions): Promise<SessionView> {
    assertVersion(version);
    const { store } = this.#d;
    const first = await store.load(key);
    if (first === undefined) throw notFound('rewind', key);
    const agent = this.#agent(decodeCheckpoint(key, first.data).agentId, key);
    return this.#d.queue.enqueueTask(key, agent, async (session) => {
      const current = await store.load(key);
      if (current === undefined) throw notFound('rewind', key);
      const target = await this.#version(key, current, version);
      const data = decodeCheckpoint(key, target.data);
      const restored = reopened(
        data,
        { at: new Date().toISOString(), rewoundTo: target.version },
        opts,
        'stale: rewound',
        current.version + 1,
      );
      const saved = await store.save(key, restored, current.version);
      session.state = UNLOADED; // the next signal loads the rewound state
      this.#d.hub.emit({
        type: 'session_rewound',
        sessionKey: key,
        agentId: agent.id,
        version: saved,
        rewoundTo: target.version,
      });
      return viewOf(key, saved, restored, { busy: false, queued: session.queued });
    });
  }

  /** Deletes the session and its whole history, in its turn in the queue. */
  async deleteSession(key: string, agent: AgentRuntime): Promise<void> {
    await this.#d.queue.enqueueTask(key, agent, async (session) => {
      await this.#d.store.delete(key);
      session.state = UNLOADED;
    });
  }

  /** The stored sessions in code-unit order of their keys, after the key `after`. */
  async *listSessions(opts: { prefix?: string; after?: string; limit?: number }): AsyncIterable<SessionListing> {
    const { store } = this.#d;
    const keys: string[] = [];
    for await (const key of store.list(opts.prefix)) if (opts.after === undefined || key > opts.after) keys.push(key);
    keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    let listed = 0;
    for (const key of keys) {
      if (opts.limit !== undefined && listed >= opts.limit) return;
      const checkpoint = await store.load(key);
      if (checkpoint === undefined) continue; // deleted meanwhile
      const data = decodeCheckpoint(key, checkpoint.data);
      listed++;
      yield { sessionKey: key, agentId: data.agentId, version: checkpoint.version, updatedAt: checkpoint.updatedAt };
    }
  }

  /** `version` of `key` (`current` when it is the current one), or `VERSION_UNAVAILABLE`. */
  async #version(key: string, current: Checkpoint, version: number): Promise<Checkpoint> {
    if (version === current.version) return current;
    const { store } = this.#d;
    const kept =
      version < current.version && store.loadVersion !== undefined ? await store.loadVersion(key, version) : undefined;
    if (kept !== undefined) return kept;
    let oldest = current.version;
    if (store.history !== undefined) for await (const c of store.history(key)) oldest = Math.min(oldest, c.version);
    throw new RunnerError({
      code: 'VERSION_UNAVAILABLE',
      message: `Version ${version} of session ${JSON.stringify(key)} is not available: ${version > current.version ? `the current version is ${current.version}` : `the oldest version kept is ${oldest}`}`,
    });
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
  return opts.reissueApprovals ? reissued(data, cause, version) : retireApprovals(data, cause, reason);
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

function notFound(what: string, key: string): RunnerError {
  return new RunnerError({
    code: 'SESSION_NOT_FOUND',
    message: `Cannot ${what} session ${JSON.stringify(key)}: it has no checkpoint`,
  });
}

function exists(key: string): RunnerError {
  return new RunnerError({
    code: 'SESSION_EXISTS',
    message: `Cannot fork into session ${JSON.stringify(key)}: it already exists (fork into a new key, or delete it first)`,
  });
}
