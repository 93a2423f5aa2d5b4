import {
  describeValue,
  type ChatMessage,
  type ChatResponse,
  type Checkpoint,
  type CheckpointStore,
  type RunSummary,
  type SessionCause,
  type SessionCheckpointV1,
} from '@signalyard/core';
import {
  isAbortSignal,
  isoAt,
  readClock,
  readSessionCheckpoint,
  throwIfAborted,
  untilAborted,
} from '@signalyard/core/internal';
import type { Clock } from '@signalyard/core';
import type { Cassette, CassetteModelCall, CassetteToolResult, CassetteTurn, PartialReason } from './cassette.js';
import { inputInvalid } from './errors/replay-error.js';
import { redactDeep, type Redactor } from './redact-deep.js';

/** Options of {@link exportCassettes}. */
export interface ExportCassettesOptions {
  /** Only sessions whose key starts with it. */
  readonly prefix?: string;
  /** Only these sessions (exact keys). */
  readonly sessions?: readonly string[];
  /** Only turns applied at or after this time (a `Date` or an ISO-8601 string); earlier versions seed the replay. */
  readonly since?: Date | string;
  /** Stamps `recordedAt` (default `Date.now`). */
  readonly clock?: Clock;
  /**
   * Replaces strings before the cassettes are returned (every string: payloads, history in
   * `initial`, model responses, tool results, summaries). The runner's own `redact` covers
   * `cause.signal.payload` only; the history a store keeps holds what arrived.
   */
  readonly redact?: Redactor;
  /** Stops the export promptly (between sessions and versions, and while the store answers): it rejects with an `AbortedError` (`code` `ABORTED`). */
  readonly abortSignal?: AbortSignal;
}

interface Version {
  readonly checkpoint: Checkpoint;
  readonly data: SessionCheckpointV1;
}

/**
 * Builds cassettes from what a store kept (replay.md): each kept version saved by a signal is a
 * turn — its signal from `cause.signal` (kind, payload), its expected `RunSummary` from
 * `cause.summary`, its model responses from the assistant messages it added to the history (the
 * speaking agent from the message's `name`), its tool results from the tool messages it added.
 * A version before the first turn seeds the replay (`Cassette.initial`). A turn the store cannot
 * rebuild is `partial` with its reason, never invented: `payload_missing`, `pipeline_stage_calls`,
 * `parallel_members`, `before_kept_versions`, `history_trimmed`; a cassette ends at its first
 * partial turn, the first turn too (`replay` stops there and reports the session `partial`; to
 * replay a session whose oldest versions were pruned, pass `since` after its first kept version:
 * that version then seeds the replay as `initial` instead of being a turn). A fork, a
 * rewind or a version that cannot be decoded after the first turn ends the cassette too.
 * Sessions without a turn give no cassette.
 *
 * @throws ReplayError `REPLAY_INPUT_INVALID` for a store without `load`/`list` or bad options;
 * AbortedError `ABORTED` when `abortSignal` fires.
 * @example
 * ```ts
 * const cassettes = await exportCassettes(store, { prefix: 'agent:desk:', since: '2026-11-20T00:00:00Z' });
 * await saveCassettes('cassettes/', cassettes);
 * ```
 */
export async function exportCassettes(
  store: CheckpointStore,
  options: ExportCassettesOptions = {},
): Promise<Cassette[]> {
  const since = checkOptions(store, options);
  const { abortSignal } = options;
  throwIfAborted(abortSignal);
  const keys = options.sessions ?? (await untilAborted(listKeys(store, options.prefix, abortSignal), abortSignal));
  const recordedAt = isoAt(options.clock === undefined ? Date.now() : readClock(options.clock));
  const cassettes: Cassette[] = [];
  for (const key of keys) {
    throwIfAborted(abortSignal);
    const versions = await untilAborted(keptVersions(store, key, abortSignal), abortSignal);
    const cassette = cassetteOf(key, versions, since, recordedAt);
    if (cassette !== undefined) cassettes.push(redactDeep(cassette, options.redact));
  }
  return cassettes;
}

function checkOptions(store: CheckpointStore, options: ExportCassettesOptions): number | undefined {
  const s = store as Partial<CheckpointStore> | null;
  if (typeof s !== 'object' || s === null || typeof s.load !== 'function' || typeof s.list !== 'function')
    throw inputInvalid(`exportCassettes needs a CheckpointStore { load, list, history? }, got ${describeValue(store)}`);
  if (typeof options !== 'object' || (options as unknown) === null)
    throw inputInvalid(`exportCassettes options must be an object, got ${describeValue(options)}`);
  if (options.prefix !== undefined && typeof options.prefix !== 'string')
    throw inputInvalid(`exportCassettes prefix must be a string, got ${describeValue(options.prefix)}`);
  if (
    options.sessions !== undefined &&
    (!Array.isArray(options.sessions) || options.sessions.some((k) => typeof k !== 'string'))
  )
    throw inputInvalid(
      `exportCassettes sessions must be a list of session keys, got ${describeValue(options.sessions)}`,
    );
  if (options.redact !== undefined && typeof options.redact !== 'function')
    throw inputInvalid(
      `exportCassettes redact must be a function (value, path) => string, got ${describeValue(options.redact)}`,
    );
  if (options.abortSignal !== undefined && !isAbortSignal(options.abortSignal))
    throw inputInvalid(`exportCassettes abortSignal must be an AbortSignal, got ${describeValue(options.abortSignal)}`);
  if (options.since === undefined) return undefined;
  const at =
    options.since instanceof Date
      ? options.since.getTime()
      : typeof options.since === 'string'
        ? Date.parse(options.since)
        : Number.NaN;
  if (Number.isNaN(at))
    throw inputInvalid(`exportCassettes since must be a Date or an ISO-8601 time, got ${describeValue(options.since)}`);
  return at;
}

