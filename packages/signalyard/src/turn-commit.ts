import { AbortedError, type ApprovalDecision } from '@signalyard/core';
import type { RouteMatch } from '@signalyard/router';
import { NO_APPROVALS } from './checkpoint-format.js';
import { RunnerError } from './errors/runner-error.js';
import type { Job, LiveSession, LoadedState } from './live-session.js';
import { isConflict, type SessionPersistence } from './session-persistence.js';
import { signalCause } from './session-cause.js';

/** The turn whose commits these are. @internal */
export interface CommitInput {
  readonly session: LiveSession;
  readonly loaded: LoadedState;
  readonly job: Job;
  readonly match: RouteMatch | undefined;
  /** The history so far: the loaded one with the signal's user message. */
  readonly history: LoadedState['history'];
}

/**
 * `ctx.commit` of one turn: compare-and-set saves in the middle of the turn, one after another.
 * A commit saves the engine's state, the history so far and the strategy as it is; the approvals
 * the turn's decisions answer leave `pendingApprovals`, and stale approvals count as delivered.
 * After a commit the loaded state is at the committed version, so the turn's final save builds on
 * it, and a failure of the turn saves nothing more. A lost compare-and-set is remembered: the
 * runner reloads and applies the signal again, whatever the engine does next.
 * @internal
 */
export class TurnCommits {
  readonly #persistence: SessionPersistence;
  readonly #c: CommitInput;
  /** The decisions the turn applies (`ctx.approvals`). */
  readonly #approvals: readonly ApprovalDecision[];
  #chain: Promise<void> = Promise.resolve();
  /** Set by a commit that lost to another writer (the error). */
  conflict: Error | undefined = undefined;

  /** True once the turn has ended: later commits are refused. */
  readonly #over: () => boolean;

  constructor(
    persistence: SessionPersistence,
    turn: CommitInput,
    approvals: readonly ApprovalDecision[],
    over: () => boolean,
  ) {
    this.#persistence = persistence;
    this.#c = turn;
    this.#approvals = approvals;
    this.#over = over;
  }

  commit(state: unknown): Promise<void> {
    const run = this.#chain.then(() => this.#commit(state));
    this.#chain = run.catch(() => undefined);
    return run;
  }

  async #commit(state: unknown): Promise<void> {
    const { session, loaded, job, history } = this.#c;
    if (job.stop.aborted || job.lockLost)
      throw new AbortedError({ message: 'The turn was stopped: nothing committed' });
    if (this.#over()) {
      throw new RunnerError({
        code: 'COMMIT_REFUSED',
        message: `ctx.commit was called after the turn of session ${JSON.stringify(session.key)} ended: commit before returning the TurnResult`,
      });
    }
    // A commit of this turn lost already: the turn's work is being discarded.
    if (this.conflict !== undefined) throw this.conflict;
    // An inbox entry keeps the approvals it answers pending until its final save: redelivered
    // after a death, it is decided again from the committed state (a claimed call is then
    // answered `outcome unknown: not retried` by its engine), never refused as not pending.
    const answered = new Set(job.entry === undefined ? this.#approvals.map((d) => d.id) : []);
    const pending = loaded.pendingApprovals.filter((p) => !answered.has(p.id));
    try {
      await this.#persistence.save(
        session,
        loaded,
        {
          history,
          engineState: state,
          pendingApprovals: pending.length === 0 ? NO_APPROVALS : pending,
          staleApprovals: NO_APPROVALS,
        },
        signalCause(this.#persistence.causes, job.signal, { decidedBy: decidedBy(this.#c.match) }),
        undefined,
        job.entry === undefined ? undefined : { seq: job.entry.seq, receiptId: job.entry.receiptId, partial: true },
      );
    } catch (error) {
      if (isConflict(error)) this.conflict = error as Error;
      throw error;
    }
    job.committed = true;
  }
}

function decidedBy(
  match: RouteMatch | undefined,
): { tier: RouteMatch['tier']; route: RouteMatch['route'] } | undefined {
  return match === undefined ? undefined : { tier: match.tier, route: match.route };
}
