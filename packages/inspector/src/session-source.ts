import type { ChatMessage, PendingApproval, SessionVersion, StrategySnapshot, TranscriptEntry } from '@signalyard/core';
import type { InspectableRunner, InspectedSession } from './inspectable-runner.js';

/** How a listed session stands. `unknown`: offline, where nothing says whether a turn runs. */
export type SessionStatus = 'idle' | 'busy' | 'paused' | 'awaiting_approval' | 'unknown';

/** One row of the page's sessions list. */
export interface SessionSummary {
  readonly sessionKey: string;
  readonly agentId: string | null;
  readonly version: number;
  readonly updatedAt: string;
  readonly status: SessionStatus;
  readonly pendingApprovals: number;
}

/** A session (or one of its versions) as the page shows it. */
export interface SessionDetail {
  readonly sessionKey: string;
  readonly agentId: string;
  readonly version: number;
  readonly strategy: StrategySnapshot;
  readonly history: readonly ChatMessage[];
  readonly pendingApprovals: readonly PendingApproval[];
  readonly busy: boolean;
  readonly queued: number;
  /** The engine's transcript (the current version of a live session with a runner that has `transcript`), else `null`. */
  readonly transcript: readonly TranscriptEntry[] | null;
}

/** Where the page's data comes from: a live runner or a store alone. */
export interface SessionSource {
  /** True over a runner: mutations are possible (as far as the runner has the methods). */
  readonly live: boolean;
  listSessions(q: { prefix?: string; after?: string; limit: number }): Promise<SessionSummary[]>;
  /** The session, or its version `version`; `undefined` when it does not exist or the version is not kept. */
  session(sessionKey: string, version?: number): Promise<SessionDetail | undefined>;
  history(sessionKey: string, q: { before?: number; limit: number }): Promise<SessionVersion[]>;
}

/** The status shown for a session from what is known of it. */
export function statusOf(s: {
  busy?: boolean;
  pendingApprovals: number;
  lastStatus: string | undefined;
}): SessionStatus {
  if (s.busy === true) return 'busy';
  if (s.pendingApprovals > 0) return 'awaiting_approval';
  return s.lastStatus === 'paused' ? 'paused' : 'idle';
}

/** A session as the page shows it, from the runner's view. */
function detailOf(view: InspectedSession, transcript: readonly TranscriptEntry[] | null): SessionDetail {
  return {
    sessionKey: view.sessionKey,
    agentId: view.agentId,
    version: view.version,
    strategy: view.strategy,
    history: view.history,
    pendingApprovals: view.pendingApprovals ?? [],
    busy: view.busy ?? false,
    queued: view.queued ?? 0,
    transcript,
  };
}

/** The page's data from a live runner. */
export class RunnerSource implements SessionSource {
  readonly live = true;
  readonly #runner: InspectableRunner;

  constructor(runner: InspectableRunner) {
    this.#runner = runner;
  }

  async listSessions(q: { prefix?: string; after?: string; limit: number }): Promise<SessionSummary[]> {
    const rows: SessionSummary[] = [];
    for await (const listing of this.#runner.listSessions(q)) {
      const [view, latest] = await Promise.all([
        this.#runner.session(listing.sessionKey),
        this.#latestVersion(listing.sessionKey),
      ]);
      const pending = view?.pendingApprovals?.length ?? 0;
      rows.push({
        ...listing,
        pendingApprovals: pending,
        status: statusOf({ busy: view?.busy, pendingApprovals: pending, lastStatus: latest?.cause?.status }),
      });
      if (rows.length >= q.limit) break;
    }
    return rows;
  }

  async session(sessionKey: string, version?: number): Promise<SessionDetail | undefined> {
    if (version !== undefined) {
      const view = await this.#runner.sessionAt(sessionKey, version);
      return view === undefined ? undefined : detailOf(view, null);
    }
    const view = await this.#runner.session(sessionKey);
    if (view === undefined) return undefined;
    const transcript = this.#runner.transcript === undefined ? null : await this.#runner.transcript(sessionKey);
    return detailOf(view, transcript);
  }

  async history(sessionKey: string, q: { before?: number; limit: number }): Promise<SessionVersion[]> {
    const versions: SessionVersion[] = [];
    for await (const v of this.#runner.history(sessionKey, q)) {
      versions.push(v);
      if (versions.length >= q.limit) break;
    }
    return versions;
  }

  async #latestVersion(sessionKey: string): Promise<SessionVersion | undefined> {
    for await (const v of this.#runner.history(sessionKey, { limit: 1 })) return v;
    return undefined;
  }
}
