import {
  MemoryCheckpointStore,
  describeValue,
  type Action,
  type ChatModel,
  type CheckpointStore,
  type Clock,
  type Outcome,
  type RunSummary,
  type Signal,
  type Tool,
} from '@signalyard/core';
import {
  abortedError,
  errorText,
  isAbortSignal,
  readSessionCheckpoint,
  throwIfAborted,
  untilAborted,
} from '@signalyard/core/internal';
import type { Cassette, CassetteTurn, PartialReason } from './cassette.js';
import { parseCassette } from './cassette-file.js';
import { divergence, diffSummaries, type Divergence } from './diff-runs.js';
import { ReplayError, inputInvalid } from './errors/replay-error.js';
import { ReplayTape } from './replay-tape.js';

/** What `replay` hands the runner factory for one cassette. */
export interface ReplayRunnerParts {
  /** A fresh `MemoryCheckpointStore`, seeded with the cassette's `initial` checkpoint. */
  readonly store: CheckpointStore;
  /** Reads each turn's recorded time. */
  readonly clock: Clock;
  /** Answers each call (by `ChatRequest.agentId`) from the cassette's recorded calls, in order. */
  readonly model: ChatModel;
  /** The same tools with `execute` replaced by the recorded results (tools in `live` run for real when not recorded). */
  readonly tools: (tools: readonly Tool[]) => Tool[];
}

/** The part of a Runner a replay drives: `dispatch` and `close`, and `handle` when it has one (any `signalyard` Runner is one). */
export interface ReplayableRunner {
  /** Applies one signal to a session. */
  dispatch(
    sessionKey: string,
    signal: Signal,
    opts?: { agentId?: string; abortSignal?: AbortSignal },
  ): Promise<Outcome>;
  /**
   * Resolves an inbound message's route (today's bindings) and applies it: used for user messages
   * recorded as inbound messages (`{ channel, text, … }`), so a moved binding shows as a divergence.
   */
  handle?(message: never, opts?: { abortSignal?: AbortSignal }): Promise<Outcome>;
  /** Stops the runner. */
  close(): Promise<void>;
}

/** Builds the runner under test — with today's configuration — from what `replay` supplies. */
export type ReplayRunnerFactory = (parts: ReplayRunnerParts) => ReplayableRunner | Promise<ReplayableRunner>;

/** Options of {@link replay}. */
export interface ReplayOptions {
  /** Builds the runner under test for each cassette. */
  readonly runner: ReplayRunnerFactory;
  /** Tools that may run for real when a call is not recorded (default none: such a call is a divergence). */
  readonly live?: readonly string[];
  /**
   * Stops the replay promptly: the turn in flight is aborted (passed on to the runner's
   * `dispatch` / `handle`), its runner closed, and `replay` rejects with an `AbortedError`
   * (`code` `ABORTED`); no report is returned.
   */
  readonly abortSignal?: AbortSignal;
}

/** One replayed turn: what the cassette expected and what the new run did (absent when not run). */
export interface ReplayedTurn {
  /** The turn, 1-based. */
  readonly turn: number;
  /** The recorded summary. */
  readonly expected: RunSummary;
  /** The new run's summary; absent for a turn not replayed (partial, or after the session stopped). */
  readonly actual?: RunSummary;
}

/** How a session's replay went: `same`, `diverged` (see `divergence`), `failed` (see `error`), `partial` (stopped at a partial turn). */
export type ReplayStatus = 'same' | 'diverged' | 'failed' | 'partial';

