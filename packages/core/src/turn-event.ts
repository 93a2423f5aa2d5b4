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
 * of its own signal only. With a durable inbox, a turn redelivered to another worker starts again
 * with a `restarted` event.
 */
export type TurnEvent =
  | {
      /** The signal was routed: the action chosen for it. */
      readonly type: 'routed';
      /** The session the turn belongs to. */
      readonly sessionKey: string;
      /** The agent of the session (for a crew, the session's agent, not the speaking crew agent). */
      readonly agentId: string;
      /** The action chosen; `undefined` when no route matched. */
      readonly action: Action | undefined;
      /** The tier of the route that decided; absent when a runner default applied. */
      readonly tier?: Tier;
      /** The name of the route that decided, when it has one. */
      readonly routeName?: string;
    }
  | {
      /** A piece of the visible reply, as the engine produced it. */
      readonly type: 'text_delta';
      /** The agent of the session (for a crew, the session's agent, not the speaking crew agent). */
      readonly agentId: string;
      /** The text to append to what was shown. */
      readonly delta: string;
      /** Who is speaking: a crew agent and its path, or a pipeline stage. */
      readonly source?: TextSource;
    }
  | {
      /** An engine event (a handoff, a stage, a tool call). */
      readonly type: 'engine_event';
      /** The engine's event, as it emitted it. */
      readonly event: EngineEvent;
    }
  | {
      /**
       * A new delivery of the entry started over (a worker died or lost its lease mid-turn, and
       * another delivers it again): what was shown of this turn so far is void, and the events that
       * follow are the new attempt's. Published first by a delivery after the first when the
       * receipt's stream log is not empty (inbox.md); readers of a durable inbox's stream drop
       * events of older attempts after it.
       */
      readonly type: 'restarted';
      /** The delivery that starts now (2 for the first redelivery). */
      readonly attempt: number;
    }
  | {
      /** The turn is over: always the last event. */
      readonly type: 'outcome';
      /** The turn's outcome, as `turn.outcome` resolves it. */
      readonly outcome: Outcome;
    };

/**
 * One entry of a session's visible conversation (`Runner.transcript`), for rebuilding a chat
 * page after a reload: what the user saw, with routing markers and an engine's internal
 * messages left out.
 */
export type TranscriptEntry =
  | {
      /** A user message. */
      readonly type: 'user';
      /** Its text. */
      readonly text: string;
      /** ISO-8601 time it arrived, when known. */
      readonly at?: string;
    }
  /** An agent's visible text (markers hidden). */
  | {
      /** A reply. */
      readonly type: 'assistant';
      /** The agent that spoke (for a crew, the crew agent). */
      readonly agentId: string;
      /** Its visible text. */
      readonly text: string;
      /** The parallel group the agent spoke in, for a group member's reply; absent otherwise. */
      readonly group?: string;
    }
  | {
      /** The conversation moved from one crew agent to another. */
      readonly type: 'handoff';
      /** The agent that handed off. */
      readonly from: string;
      /** The agent that took over. */
      readonly to: string;
      /**
       * How: a routing signal, a parallel group (a member starting, with `group`, or the group's
       * `next_agent` afterwards), or a fallback.
       */
      readonly via: 'signal' | 'parallel' | 'fallback';
      /** The parallel group, for the handoff from the agent that started it to one of its members. */
      readonly group?: string;
    }
  | {
      /** A tool call and how it ended. */
      readonly type: 'tool';
      /** The call the model made. */
      readonly call: ToolCall;
      /** `done`, `error`, `denied` by a person, or `pending_approval`. */
      readonly status: 'done' | 'error' | 'denied' | 'pending_approval';
      /** What the tool returned (or the error), when it ran. */
      readonly result?: unknown;
      /** With `pending_approval`: the id to answer. */
      readonly approvalId?: string;
      /**
       * What the approvals policy decided for the call, when a policy was consulted: `allow`
       * (it ran without asking), `ask` (held for a person) or `deny`; `rule`: the deciding rule's
       * name, when a named rule decided.
       */
      readonly approval?: {
        /** `allow` (ran without asking), `ask` (held for a person) or `deny` (refused). */
        readonly decision: 'allow' | 'deny' | 'ask';
        /** The `name` of the rule that decided, when a named rule did. */
        readonly rule?: string;
      };
    };
