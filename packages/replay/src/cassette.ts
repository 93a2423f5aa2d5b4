import type { ChatResponse, RunSummary, SessionCheckpointV1, SignalKind } from '@signalyard/core';

/** A signal as a cassette keeps it: its kind and its payload (JSON). */
export interface CassetteSignal {
  /** The signal's kind. */
  readonly kind: SignalKind;
  /** The signal's payload, as JSON (`null` when it had none). */
  readonly payload: unknown;
}

/**
 * Why a turn of a cassette cannot be replayed (replay.md): `payload_missing` (the version kept no
 * payload: an earlier release, a payload over `maxCausePayloadBytes`, or a merged turn),
 * `pipeline_stage_calls` (pipeline stages' model calls are not stored), `parallel_members`
 * (a parallel group's replies are merged in the history), `before_kept_versions` (the state
 * before it was pruned), `history_trimmed` (`maxHistoryMessages` dropped part of the turn's own
 * messages).
 */
export type PartialReason =
  'payload_missing' | 'pipeline_stage_calls' | 'parallel_members' | 'before_kept_versions' | 'history_trimmed';

/** One model call of a turn, in call order: who called, the request's hash (recorder cassettes), the response. */
export interface CassetteModelCall {
  /** The agent whose model was called (`ChatRequest.agentId`), when it had one. */
  readonly agentId?: string;
  /** The request: the SHA-256 of its canonical JSON, volatile ids left out (recorder cassettes only). */
  readonly request?: {
    /** Hex SHA-256 of the canonical request (see `requestHash`). */
    readonly hash: string;
  };
  /** What the model answered. */
  readonly response: ChatResponse;
}

/** One tool call's result, in call order. */
export interface CassetteToolResult {
  /** The tool's name. */
  readonly name: string;
  /** The call's arguments. */
  readonly arguments: unknown;
  /** What the tool returned (for a store cassette: the tool message's text). */
  readonly result: unknown;
  /** What the tool threw, as text, when it failed. */
  readonly error?: string;
}

/** One turn of a cassette: what arrived, what happened then, and what the models and tools answered. */
export interface CassetteTurn {
  /** What arrived. */
  readonly signal: CassetteSignal;
  /** What happened then. */
  readonly expected: RunSummary;
  /** The model calls, in call order. */
  readonly modelCalls: readonly CassetteModelCall[];
  /** The tool results, in call order. */
  readonly toolResults: readonly CassetteToolResult[];
  /** When it was applied (ISO-8601): the replay's clock reads it. */
  readonly at?: string;
  /** The session version it produced (store cassettes). */
  readonly version?: number;
  /** Present when the turn cannot be replayed: why (the replay stops there, reported). */
  readonly partial?: {
    /** Why. */
    readonly reason: PartialReason;
  };
}

/**
 * A recorded session (replay.md), one JSON file per session: its turns in order and, for a
 * session that existed before its first turn, the checkpoint to start from (`initial`).
 */
export interface Cassette {
  /** The format version: 1. */
  readonly v: 1;
  /** The session the turns belong to. */
  readonly sessionKey: string;
  /** The agent that served it. */
  readonly agentId: string;
  /** When the cassette was written (ISO-8601). */
  readonly recordedAt: string;
  /** Where it came from: a store's kept versions, or a `cassetteRecorder`. */
  readonly source: 'store' | 'recorder';
  /** The turns, in order. */
  readonly turns: readonly CassetteTurn[];
  /** The session's checkpoint before the first replayable turn (absent: a new session). */
  readonly initial?: SessionCheckpointV1;
}