/** One cassette's replay. */
export interface ReplayedSession {
  /** The session replayed. */
  readonly sessionKey: string;
  /** Its agent. */
  readonly agentId: string;
  /** How it went. */
  readonly status: ReplayStatus;
  /** The first divergence (with `diverged`). */
  readonly divergence?: Divergence;
  /** Every divergence seen, in order (several `prompt_changed` may come before the one that stopped it). */
  readonly divergences: readonly Divergence[];
  /** Both summaries per turn replayed. */
  readonly turns: readonly ReplayedTurn[];
  /** With `partial`: the partial turn the replay stopped at, and why (the turns before it were replayed). */
  readonly partial?: {
    /** The turn it stopped at (1-based): 1 when the cassette's first turn is partial (nothing was replayed). */
    readonly turn: number;
    /** Why the turn could not be replayed. */
    readonly reason: PartialReason;
  };
  /** What went wrong (with `failed`). */
  readonly error?: {
    /** The error's `code`, when it had one. */
    readonly code?: string;
    /** What went wrong. */
    readonly message: string;
  };
}

/** What {@link replay} returns: every session, and the counts. */
export interface ReplayReport {
  /** Per cassette, in the order given. */
  readonly sessions: readonly ReplayedSession[];
  /** How many sessions were `same`. */
  readonly same: number;
  /** How many `diverged`. */
  readonly diverged: number;
  /** How many `failed`. */
  readonly failed: number;
  /** How many stopped at a `partial` turn (its first turn included: nothing replayed is never `same`). */
  readonly partial: number;
}

/**
 * Replays cassettes against the runner the caller builds with today's configuration (replay.md):
 * for each cassette, a fresh store seeded with `initial`, the recorded clock, a model answering
 * from the cassette, tools returning the recorded results; each turn's signal is dispatched and
 * the `RunSummary` the runner saved is compared with the recorded one. A session stops at the end
 * of its first diverging turn (a `prompt_changed` lets it go on), or at its first partial turn —
 * the first turn too: the session is then `partial` with that turn and reason, and what came after
 * it is never replayed (replay.md: "reported, never invented"). No network, no
 * keys, no side effects: a tool call the cassette does not hold is `tool_not_recorded`, never a
 * live call, unless the tool is listed in `live`.
 *
 * @throws ReplayError `REPLAY_INPUT_INVALID` for bad options, `REPLAY_CASSETTE_INVALID` for a
 * cassette that is not one; AbortedError `ABORTED` when `abortSignal` fires. A factory that throws or returns no runner fails its session
 * (`REPLAY_RUNNER_INVALID`), not the replay.
 * @example
 * ```ts
 * const report = await replay(await loadCassettes('cassettes/'), {
 *   runner: ({ store, clock, model, tools }) =>
 *     createRunner({ agents: [{ id: 'desk', engine: crewEngine(crew, { model, tools: tools(myTools) }) }], store, clock }),
 * });
 * for (const s of report.sessions) if (s.divergence) console.log(s.sessionKey, s.divergence.text);
 * ```
 */
export async function replay(cassettes: readonly Cassette[], options: ReplayOptions): Promise<ReplayReport> {
  const live = checkReplayOptions(cassettes, options);
  const checked = cassettes.map((c) => parseCassette(c));
  const { abortSignal } = options;
  const sessions: ReplayedSession[] = [];
  for (const cassette of checked) {
    throwIfAborted(abortSignal);
    sessions.push(await replaySession(cassette, options.runner, live, abortSignal));
  }
  const count = (s: ReplayStatus): number => sessions.filter((x) => x.status === s).length;
  return {
    sessions,
    same: count('same'),
    diverged: count('diverged'),
    failed: count('failed'),
    partial: count('partial'),
  };
}

/** The options' problems, thrown; else the `live` list. @internal */
function checkReplayOptions(cassettes: readonly Cassette[], options: ReplayOptions): readonly string[] {
  if (!Array.isArray(cassettes))
    throw inputInvalid(`replay needs a list of cassettes, got ${describeValue(cassettes)}`);
  if (typeof options !== 'object' || (options as unknown) === null || typeof options.runner !== 'function')
    throw inputInvalid(
      `replay needs options { runner: ({ store, clock, model, tools }) => Runner, live? }, got runner ${describeValue((options as Partial<ReplayOptions> | null)?.runner)}`,
    );
  const live: unknown = options.live ?? [];
  if (!Array.isArray(live) || live.some((n) => typeof n !== 'string'))
    throw inputInvalid(`replay option live must be a list of tool names, got ${describeValue(options.live)}`);
  if (options.abortSignal !== undefined && !isAbortSignal(options.abortSignal))
    throw inputInvalid(`replay option abortSignal must be an AbortSignal, got ${describeValue(options.abortSignal)}`);
  return live as readonly string[];
}

