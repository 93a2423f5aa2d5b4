import type { ChatMessage } from '@signalyard/core';

/**
 * What a crew remembers between runs: the shared history and, after a `paused` run, the agent
 * the next run starts at. Plain JSON (as long as the tool-call arguments are): store it
 * anywhere (a checkpoint store, a session) and pass it back as `opts.state`.
 *
 * The executor never changes a state it is given: every run returns a new one.
 *
 * @example
 * ```ts
 * const saved = JSON.stringify(response.state);                        // e.g. into a checkpoint store
 * const state: CrewState = JSON.parse(saved);
 * await executor.execute('next message', { state });                   // resumes at state.pausedAgentId, if set
 * ```
 */
export interface CrewState {
  /** Every message of the conversation so far, untrimmed (trimming applies to model requests only). */
  history: ChatMessage[];
  /** Set when the run ended `paused`: the agent the next run with this state starts at. */
  pausedAgentId?: string;
}
