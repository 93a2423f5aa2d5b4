import type { Checkpoint, CheckpointStore, SessionVersion } from '@signalyard/core';
import { pendingApprovalCount, readSessionCheckpoint, sessionVersionOf } from '@signalyard/core/internal';
import { statusOf, type SessionDetail, type SessionSource, type SessionSummary } from './session-source.js';

/**
 * The page's data from a checkpoint store alone (offline, read-only): sessions, their versions
 * and each version's `cause`. A checkpoint that is not a session's (another application's key,
 * a format this release cannot read) is listed with agent `null` and cannot be opened.
 */
export class StoreSource implements SessionSource {
  readonly live = false;
  readonly #store: CheckpointStore;

  constructor(store: CheckpointStore) {
    this.#store = store;
  }

  async listSessions(q: { prefix?: string; after?: string; limit: number }): Promise<SessionSummary[]> {
    const keys: string[] = [];
    for await (const key of this.#store.list(q.prefix)) if (q.after === undefined || key > q.after) keys.push(key);
    keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const rows: SessionSummary[] = [];
    for (const key of keys) {
      if (rows.length >= q.limit) break;
      const checkpoint = await this.#store.load(key);
      if (checkpoint === undefined) continue; // deleted meanwhile
      const read = readSessionCheckpoint(checkpoint.data);
      const pending = read.ok ? pendingApprovalCount(read.data) : 0;
      const lastStatus = read.ok ? read.data.cause?.status : undefined;
      const status = statusOf({ pendingApprovals: pending, lastStatus });
      rows.push({
        sessionKey: key,
        agentId: read.ok ? read.data.agentId : null,
        version: checkpoint.version,
        updatedAt: checkpoint.updatedAt,
        pendingApprovals: pending,
        status: status === 'idle' ? 'unknown' : status,
      });
    }
    return rows;
  }

  async session(sessionKey: string, version?: number): Promise<SessionDetail | undefined> {
    const checkpoint = await this.#load(sessionKey, version);
    if (checkpoint === undefined) return undefined;
    const read = readSessionCheckpoint(checkpoint.data);
    if (!read.ok) return undefined;
    const { data } = read;
    return {
      sessionKey,
      agentId: data.agentId,
      version: checkpoint.version,
      strategy: data.strategy,
      history: data.history,
      pendingApprovals: Array.isArray(data.pendingApprovals) ? data.pendingApprovals : [],
      busy: false,
      queued: 0,
      transcript: null,
    };
  }

  async history(sessionKey: string, q: { before?: number; limit: number }): Promise<SessionVersion[]> {
    const versions: SessionVersion[] = [];
    const push = (checkpoint: Checkpoint): void => {
      const read = readSessionCheckpoint(checkpoint.data);
      if (read.ok) versions.push(sessionVersionOf(checkpoint, read.data));
    };
    if (this.#store.history === undefined) {
      // A store without history keeps the current version only.
      const current = await this.#store.load(sessionKey);
      if (current !== undefined && (q.before === undefined || current.version < q.before)) push(current);
      return versions;
    }
    for await (const checkpoint of this.#store.history(sessionKey, q)) {
      push(checkpoint);
      if (versions.length >= q.limit) break;
    }
    return versions;
  }

  async #load(sessionKey: string, version: number | undefined): Promise<Checkpoint | undefined> {
    const current = await this.#store.load(sessionKey);
    if (current === undefined || version === undefined || version === current.version) return current;
    if (version > current.version || this.#store.loadVersion === undefined) return undefined;
    return this.#store.loadVersion(sessionKey, version);
  }
}
