import type { Action } from './action.js';
import type { ToolCall } from './model.js';
import type { Tier } from './route.js';
import type { EngineEvent, Outcome } from './runner-event.js';

/** Where a streamed piece of text came from inside an engine: a crew agent and its path, or a pipeline stage. */
export interface TextSource {
  /** The crew agent that is speaking (a crew turn). */
  readonly crewAgentId?: string;
  /** The chain of crew agent ids from the run's entry agent to the speaker (handoffs in order). */
  readonly path?: readonly string[];
  /** The pipeline stage that is speaking (a pipeline turn). */
  readonly stage?: string;
}

/**
 * One event of a streamed turn (`Runner.stream` / `streamDispatch`): the route decision, text
 * as it arrives (markers already hidden), the engine's own events (handoffs, stages, tool calls,
 * approvals — never text deltas), and exactly one `outcome`, last. A stream carries the events
 * of its own signal only.
 */
export type TurnEvent =
  | {
      readonly type: 'routed';
      readonly sessionKey: string;
      readonly agentId: string;
      readonly action: Action | undefined;
      readonly tier?: Tier;
      readonly routeName?: string;
    }
  | { readonly type: 'text_delta'; readonly agentId: string; readonly delta: string; readonly source?: TextSource }
  | { readonly type: 'engine_event'; readonly event: EngineEvent }
  | { readonly type: 'outcome'; readonly outcome: Outcome };

/**
 * One entry of a session's visible conversation (`Runner.transcript`), for rebuilding a chat
 * page after a reload: what the user saw, with routing markers and an engine's internal
 * messages left out.
 */
export type TranscriptEntry =
  | { readonly type: 'user'; readonly text: string; readonly at?: string }
  /** An agent's visible text (markers hidden). */
  | { readonly type: 'assistant'; readonly agentId: string; readonly text: string }
  | {
      readonly type: 'handoff';
      readonly from: string;
      readonly to: string;
      readonly via: 'signal' | 'parallel' | 'fallback';
    }
  | {
      readonly type: 'tool';
      readonly call: ToolCall;
      readonly status: 'done' | 'error' | 'denied' | 'pending_approval';
      readonly result?: unknown;
      readonly approvalId?: string;
    };