async function startRunner(factory: ReplayRunnerFactory, parts: ReplayRunnerParts): Promise<ReplayableRunner> {
  let runner: unknown;
  try {
    runner = await factory(parts);
  } catch (error) {
    throw new ReplayError({
      code: 'REPLAY_RUNNER_INVALID',
      message: `The runner factory threw: ${errorText(error)}`,
      cause: error,
    });
  }
  const r = runner as Partial<ReplayableRunner> | null;
  if (typeof r !== 'object' || r === null || typeof r.dispatch !== 'function' || typeof r.close !== 'function')
    throw new ReplayError({
      code: 'REPLAY_RUNNER_INVALID',
      message: `The runner factory returned ${describeValue(runner)}, expected a Runner { dispatch, close }`,
    });
  return r as ReplayableRunner;
}

/** Replays one cassette. */
async function replaySession(
  cassette: Cassette,
  factory: ReplayRunnerFactory,
  live: readonly string[],
  abortSignal: AbortSignal | undefined,
): Promise<ReplayedSession> {
  const tape = new ReplayTape(live);
  const store = new MemoryCheckpointStore({ clock: tape.clock });
  const base = { sessionKey: cassette.sessionKey, agentId: cassette.agentId };
  const turns: ReplayedTurn[] = [];
  const end = cassette.turns.findIndex((t) => t.partial !== undefined);
  // A partial first turn: nothing can be replayed, and nothing is invented (no runner started).
  if (end === 0) return stoppedAt(base, [], [], 1, (cassette.turns[0] as CassetteTurn).partial as CassetteTurnPartial);
  let runner: ReplayableRunner | undefined;
  let starting: Promise<ReplayableRunner> | undefined;
  tape.load(cassette.turns.slice(0, end < 0 ? undefined : end));
  try {
    if (cassette.initial !== undefined) await store.save(cassette.sessionKey, cassette.initial, 0);
    starting = startRunner(factory, { store, clock: tape.clock, model: tape.model, tools: tape.tools });
    runner = await untilAborted(starting, abortSignal);
    for (let i = 0; i < cassette.turns.length; i++) {
      throwIfAborted(abortSignal);
      const turn = cassette.turns[i] as CassetteTurn;
      if (turn.partial !== undefined) return stoppedAt(base, tape.divergences, turns, i + 1, turn.partial);
      const actual = await replayTurn(runner, store, cassette, turn, i + 1, tape, abortSignal);
      turns.push({ turn: i + 1, expected: turn.expected, actual });
      // A turn recorded as failed, failing again: what it could not get (a store keeps no reply of a
      // model that threw) is how it failed then too, not a divergence.
      if (turn.expected.status === 'failed' && actual.status === 'failed') tape.forgive(i + 1);
      const apart = tape.divergences.some((d) => d.turn === i + 1 && d.kind !== 'prompt_changed');
      const diff = apart ? undefined : diffSummaries(turn.expected, actual);
      if (diff !== undefined) tape.divergences.push(divergence(i + 1, 'summary', diff));
      const first = tape.divergences.find((d) => d.kind !== 'prompt_changed');
      if (first !== undefined) break;
    }
  } catch (error) {
    // Aborted: the replay stops (the caller's abort is not this session's failure).
    if (abortSignal?.aborted === true) {
      // A runner still being built when the abort came is closed once it is there.
      if (runner === undefined) starting?.then((r) => r.close()).catch(() => undefined);
      throw abortedError(abortSignal);
    }
    const code = (error as { code?: unknown } | null)?.code;
    return {
      ...base,
      status: 'failed',
      divergences: tape.divergences,
      turns,
      error: { ...(typeof code === 'string' && { code }), message: errorText(error) },
    };
  } finally {
    await runner?.close();
  }
  const first = tape.divergences[0];
  return {
    ...base,
    status: first !== undefined ? 'diverged' : 'same',
    ...(first !== undefined && { divergence: first }),
    divergences: tape.divergences,
    turns,
  };
}