async function listKeys(
  store: CheckpointStore,
  prefix: string | undefined,
  abortSignal: AbortSignal | undefined,
): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of store.list(prefix)) {
    throwIfAborted(abortSignal);
    keys.push(key);
  }
  return keys.sort();
}

/** The key's kept versions, oldest first, decoded (an undecodable version: `undefined` in its place). */
async function keptVersions(
  store: CheckpointStore,
  key: string,
  abortSignal: AbortSignal | undefined,
): Promise<(Version | undefined)[]> {
  const checkpoints: Checkpoint[] = [];
  if (store.history === undefined) {
    const current = await store.load(key);
    if (current !== undefined) checkpoints.push(current);
  } else {
    for await (const c of store.history(key)) {
      throwIfAborted(abortSignal); // leaving the loop ends the store's iterator
      checkpoints.push(c);
    }
    checkpoints.reverse();
  }
  return checkpoints.map((checkpoint) => {
    const read = readSessionCheckpoint(checkpoint.data);
    return read.ok ? { checkpoint, data: read.data } : undefined;
  });
}

/** A commit: saved by a signal's turn before it ended (no status). */
const isCommit = (cause: SessionCause | undefined): boolean =>
  cause?.signal !== undefined && cause.status === undefined;
const isTurn = (
  cause: SessionCause | undefined,
): cause is SessionCause & { signal: NonNullable<SessionCause['signal']>; status: RunSummary['status'] } =>
  cause?.signal !== undefined && cause.status !== undefined;

function cassetteOf(
  key: string,
  versions: readonly (Version | undefined)[],
  since: number | undefined,
  recordedAt: string,
): Cassette | undefined {
  const turns: CassetteTurn[] = [];
  let initial: SessionCheckpointV1 | undefined;
  let base: Version | undefined; // the state the next turn starts from
  let replayable = false; // a complete turn has been exported
  let agentId: string | undefined;
  for (const v of versions) {
    if (v === undefined) {
      if (replayable) break;
      base = undefined;
      continue;
    }
    agentId = v.data.agentId;
    const cause = v.data.cause;
    if (isCommit(cause)) continue; // part of the turn whose final save follows
    const at = cause?.at === undefined ? Number.NaN : Date.parse(cause.at);
    if (!isTurn(cause) || (since !== undefined && !(at >= since))) {
      if (replayable) break; // a fork or rewind: the versions after it do not follow from the turns before
      base = v;
      initial = v.data;
      continue;
    }
    const turn = turnOf(v, base, cause);
    turns.push(turn);
    base = v;
    // A partial turn ends the cassette, the first one too: the replay stops there (replay.md).
    if (turn.partial !== undefined) break;
    replayable = true;
  }
  if (turns.length === 0 || agentId === undefined) return undefined;
  keepToolResults(turns);
  moveHeldCalls(turns);
  return {
    v: 1,
    sessionKey: key,
    agentId,
    recordedAt,
    source: 'store',
    turns,
    ...(initial !== undefined && { initial }),
  };
}

const EMPTY_SUMMARY = (status: RunSummary['status']): RunSummary => ({
  status,
  handoffs: [],
  toolCalls: [],
  approvals: [],
});

/** One version saved by a signal, as a turn (partial when it cannot be rebuilt). */
function turnOf(
  v: Version,
  base: Version | undefined,
  cause: SessionCause & { signal: NonNullable<SessionCause['signal']>; status: RunSummary['status'] },
): CassetteTurn {
  const signal = cause.signal;
  const summary = isSummary(cause.summary) ? cause.summary : undefined;
  const head = {
    signal: { kind: signal.kind, payload: signal.payload ?? null },
    expected: summary ?? EMPTY_SUMMARY(cause.status),
    at: cause.at,
    version: v.checkpoint.version,
  };
  const partial = (reason: PartialReason): CassetteTurn => ({
    ...head,
    modelCalls: [],
    toolResults: [],
    partial: { reason },
  });
  if (base === undefined && v.checkpoint.version > 1) return partial('before_kept_versions');
  if (summary === undefined || signal.payload === undefined || (cause.merged ?? 0) > 1)
    return partial('payload_missing');
  if (cause.partial !== undefined) return partial(cause.partial);
  const added = addedMessages(
    base?.data.history ?? [],
    v.data.history,
    signal.kind === 'user_message' ? signal.text : undefined,
  );
  if (added === undefined) return partial('history_trimmed');
  return { ...head, ...callsOf(added, base?.data.history ?? []) };
}

function isSummary(value: unknown): value is RunSummary {
  return typeof value === 'object' && value !== null && typeof (value as { status?: unknown }).status === 'string';
}

const same = (a: ChatMessage | undefined, b: ChatMessage | undefined): boolean =>
  a !== undefined && b !== undefined && JSON.stringify(a) === JSON.stringify(b);

/**
 * The messages a turn added after `before` (its user message left out): `after` is `before`
 * (trimmed from the front by `maxHistoryMessages`) followed by them. `undefined` when the trim cut
 * into the turn's own messages, so they cannot be told apart.
 */
function addedMessages(
  before: readonly ChatMessage[],
  after: readonly ChatMessage[],
  userText: string | undefined,
): readonly ChatMessage[] | undefined {
  const own = (m: ChatMessage | undefined): boolean => m?.role === 'user' && m.content.startsWith(userText ?? '');
  // The longest tail of `before` that `after` starts with (all of it, unless trimmed).
  for (let j = Math.min(before.length, after.length); j > 0; j--) {
    let match = true;
    for (let i = 0; i < j && match; i++) match = same(after[i], before[before.length - j + i]);
    if (!match) continue;
    const rest = after.slice(j);
    if (userText === undefined) return rest;
    return own(rest[0]) ? rest.slice(1) : undefined;
  }
  // Nothing of `before` is left: the turn's messages are whole only if they start with its user message.
  if (before.length === 0 && userText === undefined) return after;
  return userText !== undefined && own(after[0]) ? after.slice(1) : undefined;
}

/**
 * Keeps the tool results of the tools the session's models called (every turn's
 * `toolCalls`): transfer calls are handoffs, not tools, and their answers are no results to
 * replay. (A call held for approval is answered in the turn that resumed it, whose own summary
 * lists no call: hence the whole session's.)
 */
function keepToolResults(turns: CassetteTurn[]): void {
  const tools = new Set(turns.flatMap((t) => t.expected.toolCalls.map((c) => c.name)));
  for (const [i, t] of turns.entries()) {
    if (t.toolResults.some((r) => !tools.has(r.name)))
      turns[i] = { ...t, toolResults: t.toolResults.filter((r) => tools.has(r.name)) };
  }
}

/**
 * A model call whose tool calls were held for approval is saved with the turn that resumed them,
 * though the turn that held them made it: moved back to that turn (the one whose summary lists
 * those calls and whose own model calls do not hold them).
 */
function moveHeldCalls(turns: CassetteTurn[]): void {
  const key = (calls: readonly { name: string; arguments: unknown }[] | undefined): string =>
    JSON.stringify((calls ?? []).map((c) => [c.name, c.arguments]));
  for (let i = 0; i + 1 < turns.length; i++) {
    const t = turns[i] as CassetteTurn;
    const next = turns[i + 1] as CassetteTurn;
    if (t.partial !== undefined || next.partial !== undefined || t.expected.status !== 'paused') continue;
    const made = new Set(t.modelCalls.map((m) => key(m.response.toolCalls)));
    const byAgent = new Map<string | undefined, { name: string; arguments: unknown }[]>();
    for (const c of t.expected.toolCalls) byAgent.set(c.agentId, [...(byAgent.get(c.agentId) ?? []), c]);
    const at = next.modelCalls.findIndex((m) => {
      const wanted = byAgent.get(m.agentId);
      return (
        m.response.toolCalls !== undefined &&
        wanted !== undefined &&
        !made.has(key(m.response.toolCalls)) &&
        key(wanted).includes(key(m.response.toolCalls).slice(1, -1))
      );
    });
    if (at < 0) continue;
    const moved = next.modelCalls[at] as CassetteModelCall;
    turns[i] = { ...t, modelCalls: [...t.modelCalls, moved] };
    turns[i + 1] = { ...next, modelCalls: next.modelCalls.filter((_, k) => k !== at) };
  }
}

/** The model calls (assistant messages) and tool results (tool messages answering tool calls) of a turn. */
function callsOf(
  added: readonly ChatMessage[],
  before: readonly ChatMessage[],
): { modelCalls: CassetteModelCall[]; toolResults: CassetteToolResult[] } {
  const calls = new Map<string, { name: string; arguments: unknown }>();
  for (const m of [...before, ...added]) for (const c of m.toolCalls ?? []) calls.set(c.id, c);
  const modelCalls: CassetteModelCall[] = [];
  const toolResults: CassetteToolResult[] = [];
  for (const m of added) {
    if (m.role === 'assistant') {
      const response: ChatResponse =
        m.toolCalls === undefined || m.toolCalls.length === 0
          ? { content: m.content }
          : { content: m.content, toolCalls: m.toolCalls };
      modelCalls.push(m.name === undefined ? { response } : { agentId: m.name, response });
    } else if (m.role === 'tool' && m.toolCallId !== undefined) {
      const call = calls.get(m.toolCallId);
      if (call !== undefined) toolResults.push({ name: call.name, arguments: call.arguments, result: m.content });
    }
  }
  return { modelCalls, toolResults };
}