type CassetteTurnPartial = NonNullable<CassetteTurn['partial']>;

/** A session stopped at partial turn `turn` (1-based), the turns before it replayed. */
function stoppedAt(
  base: { sessionKey: string; agentId: string },
  divergences: readonly Divergence[],
  turns: readonly ReplayedTurn[],
  turn: number,
  partial: CassetteTurnPartial,
): ReplayedSession {
  return { ...base, status: 'partial', divergences, turns, partial: { turn, reason: partial.reason } };
}

/** Dispatches one turn's signal at its recorded time; the summary the runner saved (or, when it saved nothing, the outcome's). */
async function replayTurn(
  runner: ReplayableRunner,
  store: CheckpointStore,
  cassette: Cassette,
  turn: CassetteTurn,
  index: number,
  tape: ReplayTape,
  abortSignal: AbortSignal | undefined,
): Promise<RunSummary> {
  tape.at(turn, index);
  const before = (await store.load(cassette.sessionKey))?.version ?? 0;
  const signal: Signal = { kind: turn.signal.kind, payload: structuredClone(turn.signal.payload) };
  const opts = abortSignal === undefined ? undefined : { abortSignal };
  const outcome = await untilAborted(
    isInbound(signal) && runner.handle !== undefined
      ? runner.handle(signal.payload as never, opts)
      : runner.dispatch(cassette.sessionKey, signal, { agentId: cassette.agentId, ...opts }),
    abortSignal,
  );
  throwIfAborted(abortSignal);
  // Today's bindings sent the message elsewhere: that is the divergence.
  if (outcome.agentId !== cassette.agentId || outcome.sessionKey !== cassette.sessionKey) {
    const path = outcome.agentId !== cassette.agentId ? 'agentId' : 'sessionKey';
    tape.divergences.push(
      divergence(index, 'summary', {
        path,
        expected: path === 'agentId' ? cassette.agentId : cassette.sessionKey,
        actual: path === 'agentId' ? outcome.agentId : outcome.sessionKey,
      }),
    );
    return outcomeSummary(outcome);
  }
  const saved = await store.load(cassette.sessionKey);
  if (saved !== undefined && saved.version > before) {
    const read = readSessionCheckpoint(saved.data);
    const summary = read.ok ? read.data.cause?.summary : undefined;
    if (summary !== undefined && typeof summary.status === 'string') return summary;
  }
  return outcomeSummary(outcome);
}

/** A user message recorded as an inbound message (`{ channel, text, … }`): replayed through `handle`. */
function isInbound(signal: Signal): boolean {
  const p = signal.payload as { channel?: unknown; text?: unknown } | null;
  return (
    signal.kind === 'user_message' &&
    typeof p === 'object' &&
    p !== null &&
    typeof p.channel === 'string' &&
    typeof p.text === 'string'
  );
}

/** The summary of an outcome whose signal saved nothing (unrouted, or failed before any save). */
function outcomeSummary(outcome: Outcome): RunSummary {
  const decided = outcome.decidedBy;
  return {
    status: outcome.status,
    ...(decided !== undefined && { route: { tier: decided.tier, name: decided.route.name ?? '' } }),
    ...(outcome.action !== undefined && { action: actionText(outcome.action) }),
    handoffs: [],
    toolCalls: [],
    approvals: [],
  };
}

/** An action as `RunSummary.action` writes it (as the Runner does). */
function actionText(action: Action): string {
  switch (action.type) {
    case 'transition':
      return `transition:${action.target}`;
    case 'reject':
      return `reject:${action.reason}`;
    case 'custom':
      return `custom:${action.name}`;
    default:
      return action.type;
  }
}
